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
    /// Reconciles a connecting node's declared surface with its approved one
    /// (``NodeState/reconcileSurface(_:limiter:nowMs:ids:)``: allowlist ∩ declared, or the
    /// approved ∩ allowlisted commands while a widened surface waits in a node pairing request),
    /// runs its announcements and returns the commands to register. `node.list` and
    /// `node.describe` show these commands.
    func reconcileNodeSurface(nodeId: String, params: ConnectParams, remoteIp: String) -> [String] {
        let (effective, effects) = nodeState.reconcileSurface(SurfaceDeclaration(nodeId: nodeId, params: params, remoteIp: remoteIp),
                                                              limiter: &access.authRateLimiter, nowMs: nowMs, ids: &random)
        perform(effects)
        return effective
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
        nodeState.surfaces.setApproved(nodeId: nodeId, commands: commands, nowMs: nowMs)
    }

    func rejectNodeSurface(requestId: String) -> NodeSurfaceApprovals.PendingRequest? {
        guard let (request, effects) = nodeState.rejectSurface(requestId, nowMs: nowMs) else { return nil }
        perform(effects)
        return request
    }

    func pendingNodeSurfaceRequests() -> [NodeSurfaceApprovals.PendingRequest] {
        nodeState.surfaces.pendingRequests(nowMs: nowMs)
    }

    func approveNodeSurface(requestId: String) -> NodeSurfaceApprovals.PairedNode? {
        guard let (node, effects) = nodeState.approveSurface(requestId, nowMs: nowMs) else { return nil }
        perform(effects)
        return node
    }
}
