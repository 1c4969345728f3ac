import GatewayProtocol
@testable import MockGateway
import Testing
import WebSocketTransport

/// The connection table as a state machine (``ConnectionTable/handle(_:)``): a socket accepted,
/// a session established, invalid frames, the clock, a restart and a changed shared secret in,
/// Gateway effects out, on the clock the inputs carry. (Breaks tried: restarting the tick
/// schedule on every established session, not only the first, fails
/// `theFirstSessionStartsTheTicksAndEndsTheHandshakeDeadline`; comparing the shared-secret
/// generation with `==` fails `aNewSharedSecretClosesOnlyTheSessionsOfAnOlderGeneration`.)
@Suite struct ConnectionMachineTests {
    static let t0: Int64 = 1_000_000
    static let handshakeMs = 10_000
    static let tickMs = 30_000

    static func table() -> ConnectionTable {
        ConnectionTable(ticks: TickSchedule(intervalMs: tickMs, nowMs: t0), handshakeTimeoutMs: handshakeMs)
    }

    /// A tracked socket (an in-memory one: the table never touches it).
    static func socket(_ id: String, nonce: String = "n") -> ConnectionState {
        let (_, server) = InMemoryWebSocket.pair()
        let (_, outbox) = AsyncStream<OutboundItem>.makeStream()
        return ConnectionState(id: id, socket: server, outbox: outbox, remoteAddress: server.remoteAddress, isLoopback: true,
                               nonce: nonce)
    }

    static func session(generation: Int? = nil) -> Session {
        Session(role: GatewayRole.operator.rawValue, scopes: [], deviceId: nil, publicKey: nil, nodeId: nil,
                client: ClientInfo(id: "cli", version: "1", platform: "macOS", mode: "node"), protocolVersion: 3,
                authMethod: "token", deviceToken: nil, sharedAuthGeneration: generation)
    }

    /// Opens `ids` at `t0`.
    static func opened(_ ids: String...) -> ConnectionTable {
        var table = table()
        for id in ids { _ = table.handle(.opened(socket(id), challengeTs: 5, nowMs: t0)) }
        return table
    }

    @Test func anAcceptedSocketIsLoggedAndChallengedAndClosedWhenItsHandshakeTimeRunsOut() {
        var table = Self.table()
        let effects = table.handle(.opened(Self.socket("c1", nonce: "abc"), challengeTs: 42, nowMs: Self.t0))
        #expect(effects == [
            .log(.connectionOpened(connectionId: "c1", remoteAddress: "127.0.0.1", nonce: "abc")),
            .send(.event(ConnectChallenge(nonce: "abc", ts: 42).eventFrame), to: "c1"),
        ])
        let deadline = Self.t0 + Int64(Self.handshakeMs)
        // No session yet: no tick is due, only the handshake deadline.
        #expect(table.nextDeadlineMs(after: nil, ticking: true) == deadline)
        #expect(table.nextDeadlineMs(after: deadline, ticking: true) == nil)
        #expect(table.handle(.clock(nowMs: deadline - 1)).isEmpty)
        #expect(table.handle(.clock(nowMs: deadline)) == [.close("c1", code: 1000, reason: "")])
        // A connection already closing has no deadline any more.
        #expect(table.beginClosing("c1") != nil)
        #expect(table.beginClosing("c1") == nil)
        #expect(table.nextDeadlineMs(after: nil, ticking: true) == nil)
        #expect(table.handle(.clock(nowMs: deadline + 1)).isEmpty)
        #expect(table.isOpen("c1") == false)
        _ = table.handle(.closed("c1"))
        #expect(table.byId.isEmpty)
    }

    @Test func theFirstSessionStartsTheTicksAndEndsTheHandshakeDeadline() {
        var table = Self.opened("c1", "c2")
        let first = Self.t0 + 2_000
        #expect(table.handle(.established("c1", Self.session(), nowMs: first)).isEmpty)
        #expect(table.ticks.nextTickMs == first + Int64(Self.tickMs))
        #expect(table.byId["c1"]?.handshakeDeadlineMs == nil)
        // A second session leaves the schedule alone.
        _ = table.handle(.established("c2", Self.session(), nowMs: first + 5_000))
        #expect(table.ticks.nextTickMs == first + Int64(Self.tickMs))
        #expect(table.nextDeadlineMs(after: nil, ticking: true) == first + Int64(Self.tickMs))
        // Ticks held by a fault: nothing is due.
        #expect(table.nextDeadlineMs(after: nil, ticking: false) == nil)
        let tickAt = first + Int64(Self.tickMs)
        #expect(table.handle(.clock(nowMs: tickAt)) == [.broadcast(event: GatewayEventName.tick.rawValue, payload: ["ts": .int(tickAt)],
                                                                    stateVersion: nil)])
        // `seq` counts per session.
        #expect(table.nextSeq("c1") == 1)
        #expect(table.nextSeq("c1") == 2)
        #expect(table.nextSeq("c2") == 1)
        #expect(table.nextSeq("gone") == nil)
    }

    @Test func anInvalidFrameIsCountedAndNotedAndTheConnectionStays() {
        var table = Self.opened("c1")
        #expect(table.handle(.invalidFrame("c1", why: "not valid JSON")) == [.note("invalid frame answered: not valid JSON", on: "c1")])
        _ = table.handle(.invalidFrame("c1", why: "empty message"))
        #expect(table.byId["c1"]?.invalidFrames == 2)
        #expect(table.isOpen("c1"))
        #expect(table.handle(.invalidFrame("gone", why: "x")).isEmpty)
    }

    @Test func aRestartRefusesNewSocketsAndClosesEveryOneAfterShutdown() throws {
        var table = Self.opened("c2", "c1")
        _ = table.handle(.established("c1", Self.session(), nowMs: Self.t0))
        let effects = table.handle(.restarting(restartExpectedMs: 1_500))
        #expect(table.accepting == false)
        let payload = try JSONValue(encoding: ShutdownEvent(restartExpectedMs: 1_500))
        #expect(effects == [
            .broadcast(event: GatewayEventName.shutdown.rawValue, payload: payload, stateVersion: nil),
            .close("c1", code: 1012, reason: "service restart"),
            .close("c2", code: 1012, reason: "service restart"),
        ])
        #expect(table.handle(.accepting(true)).isEmpty)
        #expect(table.accepting)
    }

    @Test func aNewSharedSecretClosesOnlyTheSessionsOfAnOlderGeneration() {
        var table = Self.opened("c1", "c2", "c3", "c4")
        _ = table.handle(.established("c1", Self.session(generation: 0), nowMs: Self.t0))
        _ = table.handle(.established("c2", Self.session(generation: 1), nowMs: Self.t0))
        _ = table.handle(.established("c3", Self.session(generation: nil), nowMs: Self.t0))
        // c4 has no session: nothing to close.
        #expect(table.handle(.sharedSecretChanged(generation: 1)) == [
            .close("c1", code: Int(GatewayCloseCode.gatewayAuthChanged.rawValue), reason: "gateway auth changed"),
        ])
    }

    @Test func theEarliestDeadlineSkipsWhatTheFloorLeft() {
        var earliest = EarliestDeadline(after: 100)
        earliest.consider(nil)
        earliest.consider(100)
        #expect(earliest.value == nil)
        earliest.consider(300)
        earliest.consider(101)
        earliest.consider(200)
        #expect(earliest.value == 101)
        var unbounded = EarliestDeadline(after: nil)
        unbounded.consider(-5)
        #expect(unbounded.value == -5)
    }
}
