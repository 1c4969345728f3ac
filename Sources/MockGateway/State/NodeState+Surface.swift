import GatewayProtocol

/// What a connecting node says about its command surface (its `connect` params and address).
struct SurfaceDeclaration: Sendable, Hashable {
    /// The node id.
    var nodeId: String
    /// `connect.commands` as sent.
    var declared: [String]
    /// `client.platform`, which the command policy's allowlist depends on.
    var platform: String?
    /// `client.deviceFamily`, likewise.
    var deviceFamily: String?
    /// What a node pairing request shows about the node (caps and address included).
    var metadata: NodeSurfaceApprovals.Metadata

    /// The declaration of a connect with `params` from `remoteIp`.
    init(nodeId: String, params: ConnectParams, remoteIp: String) {
        self.nodeId = nodeId
        declared = params.commands ?? []
        platform = params.client.platform
        deviceFamily = params.client.deviceFamily
        metadata = NodeSurfaceApprovals.Metadata(
            displayName: params.client.displayName, platform: params.client.platform, version: params.client.version,
            deviceFamily: params.client.deviceFamily, modelIdentifier: params.client.modelIdentifier, caps: params.caps ?? [],
            remoteIp: remoteIp)
    }

    /// A declaration with these members.
    init(nodeId: String, declared: [String], platform: String?, deviceFamily: String?, metadata: NodeSurfaceApprovals.Metadata) {
        self.nodeId = nodeId
        self.declared = declared
        self.platform = platform
        self.deviceFamily = deviceFamily
        self.metadata = metadata
    }
}

/// Command-surface reconciliation at connect (docs/protocol.md §6.7) in the node machine.
extension NodeState {
    /// Reconciles a connecting node's declared surface with its approved one, as upstream's
    /// connect handler registers `effectiveCommands`: the declared commands cut to the policy's
    /// allowlist for the node (allowlist ∩ declared), or only the approved ∩ allowlisted ones
    /// while a wider surface waits in a node pairing request. A request written (opened, or
    /// refreshed with new metadata) counts against the node's reapproval limit in `limiter`
    /// (upstream's `node-reapproval` scope, key `node:<nodeId>`: node-reapproval-coordinator.ts);
    /// keeping a waiting request as it is costs nothing. New request ids come from `ids`.
    /// - Returns: the commands to register for the node, and the announcements: each superseded
    ///   or cleared request `node.pair.resolved` `rejected`, then a new one `node.pair.requested`.
    mutating func reconcileSurface(_ declaration: SurfaceDeclaration, limiter: inout AuthRateLimiter, nowMs: Int64,
                                   ids: inout SeededRandom) -> (effective: [String], effects: [GatewayEffect]) {
        let nodeId = declaration.nodeId
        let probe = NodeCommandPolicy.Node(nodeId: nodeId, platform: declaration.platform, deviceFamily: declaration.deviceFamily,
                                           caps: declaration.metadata.caps, declaredCommands: declaration.declared)
        var written = limiter
        var draws = ids
        let limitKey = "node:\(nodeId)"
        let result = surfaces.reconcile(nodeId: nodeId, declared: declaration.declared, allowlist: commandPolicy.allowlist(for: probe),
                                        metadata: declaration.metadata, nowMs: nowMs,
                                        mayWriteRequest: { written.check(limitKey, scope: .nodeReapproval, nowMs: nowMs).allowed },
                                        newRequestId: { draws.uuidString() })
        if result.wroteRequest { written.recordFailure(limitKey, scope: .nodeReapproval, nowMs: nowMs) }
        limiter = written
        ids = draws
        var effects = result.superseded.map {
            Self.surfaceResolved(requestId: $0.requestId, nodeId: $0.nodeId, decision: "rejected", nowMs: nowMs)
        }
        if result.created, let request = result.pending {
            effects.append(.broadcast(event: GatewayEventName.nodePairRequested.rawValue, payload: request.json, stateVersion: nil))
        }
        return (result.effective, effects)
    }
}
