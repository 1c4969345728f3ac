// MARK: - Presence beacon faults

extension Gateway {
    /// Makes the Gateway answer the next `node.presence.alive` beacon with `handled`/`reason`
    /// instead of running the server algorithm of docs/protocol.md §6.6, and record nothing.
    ///
    /// This is how a scenario gets the replies a healthy Gateway gives only in rare situations:
    /// `handled:false` with `persist_failed` (a store error) or `pairing_changed` (the pairing
    /// changed while the beacon was in flight), or `handled:true` with `throttled`. On a profile
    /// with bare `{ok:true}` replies the wire reply stays bare. Arming again replaces an armed
    /// reply that was not used yet.
    /// - Parameters:
    ///   - handled: the `handled` flag of the reply.
    ///   - reason: the `reason` of the reply.
    public func forceNextPresenceReply(handled: Bool, reason: String) async {
        await core.armPresenceReply(PresenceForcedReply(handled: handled, reason: reason))
    }
}

/// A presence reply armed by `Gateway.forceNextPresenceReply(handled:reason:)`.
struct PresenceForcedReply: Sendable, Hashable {
    var handled: Bool
    var reason: String
}

extension GatewayCore {
    func armPresenceReply(_ reply: PresenceForcedReply) {
        arm(.presenceReply(reply))
    }
}
