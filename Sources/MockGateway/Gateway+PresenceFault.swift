import Synchronization

// MARK: - Presence beacon faults

extension Gateway {
    /// Makes the Gateway answer the next `node.presence.alive` beacon with `handled`/`reason`
    /// instead of running the server algorithm of gateway-protocol.md §7.6, and record nothing.
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
        PresenceFaults.arm(reply, for: self)
        noteFault("answer the next node.presence.alive with handled:\(reply.handled) reason:\(reply.reason)")
    }

    /// Takes the armed presence reply, if any: it applies to one beacon only.
    func takeForcedPresenceReply() -> PresenceForcedReply? {
        PresenceFaults.take(for: self)
    }
}

/// The armed presence replies, per Gateway core. They live outside the core's stored state
/// (kept in this file so the fault stays self-contained); a weak reference ties each entry to
/// its core, so an entry can never apply to another core that reuses the address.
private enum PresenceFaults {
    private struct Entry: Sendable {
        weak var core: GatewayCore?
        var reply: PresenceForcedReply
    }

    private static let armed = Mutex<[ObjectIdentifier: Entry]>([:])

    static func arm(_ reply: PresenceForcedReply, for core: GatewayCore) {
        armed.withLock { entries in
            entries = entries.filter { $0.value.core != nil }
            entries[ObjectIdentifier(core)] = Entry(core: core, reply: reply)
        }
    }

    static func take(for core: GatewayCore) -> PresenceForcedReply? {
        armed.withLock { entries in
            let key = ObjectIdentifier(core)
            guard let entry = entries[key] else { return nil }
            entries.removeValue(forKey: key)
            return entry.core === core ? entry.reply : nil
        }
    }
}
