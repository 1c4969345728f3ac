import Conformance
import GatewayProtocol
import MockGateway

/// Steps the pairing scenarios share (gateway-protocol.md §5-6): reading `connect` frames off the
/// Gateway's event log, approving a device's pending request, and letting the client's time pass
/// without running ahead of a handshake in flight.
enum PairingSteps {
    /// A `connect` request as the Gateway received it.
    struct Connect: Sendable {
        /// The connection it arrived on.
        let connectionId: String
        /// Its `params`.
        let params: JSONValue

        /// `role` (the protocol's default is `operator`).
        var role: String { params["role"]?.stringValue ?? "operator" }
        /// `device.id`.
        var deviceId: String? { params["device"]?["id"]?.stringValue }
        /// `device.publicKey`.
        var publicKey: String? { params["device"]?["publicKey"]?.stringValue }
        /// `scopes`.
        var scopes: [String] { params["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        /// `auth.bootstrapToken`.
        var bootstrapToken: String? { params["auth"]?["bootstrapToken"]?.stringValue }
        /// Every token in `auth` (`token`, `deviceToken`, `bootstrapToken`).
        var presentedTokens: [String] {
            ["token", "deviceToken", "bootstrapToken"].compactMap { params["auth"]?[$0]?.stringValue }
        }

        /// Whether `auth` carries `token` in any of its token fields.
        func presents(_ token: String) -> Bool { presentedTokens.contains(token) }
    }

    // MARK: Reading the event log

    /// The `connect` request in `event`, if it is one.
    static func connect(in event: GatewayEvent) -> Connect? {
        guard case .frameIn(let connectionId, let frame?, _) = event, case .request(let request) = frame,
              request.method == GatewayMethod.connect.rawValue else { return nil }
        return Connect(connectionId: connectionId, params: request.params ?? .object([:]))
    }

    /// Every `connect` the Gateway received since `cursor`, in order.
    static func connects(_ run: ScenarioRun, from cursor: EventCursor) -> [Connect] {
        run.gateway.events.elements(from: cursor.position).compactMap(connect(in:))
    }

    /// The `connect` received on `connectionId`, if any.
    static func connect(_ run: ScenarioRun, on connectionId: String) -> Connect? {
        connects(run, from: .start).first { $0.connectionId == connectionId }
    }

    /// The error of a handshake refused with `PAIRING_REQUIRED` (`details.code`), if `event` is one.
    static func pairingRejection(_ event: GatewayEvent) -> (connectionId: String, error: ErrorShape)? {
        guard case .handshakeRejected(let connectionId, let error, _) = event,
              error.detailCode == ConnectErrorDetailCode.pairingRequired.rawValue else { return nil }
        return (connectionId, error)
    }

    /// The node sessions (`hello-ok` sent) of `deviceId` since `cursor`.
    static func nodeSessions(_ run: ScenarioRun, deviceId: String, from cursor: EventCursor) -> [SessionInfo] {
        run.gateway.events.elements(from: cursor.position).compactMap { event in
            if case .sessionOpened(let info) = event, info.role == GatewayRole.node.rawValue, info.deviceId == deviceId { info } else { nil }
        }
    }

    /// Every request id the Gateway created for `deviceId` so far.
    static func requestIds(_ run: ScenarioRun, deviceId: String) -> Set<String> {
        Set(run.gateway.events.all.compactMap { event in
            if case .pairingRequested(let request) = event, request.deviceId == deviceId { request.requestId } else { nil }
        })
    }

    // MARK: Pairing

    /// The first pairing request the client causes.
    static func firstRequest(_ run: ScenarioRun) async throws -> PairingRequestInfo {
        try await run.waitForEvent("a pairing request for the client's first connect", from: .start) { event in
            if case .pairingRequested(let request) = event { request } else { nil }
        }
    }

    /// Approves the pending request of `deviceId` as an all-powerful operator. When the client
    /// superseded it in the meantime (its other session asking too), the replacement is approved.
    /// - Returns: the approved request.
    /// - Throws: `ScenarioFailure` when the device has no pending request to approve.
    @discardableResult
    static func approveNewest(_ run: ScenarioRun, deviceId: String) async throws -> PairingRequestInfo {
        var problem = "no pending request of the device"
        for _ in 0..<5 {
            guard let request = await run.gateway.pendingPairingRequests().last(where: { $0.deviceId == deviceId }) else { break }
            do {
                try await run.gateway.approve(requestId: request.requestId)
                run.note("approved pairing request \(request.requestId) of \(deviceId)")
                return request
            } catch {
                problem = "\(error)"
            }
        }
        try run.fail("could not approve a pending request of \(deviceId)", expected: "a pending pairing request", actual: problem)
    }

    /// Pairs a fresh client: waits for its first pairing request, approves it and lets the
    /// client reconnect (by itself, or with the `connect` stimulus when it does not).
    /// - Returns: the device's first node session.
    static func pairClient(_ run: ScenarioRun) async throws -> SessionInfo {
        let request = try await firstRequest(run)
        let deviceId = request.deviceId
        let cursor = run.mark()
        try await approveNewest(run, deviceId: deviceId)
        return try await awaitClient(run, "a node session of \(deviceId) after its approval", from: cursor) { event in
            if case .sessionOpened(let info) = event, info.role == GatewayRole.node.rawValue, info.deviceId == deviceId { info } else { nil }
        }
    }

    /// Requires `session` to stay open for a moment of real time. Besides checking that the
    /// client keeps an admitted session, this gives it time to act on the `hello-ok` the Gateway
    /// just sent (store its tokens) before a scenario restarts or reinstalls it: the Gateway
    /// cannot observe that moment on the wire.
    static func holdSession(_ run: ScenarioRun, _ session: SessionInfo) async throws {
        let connectionId = session.connectionId
        try await run.expectNoEvent(within: .milliseconds(150), "close of the just admitted \(session.role) session",
                                    from: EventCursor(position: 0)) { event in
            if case .connectionClosed(let id, _, _) = event { id == connectionId } else { false }
        }
    }

    // MARK: Time

    /// Waits in real time (bounded) until every connection the client opened has finished its
    /// handshake (`hello-ok`, a refusal or a close), so that virtual time never runs ahead of a
    /// handshake in flight. A handshake that hangs is left to the timers.
    static func settle(_ run: ScenarioRun) async {
        let events = run.gateway.events
        let limit = run.scaled(.seconds(2))
        var hanging: Set<String> = []
        while true {
            var open: Set<String> = []
            for event in events.all {
                switch event {
                case .connectionOpened(let id, _, _): open.insert(id)
                case .sessionOpened(let info): open.remove(info.connectionId)
                case .handshakeRejected(let id, _, _), .connectionClosed(let id, _, _): open.remove(id)
                default: break
                }
            }
            guard let id = open.subtracting(hanging).sorted().first else { return }
            let finished = await events.first(from: 0, timeout: limit) { event in
                switch event {
                case .sessionOpened(let info): info.connectionId == id
                case .handshakeRejected(let other, _, _), .connectionClosed(let other, _, _): other == id
                default: false
                }
            }
            if finished == nil { hanging.insert(id) }
        }
    }

    /// Lets `duration` of the client's time pass in steps, settling handshakes between steps.
    static func pass(_ run: ScenarioRun, _ duration: Duration, step: Duration = .seconds(1)) async {
        var left = duration
        while left > .zero {
            await settle(run)
            let next = min(step, left)
            await run.elapse(next)
            left -= next
        }
        await settle(run)
    }

    /// Lets the client's time pass (up to `within`) until an event since `cursor` matches.
    /// - Parameters:
    ///   - connectFallback: when nothing matched by then, send the `connect` stimulus (if the
    ///     client supports it) before the final wait: for rules that allow a client to wait for
    ///     an explicit reconnect.
    /// - Throws: `ScenarioFailure` when nothing matches.
    static func awaitClient<T: Sendable>(
        _ run: ScenarioRun, _ what: String, from cursor: EventCursor, within: Duration = .seconds(12),
        connectFallback: Bool = true, _ match: @escaping @Sendable (GatewayEvent) -> T?
    ) async throws -> T {
        var waited = Duration.zero
        while true {
            await settle(run)
            if let found = run.gateway.events.elements(from: cursor.position).lazy.compactMap(match).first { return found }
            if waited >= within { break }
            await run.elapse(.seconds(1))
            waited += .seconds(1)
        }
        if connectFallback, run.client.supports(.connect) {
            run.note("the client did not reconnect by itself: sending the connect stimulus")
            try await run.client.reply(to: .connect)
        }
        return try await run.waitForEvent(what, from: cursor, match)
    }

    // MARK: Reconnect rate (§9.4)

    /// Counts the client's connection attempts in each second of its time, by the role of their
    /// `connect` (`?` for a connection that sent none).
    /// - Parameters:
    ///   - seconds: how many seconds to watch.
    ///   - eachSecond: runs at the start of every second (for example to reject new requests).
    static func attemptsPerSecond(
        _ run: ScenarioRun, seconds: Int, eachSecond: () async -> Void = {}
    ) async -> [[String: Int]] {
        var starts: [Int] = []
        for _ in 0..<seconds {
            await eachSecond()
            await settle(run)
            starts.append(run.mark().position)
            // Quarter-second steps: a client looping faster than its own settle still shows.
            for _ in 0..<4 {
                await run.elapse(.milliseconds(250))
                await settle(run)
            }
        }
        starts.append(run.mark().position)
        let log = run.gateway.events.all
        var roles: [String: String] = [:]
        for connect in log.compactMap(connect(in:)) { roles[connect.connectionId] = connect.role }
        return (0..<seconds).map { index in
            var bin: [String: Int] = [:]
            for event in log[starts[index]..<starts[index + 1]] {
                if case .connectionOpened(let id, _, _) = event { bin[roles[id] ?? "?", default: 0] += 1 }
            }
            return bin
        }
    }

    /// Requires at most two attempts per second per role in every bin of `bins`, and a backoff
    /// or pause: no more attempts in the second half of the window than in the first.
    static func checkRate(_ run: ScenarioRun, _ bins: [[String: Int]], while situation: String) throws {
        let roles = Set(bins.flatMap(\.keys)).sorted()
        for role in roles {
            let counts = bins.map { $0[role] ?? 0 }
            let table = counts.map(String.init).joined(separator: " ")
            if let worst = counts.max(), worst > 2 {
                try run.fail("the \(role) session reconnects more than twice per second \(situation)",
                             expected: "at most 2 connection attempts in every second",
                             actual: "\(worst) in one second; attempts per second: \(table)")
            }
            let half = counts.count / 2
            let early = counts.prefix(half).reduce(0, +)
            let late = counts.dropFirst(half).reduce(0, +)
            try run.expect(late <= early, "the \(role) session does not back off or pause \(situation)",
                           expected: "no more attempts in the last \(counts.count - half) s than in the first \(half) s",
                           actual: "\(early) then \(late); attempts per second: \(table)")
        }
    }
}
