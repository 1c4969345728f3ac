import GatewayProtocol
import MockGateway

/// Steps for the set-ups and checks that many scenarios wrote out line by line: "act, then wait
/// for what it caused", a reconnect, a setup-code pairing, an approval or question on the
/// client's operator session, a client that is registered for push and away, the handshake
/// outcome of one connect. Each one names what it waits for or checks in its failure message,
/// as the lines it replaces did.
extension ScenarioRun {
    // MARK: - Acting, then waiting for what it caused

    /// Marks the event log, runs `action` (a stimulus, a restart, a change on the Gateway) and
    /// returns the mark, so that a wait for what the action caused starts just before it:
    /// `let restart = try await run.mark { try await run.client.restart() }`.
    public func mark(before action: () async throws -> Void) async rethrows -> EventCursor {
        let cursor = mark()
        try await action()
        return cursor
    }

    /// Sends `stimulus` (the client must answer `ok`, see ``ScenarioClient/stimulate(_:)``) and
    /// waits for the first event `matcher` matches from just before it.
    /// - Returns: the matched value.
    @discardableResult
    public func stimulate<T: Sendable>(_ stimulus: Stimulus, until matcher: EventMatcher<T>, within: Duration? = nil,
                                       on gateway: Gateway? = nil) async throws -> T {
        let cursor = mark(on: gateway)
        try await client.stimulate(stimulus)
        return try await waitForEvent(matcher, within: within, from: cursor, on: gateway)
    }

    /// Sends `stimulus` (whatever the client answers, see ``ScenarioClient/reply(to:)``) and waits
    /// for the first event `matcher` matches from just before it.
    /// - Returns: the matched value.
    @discardableResult
    public func reply<T: Sendable>(to stimulus: Stimulus, until matcher: EventMatcher<T>, within: Duration? = nil,
                                   on gateway: Gateway? = nil) async throws -> T {
        let cursor = mark(on: gateway)
        try await client.reply(to: stimulus)
        return try await waitForEvent(matcher, within: within, from: cursor, on: gateway)
    }

    /// Sends `stimulus` (whatever the client answers) and requires that `matcher` matches no
    /// event within `within`, counting from just before it.
    public func reply<T: Sendable>(to stimulus: Stimulus, thenNo matcher: EventMatcher<T>, within: Duration,
                                   on gateway: Gateway? = nil) async throws {
        let cursor = mark(on: gateway)
        try await client.reply(to: stimulus)
        try await expectNoEvent(matcher, within: within, from: cursor, on: gateway)
    }

    /// Sends `stimulus` and requires the client to answer `ok` (`message` names what it was
    /// asked to do: `the client resolves with an offered decision`).
    public func expectClientAccepts(_ stimulus: Stimulus, _ message: String) async throws {
        let reply = try await client.reply(to: stimulus)
        try expectEqual(reply, .ok, message)
    }

    /// Sends the `connect` stimulus and waits for the client's session of `role` from just
    /// before it.
    /// - Parameter what: how the failure message names the session.
    /// - Returns: the session.
    @discardableResult
    public func reconnect(_ role: GatewayRole = .node, _ what: String, within: Duration? = nil) async throws -> SessionInfo {
        let cursor = try await mark { try await client.stimulate(.connect) }
        return try await session(role, what, from: cursor, within: within)
    }

    /// Waits for an event the client causes by itself within `within`, or after the `connect`
    /// stimulus when it does not (see ``untilClient(_:from:within:connectFallback:)``), and says
    /// which of the two it was.
    /// - Returns: the matched value, and whether the client needed the stimulus.
    public func untilClientOrPrompted<T: Sendable>(
        _ matcher: EventMatcher<T>, from cursor: EventCursor, within: Duration = .seconds(12)
    ) async throws -> (value: T, prompted: Bool) {
        do {
            return (try await waitForEvent(matcher, within: within, from: cursor), false)
        } catch let failure as ScenarioFailure {
            guard client.supports(.connect) else { throw failure }
        }
        note("the client did not act by itself within \(Self.format(within)) (\(matcher.description)): sending the connect stimulus")
        try await client.reply(to: .connect)
        return (try await waitForEvent(matcher, from: cursor), true)
    }

    // MARK: - Handshakes

    /// Waits until the handshake on `connect` ends and requires it admitted (`hello-ok`).
    /// - Parameter message: the failure message (`the node connect that presented the token is admitted`).
    /// - Returns: the session.
    @discardableResult
    public func expectAdmitted(_ connect: ConnectAttempt, _ message: String) async throws -> SessionInfo {
        let outcome = try await handshakeOutcome(of: connect.connectionId)
        guard let session = outcome.session else {
            try fail(message, expected: "hello-ok", actual: outcome.refusal.map { "\(outcome.summary): \($0.message)" } ?? outcome.summary)
        }
        return session
    }

    /// Requires `connect` to present `token` (in `auth.token`, `auth.deviceToken` or
    /// `auth.bootstrapToken`); the failure shows the connect's `auth`.
    public func expectPresents(_ connect: ConnectAttempt, _ token: String, _ message: String, expected: String) throws {
        try expect(connect.presents(token), message, expected: expected, actual: connect.params["auth"]?.jsonString ?? "no auth")
    }

    // MARK: - Pairing

    /// Asks the client to pair with a fresh setup code (the `setup-code` stimulus) and waits for
    /// its node session, with the connect fallback.
    /// - Parameter profile: the setup code's bootstrap profile (the Gateway's default when `nil`).
    /// - Returns: the code, the node session and the mark from just before the stimulus.
    @discardableResult
    public func pairWithSetupCode(
        profile: BootstrapProfile? = nil, _ what: String = "a node session authenticated with the bootstrap token"
    ) async throws -> (code: SetupCode, session: SessionInfo, cursor: EventCursor) {
        let code = await gateway.makeSetupCode(profile: profile)
        let cursor = try await mark { try await client.reply(to: .setupCode(code.encoded)) }
        let session = try await sessionWithConnectFallback(from: cursor, what)
        return (code, session, cursor)
    }

    /// The pending pairing requests of `deviceId`, in order.
    public func pendingRequests(of deviceId: String, on gateway: Gateway? = nil) async -> [PairingRequestInfo] {
        await (gateway ?? self.gateway).pendingPairingRequests().filter { $0.deviceId == deviceId }
    }

    /// Rejects every pending pairing request of `deviceId` (each one noted in the transcript, as
    /// is a request that could not be rejected any more).
    /// - Returns: how many were rejected.
    @discardableResult
    public func rejectPending(of deviceId: String) async -> Int {
        var rejected = 0
        for request in await pendingRequests(of: deviceId) {
            do {
                try await gateway.reject(requestId: request.requestId)
                note("rejected pairing request \(request.requestId)")
                rejected += 1
            } catch {
                note("could not reject \(request.requestId): \(error)")
            }
        }
        return rejected
    }

    /// Requires `deviceId` to have exactly one pending pairing request.
    /// - Parameter situation: when (`after asking for more scopes`), for the failure message.
    /// - Returns: the request.
    public func expectOnePendingRequest(of deviceId: String, _ situation: String) async throws -> PairingRequestInfo {
        let pending = await pendingRequests(of: deviceId)
        guard pending.count == 1, let request = pending.first else {
            try fail("the device does not have exactly one pending request \(situation)",
                     expected: "1 pending request", actual: "\(pending.count): \(pending.map(\.requestId))")
        }
        return request
    }

    /// The PAIRING_REQUIRED refusal of the client's first connect told to pair (waits for it).
    @discardableResult
    public func firstPairingRefusal() async throws -> ConnectRefusal {
        try await waitForEvent(.refusal(.pairingRequired).named("the PAIRING_REQUIRED refusal of the first connect"), from: .start)
    }

    /// The paired session's device id, or a failure (`the node session has no device id`).
    public func deviceId(of session: SessionInfo) throws -> String {
        try required(session.deviceId, "the node session has no device id")
    }

    // MARK: - Approvals and questions on the client's operator session

    /// Waits for the client's operator session, then opens an exec approval on the Gateway and
    /// waits until its prompt reached that session (see ``openApproval(command:allowedDecisions:expiresIn:to:on:sessionName:)``).
    /// - Returns: the approval's id and the operator session.
    public func openApproval(
        command: String, allowedDecisions: [ApprovalDecision] = ApprovalDecision.allCases, expiresIn: Duration
    ) async throws -> (id: String, session: SessionInfo) {
        let session = try await operatorSession()
        return (try await openApproval(command: command, allowedDecisions: allowedDecisions, expiresIn: expiresIn, to: session), session)
    }

    /// Waits for the client's operator session, then opens a question on the Gateway and waits
    /// until it reached that session (see ``openQuestion(_:options:multiSelect:allowOther:expiresIn:to:)``).
    /// - Returns: the question's id and the operator session.
    public func openQuestion(
        _ prompt: String, options: [String], multiSelect: Bool = false, allowOther: Bool = false, expiresIn: Duration
    ) async throws -> (id: String, session: SessionInfo) {
        let session = try await operatorSession()
        return (try await openQuestion(prompt, options: options, multiSelect: multiSelect, allowOther: allowOther,
                                       expiresIn: expiresIn, to: session), session)
    }

    /// Requires the approval `id` to have ended with `status` (`message` names the check).
    public func expectApproval(_ id: String, status: ApprovalStatus, _ message: String, on gateway: Gateway? = nil) async throws {
        try expectEqual(await (gateway ?? self.gateway).approval(id: id)?.status, status, message)
    }

    /// Requires the question `id` to have recorded `answers` (by question id: `["q1": ["Staging"]]`).
    public func expectQuestion(_ id: String, answers: [String: [String]], _ message: String) async throws {
        try expectEqual(await gateway.question(id: id)?.answers, answers, message)
    }

    /// Asks the client to answer the question `id` with `answer`, requires it to accept, and the
    /// Gateway to record `recorded` as the answer to its only part (`q1`).
    /// - Parameter what: the question in words (`a multi-select question with two options`).
    public func expectAnswerRecorded(_ id: String, with answer: JSONValue, recorded: [String], _ what: String) async throws {
        try await expectClientAccepts(.answerQuestion(id: id, answer: answer), "the client answers \(what)")
        try expectEqual(await gateway.question(id: id)?.answers?["q1"], recorded, "the recorded answer to \(what)")
    }

    /// Waits for the client's `sessions.messages.subscribe` with `includeApprovals:true` on
    /// `connectionId` from `cursor` on, and for the Gateway's answer to it.
    /// - Parameter what: how the failure message names the subscription.
    /// - Returns: the subscribed session key (the session the approvals are bound to).
    public func approvalSubscription(on connectionId: String, from cursor: EventCursor, _ what: String) async throws -> String {
        let subscribe = EventMatcher.request(.sessionsMessagesSubscribe, on: connectionId)
            .filter { $0.params["includeApprovals"]?.boolValue == true && $0.params["key"]?.stringValue != nil }.named(what)
        let request = try await waitForEvent(subscribe, from: cursor)
        try await waitForEvent(EventMatcher.response(to: request).named("the Gateway's answer to that subscription"), from: cursor)
        return request.params["key"]?.stringValue ?? ""
    }

    // MARK: - Nodes

    /// The Gateway's record of the connected node `nodeId`, or a failure.
    public func connectedNode(_ nodeId: String) async throws -> RegisteredNode {
        try required(await gateway.connectedNodes().first { $0.nodeId == nodeId }, "the client's node is not registered")
    }

    /// Waits for the client's node session, registers it for relay push (``registerRelayPush(node:_:)``)
    /// and disconnects it (the `disconnect` stimulus) until the Gateway saw the node go.
    /// - Parameters:
    ///   - purpose: names the registration check in its failure message.
    ///   - ifSupported: disconnect only when the client supports the stimulus (otherwise it is required).
    /// - Returns: the node id.
    public func registerRelayPushAndDisconnect(_ purpose: String, ifSupported: Bool = false) async throws -> String {
        let firstSocket = try await nodeSession().connectionId
        let nodeId = try await self.nodeId(from: .start)
        try await registerRelayPush(node: nodeId, purpose)
        if !ifSupported || client.supports(.disconnect) { try await disconnect(until: .nodeDisconnected(firstSocket)) }
        return nodeId
    }

    /// Starts a second Gateway (auto-approving, on the run's profile) and requires it to have
    /// another identity than the run's first one (`the two Gateways have different identities
    /// (precondition)`), for a client that switches Gateways.
    /// - Returns: the new Gateway.
    public func startOtherGateway() async throws -> Gateway {
        let other = try await startGateway { $0.autoApproval = .auto }
        try expect(other.identity.deviceId != gateway.identity.deviceId, "the two Gateways have different identities (precondition)")
        return other
    }

    /// Starts a second Gateway (``startOtherGateway()``), switches the client to it (the
    /// `switch-gateway` stimulus) and waits for the client's session of `role` there.
    /// - Parameter what: how the failure message names the session.
    /// - Returns: the new Gateway and the session.
    public func switchToOtherGateway(_ role: GatewayRole = .operator, _ what: String) async throws
        -> (gateway: Gateway, session: SessionInfo) {
        let other = try await startOtherGateway()
        try await client.stimulate(.switchGateway(url: other.url))
        return (other, try await session(role, what, on: other))
    }

    /// Resets the TCP connection of `session` (a fault: no close frame) and waits for the
    /// client's next node `connect` after it (`what` names it; 30 s).
    /// - Returns: the connect and the mark from just before the reset.
    @discardableResult
    public func resetAndReconnect(_ session: SessionInfo, _ what: String = "the node's connect after the reset") async throws
        -> (connect: ConnectAttempt, cursor: EventCursor) {
        let cursor = await mark { await gateway.reset(connectionId: session.connectionId) }
        return (try await nextConnect(role: .node, what, from: cursor, within: .seconds(30)), cursor)
    }

    /// Sends the chat message `text` with its acknowledgement lost: the Gateway applies the
    /// `chat.send` and cuts the connection instead of answering; then waits for the client's
    /// operator session to come back (after `first`) and read `chat.history`, and takes the chat
    /// view online again (``chatReconnected(after:from:)``).
    /// - Returns: the mark from just before the send.
    @discardableResult
    public func sendWithLostAck(_ text: String, after first: SessionInfo) async throws -> EventCursor {
        let cursor = mark()
        await gateway.dropNextChatSendAck(.afterApplying, cutConnection: true)
        try await client.stimulate(.sendMessage(text))
        try await chatReconnected(after: first, from: cursor)
        try await client.stimulate(.goOnline)
        return cursor
    }

    /// Sends every following event to the client's connections as a binary message (`binary`)
    /// and split into fragments (`fragmented`), until called again: `(false, false)` returns to
    /// one text message per event.
    public func sendNextEvents(binary: Bool, fragmented: Bool) async {
        let untilReset = 10_000
        await gateway.sendNextEventsAsBinary(binary ? untilReset : 0)
        await gateway.fragmentNextEvents(fragmented ? untilReset : 0)
    }

    /// Invokes the probe `command` (``probeCommand()``, with its ``probeParams(for:)``) on
    /// `nodeId` and waits for the outcome (behind a slow invoke on the same socket: once it is
    /// answered, the client has taken the slow one).
    @discardableResult
    public func invokeProbe(_ command: String, nodeId: String) async -> InvokeOutcome {
        await gateway.invoke(nodeId: nodeId, command: command, params: probeParams(for: command), wait: stepTimeout)
    }
}

extension ClientRequest {
    /// The `trigger` of a `node.presence.alive` beacon (read from its `payloadJSON`), if any.
    public var beaconTrigger: String? {
        params["payloadJSON"]?.stringValue.flatMap { try? JSONValue(parsing: $0) }?["trigger"]?.stringValue
    }
}

extension ScenarioRun {
    /// Waits until the handshake on `connectionId` ends and requires it refused (with
    /// `detailCode`, when given).
    /// - Parameter message: the failure message (`the removed device's reconnect is not told to pair`).
    /// - Returns: the refusal.
    @discardableResult
    public func expectRefused(_ connectionId: String, with detailCode: ConnectErrorDetailCode? = nil, _ message: String) async throws
        -> ErrorShape {
        let outcome = try await handshakeOutcome(of: connectionId)
        guard let refusal = outcome.refusal, detailCode.map({ refusal.detailCode == $0.rawValue }) ?? true else {
            try fail(message, expected: detailCode?.rawValue ?? "the connect refused", actual: outcome.summary)
        }
        return refusal
    }
}

extension EventMatcher where Output == String {
    /// The expiry of a pending pairing request of `device`; the value is the request id.
    public static func pairingExpired(device: String) -> EventMatcher {
        EventMatcher("the expiry of a pending pairing request of \(device)") { event in
            if case .pairingExpired(let requestId, device) = event { requestId } else { nil }
        }
    }
}

extension ConnectAttempt {
    /// The offered protocol range, `minProtocol...maxProtocol` (`0` for a bound that is absent or
    /// not an integer).
    public var protocolRange: (low: Int64, high: Int64) {
        (params["minProtocol"]?.int64Value ?? 0, params["maxProtocol"]?.int64Value ?? 0)
    }

    /// Whether the offered range contains `version`.
    public func offers(protocol version: Int64) -> Bool {
        let (low, high) = protocolRange
        return low <= version && version <= high
    }
}

// MARK: - Chat

extension ScenarioRun {
    /// Sends each of `stimuli` in turn; the client must answer `ok` to every one
    /// (`try await run.stimulate(.goOffline, .goOnline)`).
    public func stimulate(_ stimuli: Stimulus...) async throws {
        for stimulus in stimuli { try await client.stimulate(stimulus) }
    }

    /// Sends each of `stimuli` in turn, the client answering `ok` to every one
    /// (`try await run.stimulate([.goOffline] + texts.map { Stimulus.sendMessage($0) })`).
    public func stimulate(_ stimuli: [Stimulus]) async throws {
        for stimulus in stimuli { try await client.stimulate(stimulus) }
    }

    /// Waits for the client's operator session to come back after `first` was cut (a new
    /// operator session from `cursor` on) and for it to read `chat.history`.
    /// - Returns: the new session.
    @discardableResult
    public func chatReconnected(after first: SessionInfo, from cursor: EventCursor) async throws -> SessionInfo {
        let reconnected = try await waitForEvent(.session(.operator).filter { $0.connectionId != first.connectionId }
            .named("the client's operator session reconnecting"), from: cursor)
        try await waitForEvent(.request(.chatHistory, on: reconnected.connectionId), from: cursor)
        return reconnected
    }

    /// Requires the Gateway (the run's by default) to have stored exactly `texts` as user
    /// messages, in order (`message` names the check).
    public func expectStoredUserTexts(_ texts: [String], _ message: String, on gateway: Gateway? = nil) async throws {
        try expectEqual(await storedUserTexts(on: gateway), texts, message)
    }
}

// MARK: - Invokes

extension ScenarioRun {
    /// Invokes `command` on `nodeId` (with the step deadline) and requires the client to refuse
    /// it with the error `code`.
    /// - Parameter message: the failure message (`camera.snap is refused in the background`).
    /// - Returns: the refusal.
    @discardableResult
    public func expectInvokeRefused(_ command: String, nodeId: String, params: JSONValue? = [:], idempotencyKey: String? = nil,
                                    code: String, _ message: String) async throws -> NodeInvokeResult {
        let outcome = await gateway.invoke(nodeId: nodeId, command: command, params: params, idempotencyKey: idempotencyKey,
                                           wait: stepTimeout)
        guard case .result(let result) = outcome, !result.ok, result.error?.code == code else {
            try fail(message, expected: "ok:false \(code)", actual: Self.describe(outcome))
        }
        return result
    }

    /// An invoke's outcome in the words of a failure message (no Swift debug formatting):
    /// `ok:true`, `ok:false NODE_BACKGROUND_UNAVAILABLE "…"`, `no result before the invoke timed out`.
    public static func describe(_ outcome: InvokeOutcome) -> String {
        switch outcome {
        case .result(let result) where result.ok:
            "ok:true"
        case .result(let result):
            result.error.map { "ok:false \($0.code ?? "without a code") \"\($0.message ?? "")\"" } ?? "ok:false without an error"
        case .timedOut:
            "no result before the invoke timed out"
        case .nodeDisconnected:
            "the node disconnected before it answered"
        }
    }
}

// MARK: - Probes and wakes

extension ScenarioRun {
    /// The probe command (``probeCommand()``, decided from the first node connect) and then the
    /// client's node session: the set-up of the scenarios that disturb a session and then require
    /// ``expectProbeAnswers(_:on:_:)``.
    public func probeAndNodeSession() async throws -> (probe: String, session: SessionInfo) {
        let probe = try await probeCommand()
        return (probe, try await nodeSession())
    }

    /// The invokes whose results the invoke-shape scenarios judge, with whether each should
    /// succeed: the probe command (``probeCommand()``) and, when the client declares it,
    /// `system.notify` without a title or body, which fails (noted when it is not declared).
    public func probeAndFailingInvokes() async throws -> [(command: String, succeeds: Bool)] {
        let probe = try await probeCommand()
        guard try await declaredCommands().contains(NodeCommandName.systemNotify.rawValue) else {
            note("the client does not declare system.notify: only the success shape is checked")
            return [(probe, true)]
        }
        return [(probe, true), (NodeCommandName.systemNotify.rawValue, false)]
    }

    /// The time between two background wakes that must stay inside a beacon's minimum interval:
    /// two minutes of virtual time; with a real clock a few seconds, which is just as far inside
    /// the interval and keeps the run short.
    public var wakeGap: Duration { isSimulated ? .seconds(120) : .seconds(2) }
}

// MARK: - Checks

extension ScenarioRun {
    /// Requires `found` to be empty (`message`: what finding something means, `expected`: what
    /// was expected instead); the failure lists what was found, each as its description,
    /// `separator` between.
    public func expectNone<Found: Collection>(_ found: Found, _ message: String, expected: String, separator: String = "; ") throws {
        try expect(found.isEmpty, message, expected: expected, actual: found.map { "\($0)" }.joined(separator: separator))
    }
}
