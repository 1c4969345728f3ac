import Foundation
import GatewayProtocol

// Surface approval (docs/protocol.md §6.7): the glue between the connect path, the
// `node.pair.*` methods and the pure `NodeSurfaceApprovals`.

extension NodeSurfaceApprovals.PendingRequest {
    /// The `node.pair.requested` payload and a `node.pair.list` `pending[]` entry.
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "requestId": .string(requestId), "nodeId": .string(nodeId),
            "commands": .array(commands.map(JSONValue.string)), "caps": .array(metadata.caps.map(JSONValue.string)),
            "isRepair": .bool(isRepair), "ts": .int(ts),
        ]
        if let value = metadata.displayName { object["displayName"] = .string(value) }
        if let value = metadata.platform { object["platform"] = .string(value) }
        if let value = metadata.version { object["version"] = .string(value) }
        if let value = metadata.deviceFamily { object["deviceFamily"] = .string(value) }
        if let value = metadata.modelIdentifier { object["modelIdentifier"] = .string(value) }
        if let value = metadata.remoteIp { object["remoteIp"] = .string(value) }
        return .object(object)
    }
}

extension NodeSurfaceApprovals.PairedNode {
    /// A `node.pair.list` `paired[]` entry and `node.pair.approve`'s `node` (the fake issues no
    /// node token: the device token is the node's credential).
    var json: JSONValue {
        ["nodeId": .string(nodeId), "commands": .array(commands.map(JSONValue.string)),
         "createdAtMs": .int(createdAtMs), "approvedAtMs": .int(approvedAtMs)]
    }
}

extension GatewayCore {
    /// Reconciles a connecting node's declared surface with its approved one and returns the
    /// commands to register, as upstream's connect handler registers `effectiveCommands`
    /// (`connectParams.commands = reconciliation.effectiveCommands`): the declared ones cut to
    /// the node's allowlist, or only the approved ∩ allowlisted ones while a wider surface waits;
    /// announces a new request with `node.pair.requested`. `node.list` and `node.describe` show
    /// these commands.
    func reconcileNodeSurface(nodeId: String, params: ConnectParams, remoteIp: String) -> [String] {
        let declared = params.commands ?? []
        let probe = NodeCommandPolicy.Node(nodeId: nodeId, platform: params.client.platform, deviceFamily: params.client.deviceFamily,
                                           caps: params.caps ?? [], declaredCommands: declared)
        let metadata = NodeSurfaceApprovals.Metadata(
            displayName: params.client.displayName, platform: params.client.platform, version: params.client.version,
            deviceFamily: params.client.deviceFamily, modelIdentifier: params.client.modelIdentifier, caps: params.caps ?? [],
            remoteIp: remoteIp)
        var surfaces = nodeSurfaceApprovals
        var ids = random
        // Upstream's per-node reapproval limit (node-reapproval-coordinator.ts): every request
        // written (opened, or refreshed with new metadata) counts as a failure of
        // `node:<nodeId>` in the `node-reapproval` scope; keeping a waiting one as it is is free.
        var limiter = authRateLimiter
        let limitKey = "node:\(nodeId)"
        let now = nowMs
        let result = surfaces.reconcile(nodeId: nodeId, declared: declared, allowlist: nodeCommandPolicy.allowlist(for: probe),
                                        metadata: metadata, nowMs: now,
                                        mayWriteRequest: { limiter.check(limitKey, scope: .nodeReapproval, nowMs: now).allowed },
                                        newRequestId: { ids.uuidString() })
        if result.wroteRequest { limiter.recordFailure(limitKey, scope: .nodeReapproval, nowMs: now) }
        authRateLimiter = limiter
        random = ids
        nodeSurfaceApprovals = surfaces
        // Superseded or cleared requests are announced first, then the request that replaces them.
        for dropped in result.superseded {
            broadcastNodePairResolved(requestId: dropped.requestId, nodeId: dropped.nodeId, decision: "rejected")
        }
        if result.created, let request = result.pending {
            broadcast(event: GatewayEventName.nodePairRequested.rawValue, payload: request.json)
        }
        return result.effective
    }

    /// `node.pair.list`: `{pending, paired}`, newest first.
    func nodePairList(_ call: MethodCall) {
        handleNodes(.surfaceList(call.replyAddress, nowMs: nowMs))
    }

    /// `node.pair.approve {requestId}` (``NodeState/Input/surfaceApprove(requestId:callerScopes:_:nowMs:)``).
    func nodePairApprove(_ call: MethodCall) {
        guard let requestId = call.string("requestId") else { return invalid(call, "requestId required") }
        handleNodes(.surfaceApprove(requestId: requestId, callerScopes: call.session.scopes, call.replyAddress, nowMs: nowMs))
    }

    /// `node.pair.reject {requestId}`: the request is dropped, the approved surface stays.
    func nodePairReject(_ call: MethodCall) {
        guard let requestId = call.string("requestId") else { return invalid(call, "requestId required") }
        handleNodes(.surfaceReject(requestId: requestId, call.replyAddress, nowMs: nowMs))
    }

    func broadcastNodePairResolved(requestId: String, nodeId: String, decision: String) {
        perform([NodeState.surfaceResolved(requestId: requestId, nodeId: nodeId, decision: decision, nowMs: nowMs)])
    }
}

extension Gateway {
    /// The node pairing requests waiting for approval (widened command surfaces), newest first.
    public func pendingNodeSurfaceRequests() async -> [NodeSurfaceApprovals.PendingRequest] {
        await core.pendingNodeSurfaceRequests()
    }

    /// Approves the node pairing request `requestId` as an administrator (`node.pair.resolved`
    /// follows); `nil` when no such request is pending.
    public func approveNodeSurface(requestId: String) async -> NodeSurfaceApprovals.PairedNode? {
        let node = await core.approveNodeSurface(requestId: requestId)
        if let node { recordOperatorAction("node pairing approved: \(node.nodeId) [\(node.commands.joined(separator: ", "))]") }
        return node
    }
}

extension Gateway {
    /// Scripting: sets the approved command surface of `nodeId` to `commands` (docs/protocol.md
    /// §6.7), as if an operator had approved only these. It takes effect at the node's next
    /// connect: a node that then declares more is admitted with the approved ∩ allowlisted
    /// commands in effect and its widening waits in a node pairing request, so a scenario can
    /// make a client's ordinary declaration a widened one. The connected session keeps its
    /// commands until then.
    @discardableResult
    public func setApprovedNodeCommands(nodeId: String, commands: [String]) async -> NodeSurfaceApprovals.PairedNode {
        recordOperatorAction("approved node surface of \(nodeId) set to [\(commands.joined(separator: ", "))]")
        return await core.setApprovedNodeCommands(nodeId: nodeId, commands: commands)
    }

    /// Rejects the node pairing request `requestId` (`node.pair.resolved` `rejected` follows; the
    /// approved surface stays); `nil` when no such request is pending.
    public func rejectNodeSurface(requestId: String) async -> NodeSurfaceApprovals.PendingRequest? {
        let request = await core.rejectNodeSurface(requestId: requestId)
        if let request { recordOperatorAction("node pairing rejected: \(request.nodeId) [\(request.commands.joined(separator: ", "))]") }
        return request
    }
}

extension GatewayCore {
    func setApprovedNodeCommands(nodeId: String, commands: [String]) -> NodeSurfaceApprovals.PairedNode {
        nodeSurfaceApprovals.setApproved(nodeId: nodeId, commands: commands, nowMs: nowMs)
    }

    func rejectNodeSurface(requestId: String) -> NodeSurfaceApprovals.PendingRequest? {
        guard let (request, effects) = nodeState.rejectSurface(requestId, nowMs: nowMs) else { return nil }
        perform(effects)
        return request
    }

    func pendingNodeSurfaceRequests() -> [NodeSurfaceApprovals.PendingRequest] {
        nodeSurfaceApprovals.pendingRequests(nowMs: nowMs)
    }

    func approveNodeSurface(requestId: String) -> NodeSurfaceApprovals.PairedNode? {
        guard let (node, effects) = nodeState.approveSurface(requestId, nowMs: nowMs) else { return nil }
        perform(effects)
        return node
    }
}
