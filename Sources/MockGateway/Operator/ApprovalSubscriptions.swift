import GatewayProtocol

/// Which operator connections receive `session.approval` for which session keys, and the
/// `approvalReplay` a subscription answers with (docs/protocol.md §7.3).
///
/// Sources (read for facts): the opt-in is `sessions.messages.subscribe {key, agentId?,
/// includeApprovals:true}`; it is per call and not sticky, and it needs `operator.admin`, or
/// `operator.approvals` on a paired device; a session subscription alone never grants approval
/// visibility (`docs/gateway/protocol.md` "Approval families" and `docs/refactor/operator-approvals.md`
/// of the `openclaw/docs` mirror @c0a8fa9a). The reply adds `approvalReplay {sessionKey,
/// updatedAtMs, approvals:[pending snapshots…], truncated}` of at most 1,000 pending approvals:
/// `truncated:false` means "replace your local pending set", `truncated:true` "keep unseen
/// local entries until a canonical read" (the design note; docs/protocol.md §7.3).
///
/// Unconfirmed, so chosen to be tolerant: the rest of the reply (this Gateway answers
/// `{subscribed:true, key, includeApprovals}` plus the replay), what an unauthorised
/// `includeApprovals:true` gets (here: a plain subscription, `includeApprovals:false`, no replay,
/// rather than an error), and descendant sessions (only the exact key is matched here).
struct ApprovalSubscriptions: Sendable {
    /// The replay's size limit.
    static let defaultReplayLimit = 1_000

    private(set) var keysByConnection: [String: Set<String>] = [:]
    /// At most this many approvals in one replay (a fault can lower it to provoke `truncated`).
    var replayLimit = Self.defaultReplayLimit

    /// Whether a session with `scopes` and `deviceId` may receive approval events and replays.
    static func mayReceiveApprovals(scopes: [String], deviceId: String?) -> Bool {
        scopes.contains("operator.admin") || (scopes.contains("operator.approvals") && deviceId != nil)
    }

    /// Applies one subscribe call: with approvals the key is added, without it removed (the
    /// opt-in is per call).
    mutating func subscribe(connectionId: String, key: String, includeApprovals: Bool) {
        var keys = keysByConnection[connectionId] ?? []
        if includeApprovals { keys.insert(key) } else { keys.remove(key) }
        keysByConnection[connectionId] = keys.isEmpty ? nil : keys
    }

    /// Ends approval delivery for `key` on a connection.
    mutating func unsubscribe(connectionId: String, key: String) {
        subscribe(connectionId: connectionId, key: key, includeApprovals: false)
    }

    /// Forgets a closed connection.
    mutating func drop(connectionId: String) { keysByConnection[connectionId] = nil }

    /// Whether the connection receives `session.approval` for `key`.
    func isSubscribed(connectionId: String, key: String) -> Bool {
        keysByConnection[connectionId]?.contains(key) ?? false
    }

    /// The `approvalReplay` for `key`: the pending approvals bound to that session that `caller`
    /// may see, oldest first, cut at `limit`.
    static func replay(sessionKey: String, records: [ApprovalRecord], caller: OperatorCaller, nowMs: Int64,
                       limit: Int, basePath: String) -> JSONValue {
        let pending = records.filter { $0.status == .pending && $0.sourceSessionKey == sessionKey && $0.isVisible(to: caller) }
        let shown = pending.prefix(max(0, limit))
        return [
            "sessionKey": .string(sessionKey), "updatedAtMs": .int(nowMs),
            "approvals": .array(shown.map { $0.snapshot(basePath: basePath) }), "truncated": .bool(pending.count > shown.count),
        ]
    }
}
