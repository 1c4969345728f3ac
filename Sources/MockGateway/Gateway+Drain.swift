// MARK: - Restart, suspension and closing drains

extension Gateway {
    /// Starts a drain: until ``endDrain()`` every request of an authenticated session is refused
    /// with a retryable `UNAVAILABLE` carrying `details.reason` (`gateway-restarting`,
    /// `gateway-suspending`, `gateway-closing`) and `retryAfterMs` 1000, except continuations of
    /// work admitted earlier (results of pending invokes, resolves and reads of pending approvals
    /// and questions). Sessions stay open and new sockets still connect. Starting another drain
    /// replaces the current one. See ``GatewayDrain``.
    public func beginDrain(_ drain: GatewayDrain) async {
        await core.setDrain(drain)
    }

    /// Ends the drain, if any: requests are served again.
    public func endDrain() async {
        await core.setDrain(nil)
    }

    /// The drain in force, if any.
    public func currentDrain() async -> GatewayDrain? {
        await core.faultLayer.drain
    }
}

extension GatewayCore {
    func setDrain(_ drain: GatewayDrain?) {
        arm(.drain(drain))
    }
}

// MARK: - Pending foreground actions

extension Gateway {
    /// The foreground actions queued for `nodeId` and not yet acknowledged (expired ones are
    /// left out), oldest first. See `node.pending.pull`.
    public func pendingActions(nodeId: String) async -> [PendingNodeAction] {
        await core.livePendingActions(nodeId: nodeId)
    }
}

extension GatewayCore {
    func livePendingActions(nodeId: String) -> [PendingNodeAction] {
        nodeState.pendingActions.live(nodeId: nodeId, nowMs: nowMs)
    }
}

// MARK: - Approval replays

extension Gateway {
    /// Caps the `approvalReplay` of `sessions.messages.subscribe` at `limit` approvals (1,000
    /// by default, as upstream), so that a scenario can produce `truncated:true` with a few.
    public func setApprovalReplayLimit(_ limit: Int) async {
        await core.setApprovalReplayLimit(limit)
    }

    /// Creates an approval from a full draft (kind, session key, decisions), as an agent would.
    /// - Throws: `GatewayError` when the profile cannot hold it.
    public func createApproval(_ draft: ApprovalDraft) async throws(GatewayError) -> ApprovalRecord {
        recordOperatorAction("create approval")
        return try await core.scriptCreateApproval(draft)
    }
}

extension GatewayCore {
    func setApprovalReplayLimit(_ limit: Int) {
        operatorSurface.approvalSubscriptions.replayLimit = max(0, limit)
        noteFault("approval replays hold at most \(max(0, limit)) approvals")
    }
}

// MARK: - Push deliveries

extension Gateway {
    /// Every push handed to a node's transport so far (`push.test`, `wakeNode`), oldest first: relay sends
    /// with their signature headers, direct sends with their token.
    public func pushDeliveries() async -> [PushDelivery] {
        await core.nodeState.push.deliveries
    }
}
