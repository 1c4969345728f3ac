import GatewayProtocol
import MockGateway

/// Steps that several scenarios spelled out for themselves: a session that may need the
/// `connect` stimulus, "the client still answers an invoke", "the client answered nothing since".
extension ScenarioRun {
    // MARK: - A session, with the connect fallback

    /// Waits for a session of the client of `role` (of `device` only, when given) from `cursor`
    /// on: the client opens it by itself within `within`, or (when `connectFallback` and it
    /// supports the stimulus) after the `connect` stimulus, for rules that allow a client to wait
    /// for an explicit reconnect (after an approval, a relaunch, a restart).
    /// - Parameter what: how the failure message names the session (default: the matcher's words).
    /// - Returns: the session.
    @discardableResult
    public func sessionWithConnectFallback(
        _ role: GatewayRole = .node, device: String? = nil, from cursor: EventCursor, _ what: String? = nil,
        within: Duration = .seconds(12), connectFallback: Bool = true
    ) async throws -> SessionInfo {
        let matcher = EventMatcher.session(role, device: device)
        return try await untilClient(what.map(matcher.named) ?? matcher, from: cursor, within: within, connectFallback: connectFallback)
    }

    /// Pairs a fresh client (``pairClient()``), requires its node session to carry a device
    /// token, and lets the session stay open long enough for the client to store it (so that a
    /// restart or relaunch right after can present it).
    /// - Returns: the node session, its device id and the node token.
    public func pairClientAndKeepToken() async throws -> (session: SessionInfo, deviceId: String, token: String) {
        let session = try await pairClient()
        guard let deviceId = session.deviceId, let token = session.issuedDeviceToken else {
            try fail("the approved node session has no device token", expected: "hello-ok.auth.deviceToken", actual: "none")
        }
        try await expectStaysOpen(session.connectionId, "close of the just admitted node session")
        return (session, deviceId, token)
    }

    // MARK: - A relay push registration the Gateway keeps

    /// Asks the client to register for push through the relay (the `push-register` stimulus) and
    /// requires the Gateway to keep the registration of `nodeId`, so that it can wake the client.
    /// - Parameter purpose: how the failure message names the requirement.
    /// - Returns: the registration.
    @discardableResult
    public func registerRelayPush(
        node nodeId: String, _ purpose: String = "the Gateway keeps the push registration, so that it can wake the client"
    ) async throws -> PushRegistrationSeen {
        let registering = mark()
        try await client.stimulate(.pushRegister(transport: PushTransport.relay.rawValue))
        let registration = try await waitForEvent(.pushRegistered(node: nodeId), from: registering)
        try expect(registration.accepted, purpose,
                   expected: "a registration the Gateway keeps (relay: gatewayDeviceId \(gateway.identity.deviceId))",
                   actual: "ignored (gatewayDeviceId \(registration.gatewayDeviceId ?? "none"))")
        return registration
    }

    // MARK: - The client still answers an invoke

    /// Invokes `probe` (see ``probeCommand()``, with its ``probeParams(for:)``) on the node of
    /// `session` and requires the request to go out on that session's connection and the client
    /// to answer it: the client still serves the connection `situation` describes (`after the
    /// seq gap`).
    /// - Returns: the cursor from just before the invoke, for checks about what followed it.
    @discardableResult
    public func expectProbeAnswers(_ probe: String, on session: SessionInfo, _ situation: String) async throws -> EventCursor {
        let connectionId = session.connectionId
        guard let nodeId = session.deviceId else { try fail("the node session has no device id") }
        let start = mark()
        async let outcome = gateway.invoke(nodeId: nodeId, command: probe, params: probeParams(for: probe), wait: stepTimeout)
        let sentOn = try await waitForEvent("the node.invoke.request \(situation)", from: start) { event in
            if case .invokeSent(_, _, _, let id) = event { id } else { nil }
        }
        try expectEqual(sentOn, connectionId, "the connection the \(probe) probe went out on \(situation)")
        let result = await outcome
        guard case .result = result else {
            try fail("the client did not answer the \(probe) probe \(situation)",
                     expected: "a node.invoke.result on \(connectionId)", actual: "\(result)")
        }
        return start
    }

    /// Invokes `command` on `nodeId` and waits for the client's `node.invoke.result` request for
    /// it, as sent (before the Gateway judged it).
    /// - Returns: the request's `params` (`null` when absent).
    public func invokeResultParams(_ command: String, nodeId: String, params: JSONValue = [:]) async throws -> JSONValue {
        let start = mark()
        async let outcome = gateway.invoke(nodeId: nodeId, command: command, params: params, wait: stepTimeout)
        let id = try await waitForEvent(.invokeSent(command), from: start)
        let result = try await waitForEvent(.invokeResultRequest(id: id), from: start).params
        _ = await outcome
        return result
    }

    /// Invokes `command` on `nodeId` (with the step deadline) and returns the client's result.
    /// - Parameters:
    ///   - what: names the invoke in the failure message (`"\(what) got no result"`).
    ///   - expected: what was expected, for the report.
    /// - Throws: `ScenarioFailure` when no result comes (the invoke timed out, or the node
    ///   disconnected first).
    @discardableResult
    public func invokeForResult(_ command: String, nodeId: String, params: JSONValue? = nil, idempotencyKey: String? = nil,
                                _ what: String, expected: String = "a result") async throws -> NodeInvokeResult {
        let outcome = await gateway.invoke(nodeId: nodeId, command: command, params: params, idempotencyKey: idempotencyKey,
                                           wait: stepTimeout)
        guard case .result(let result) = outcome else { try fail("\(what) got no result", expected: expected, actual: "\(outcome)") }
        return result
    }

    // MARK: - Disconnecting

    /// Sends the `disconnect` stimulus and waits until `gone` (the close of the client's socket:
    /// ``EventMatcher/closed(_:)``, ``EventMatcher/nodeDisconnected(_:)``).
    /// - Returns: the matched value.
    @discardableResult
    public func disconnect<T: Sendable>(until gone: EventMatcher<T>) async throws -> T {
        let cursor = mark()
        try await client.stimulate(.disconnect)
        return try await waitForEvent(gone, from: cursor)
    }

    // MARK: - The session a request came on

    /// Requires that `request` came on a node session (of `device`, when given).
    /// - Returns: the session.
    @discardableResult
    public func expectOnNodeSession(_ request: ClientRequest, device: String? = nil, _ what: String) throws -> SessionInfo? {
        let session = matches(.session(on: request.connectionId)).first
        try expectEqual(session?.role ?? "unknown", .node, "the role of the session that carried \(what)")
        return session
    }

    // MARK: - What the client answered

    /// The client's single answer to the approval or question `id` so far (see
    /// ``clientResolveAttempts(id:on:)``).
    /// - Throws: `ScenarioFailure` when it sent none, or more than one.
    public func oneClientAnswer(to id: String, _ what: String, on gateway: Gateway? = nil) async throws -> ResolveAttempt {
        let attempts = await clientResolveAttempts(id: id, on: gateway)
        guard attempts.count == 1 else {
            try fail(attempts.isEmpty ? "the client sent no answer to \(id)" : "the client answered \(id) more than once",
                     expected: "one resolve request: \(what)", actual: attempts.isEmpty ? "none" : Self.describeAnswers(attempts))
        }
        return attempts[0]
    }

    /// Requires that the client sent no answer (resolve request) for the approval or question
    /// `id` beyond `earlier`, what ``clientResolveAttempts(id:on:)`` returned before (nothing at
    /// all when empty).
    /// - Parameters:
    ///   - message: the failure message (`the client answered an expired question`).
    ///   - expected: what was expected instead, for the report.
    public func expectNoClientAnswer(to id: String, since earlier: [ResolveAttempt] = [], _ message: String,
                                     expected: String? = nil, on gateway: Gateway? = nil) async throws {
        let attempts = await clientResolveAttempts(id: id, on: gateway)
        guard attempts.count > earlier.count else { return }
        try fail(message, expected: expected ?? "no further resolve request for \(id)",
                 actual: Self.describeAnswers(Array(attempts.dropFirst(earlier.count))))
    }

    /// `value`, or a failure when there is none: the one-line form of
    /// `guard let x = value else { try run.fail(message, expected:, actual:) }`.
    public func required<Value>(_ value: Value?, _ message: @autoclosure () -> String, expected: @autoclosure () -> String? = nil,
                                actual: @autoclosure () -> String? = nil) throws -> Value {
        guard let value else { try fail(message(), expected: expected(), actual: actual()) }
        return value
    }

    /// Requires that `first`, the client's answer to the approval or question `id`, stays its
    /// only one: no retry on a timer (2 s of client time pass) and nothing when the user acts on
    /// the settled card again (`again`: a terminal card offers no decisions).
    /// - Parameters:
    ///   - subject: what the client resolved, for the failure messages (`question`, `approval`).
    public func expectAnswerStaysFinal(_ id: String, first: ResolveAttempt, again: Stimulus, subject: String) async throws {
        await elapse(.seconds(2))
        try await expectNoClientAnswer(to: id, since: [first], "the client resolved the \(subject) again 2 s after its answer lost")
        _ = try await client.reply(to: again)
        try await expectNoClientAnswer(to: id, since: [first], "the client resolved the \(subject) again from the settled card")
    }

    /// Requires the approval `id` to end as `outcome`: its status and decision, `allowed allow-once`
    /// (`-` for no decision).
    public func expectApproval(_ id: String, endsAs outcome: String, _ message: String, on gateway: Gateway? = nil) async throws {
        let record = await (gateway ?? self.gateway).approval(id: id)
        try expectEqual(record.map { "\($0.status.rawValue) \($0.decision?.rawValue ?? "-")" }, outcome, message)
    }

    /// Resolve attempts as a report shows them: `approval.resolve allow-once → applied; ...`.
    public static func describeAnswers(_ attempts: [ResolveAttempt]) -> String {
        attempts.map { "\($0.channel.rawValue) \($0.requested) → \($0.result)" }.joined(separator: "; ")
    }
}
