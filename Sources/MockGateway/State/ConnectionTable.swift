import GatewayProtocol

/// The sockets the Gateway tracks, and whether it takes new ones: the connection surface's
/// state. (Starting up, a fault, is the fault layer's.)
struct ConnectionTable: Sendable {
    /// Every open socket by connection id.
    var byId: [String: ConnectionState] = [:]
    /// `false` while restarting: new sockets are dropped as a closed port would refuse them.
    var accepting = true
    /// When the next `tick` is due (ticks go to the sessions of these sockets).
    var ticks: TickSchedule

    /// Whether any connection holds a session (ticks run only then).
    var hasSessions: Bool { byId.values.contains { $0.session != nil } }

    /// The handshake deadlines still running: connections without a session that are not closing.
    var handshakeDeadlines: [Int64] {
        byId.values.compactMap { $0.session == nil && !$0.closing ? $0.handshakeDeadlineMs : nil }
    }

    /// The closes of connections whose handshake time ran out at `nowMs`, in connection order.
    /// Protocol-3-era servers closed with 1000 and no reason; the newest close code is
    /// unconfirmed (docs/protocol.md §10.5). 1000 is what clients already handle.
    func expiredHandshakes(nowMs: Int64) -> [GatewayEffect] {
        byId.sorted { $0.key < $1.key }.compactMap { connectionId, state in
            guard state.session == nil, !state.closing, let deadline = state.handshakeDeadlineMs, deadline <= nowMs else { return nil }
            return .close(connectionId, code: 1000, reason: "")
        }
    }
}
