import GatewayProtocol
import MockGateway

/// Steps most scenarios share, so that a scenario reads like the requirement it checks:
/// reading what the Gateway saw (no waiting), and waiting for the client to act (with a
/// deadline; in a simulated run waiting lets the run's virtual time pass).
extension ScenarioRun {
    // MARK: - What the Gateway saw so far

    /// The events of `gateway` (the run's by default) from `cursor` on.
    public func events(from cursor: EventCursor = .start, on gateway: Gateway? = nil) -> [GatewayEvent] {
        (gateway ?? self.gateway).events.elements(from: cursor.position)
    }

    /// Every `connect` the Gateway received from `cursor` on, in order.
    public func connects(from cursor: EventCursor = .start, on gateway: Gateway? = nil) -> [ConnectAttempt] {
        events(from: cursor, on: gateway).compactMap(ConnectAttempt.init)
    }

    /// The `connect` received on `connectionId`, if any.
    public func connect(on connectionId: String, gateway: Gateway? = nil) -> ConnectAttempt? {
        connects(on: gateway).first { $0.connectionId == connectionId }
    }

    /// The sessions (`hello-ok` sent) from `cursor` on, optionally of one role and device.
    public func sessions(role: GatewayRole? = nil, deviceId: String? = nil, from cursor: EventCursor = .start,
                         on gateway: Gateway? = nil) -> [SessionInfo] {
        events(from: cursor, on: gateway).compactMap { event in
            guard case .sessionOpened(let info) = event else { return nil }
            if let role, info.role != role { return nil }
            if let deviceId, info.deviceId != deviceId { return nil }
            return info
        }
    }

    /// Every pairing request id the Gateway created for `deviceId` so far.
    public func pairingRequestIds(deviceId: String, on gateway: Gateway? = nil) -> Set<String> {
        Set(events(on: gateway).compactMap { event in
            if case .pairingRequested(let request) = event, request.deviceId == deviceId { request.requestId } else { nil }
        })
    }

    /// How the handshake on `connectionId` ended, if it has.
    public func handshakeOutcome(of connectionId: String, on gateway: Gateway? = nil) -> HandshakeOutcome? {
        events(on: gateway).lazy.compactMap { Self.outcome(of: connectionId, in: $0) }.first
    }

    /// The pairing `requestId` the refusal on `connectionId` named, if it was `PAIRING_REQUIRED`.
    public func toldRequestId(on connectionId: String, gateway: Gateway? = nil) -> String? {
        guard let error = handshakeOutcome(of: connectionId, on: gateway)?.refusal,
              error.detailCode == ConnectErrorDetailCode.pairingRequired.rawValue else { return nil }
        return error.details?["requestId"]?.stringValue
    }

    static func outcome(of connectionId: String, in event: GatewayEvent) -> HandshakeOutcome? {
        switch event {
        case .sessionOpened(let info) where info.connectionId == connectionId: .admitted(info)
        case .handshakeRejected(let id, let error, let closeCode) where id == connectionId: .refused(error, closeCode: closeCode)
        case .connectionClosed(let id, let code, let reason) where id == connectionId: .closed(code: code, reason: reason)
        default: nil
        }
    }

    // MARK: - Waiting for the client

    /// Waits for a session of the client (`hello-ok` sent).
    /// - Parameters:
    ///   - role: the session's role (node by default).
    ///   - deviceId: only a session of this device.
    ///   - what: how the failure message names it.
    ///   - from: where to start looking (default: after the previous wait's event).
    ///   - within: the deadline (default: the step deadline).
    ///   - gateway: which Gateway (the run's by default).
    /// - Returns: the session.
    /// - Throws: `ScenarioFailure` when none comes in time.
    @discardableResult
    public func session(
        _ role: GatewayRole = .node, deviceId: String? = nil, _ what: String? = nil, from: EventCursor? = nil,
        within: Duration? = nil, on gateway: Gateway? = nil
    ) async throws -> SessionInfo {
        let description = what ?? "the client's \(role.rawValue) session\(deviceId.map { " of \($0)" } ?? "") (hello-ok)"
        return try await waitForEvent(description, within: within, from: from, on: gateway) { event in
            guard case .sessionOpened(let info) = event, info.role == role else { return nil }
            if let deviceId, info.deviceId != deviceId { return nil }
            return info
        }
    }

    /// Waits for the client's node session (`hello-ok` for role node); see ``session(_:deviceId:_:from:within:on:)``.
    @discardableResult
    public func nodeSession(deviceId: String? = nil, _ what: String? = nil, from: EventCursor? = nil,
                            within: Duration? = nil, on gateway: Gateway? = nil) async throws -> SessionInfo {
        try await session(.node, deviceId: deviceId, what, from: from, within: within, on: gateway)
    }

    /// Waits until the client's node is connected as a node (routing target of invokes) and
    /// returns its node id.
    public func nodeId(_ what: String = "the client's node session", from: EventCursor? = nil,
                       within: Duration? = nil) async throws -> String {
        try await waitForEvent(what, within: within, from: from) { event in
            if case .nodeConnected(let nodeId, _) = event { nodeId } else { nil }
        }
    }

    /// Waits for the client's operator session (`hello-ok` for role operator).
    @discardableResult
    public func operatorSession(deviceId: String? = nil, _ what: String? = nil, from: EventCursor? = nil,
                                within: Duration? = nil, on gateway: Gateway? = nil) async throws -> SessionInfo {
        try await session(.operator, deviceId: deviceId, what, from: from, within: within, on: gateway)
    }

    /// Waits for the next `connect` the client sends.
    /// - Parameters:
    ///   - role: only a connect for this role.
    ///   - deviceId: only a connect of this device.
    ///   - what: how the failure message names it.
    ///   - from: where to start looking.
    ///   - within: the deadline (default: the step deadline).
    ///   - matching: any further condition.
    /// - Returns: the attempt.
    @discardableResult
    public func nextConnect(
        role: GatewayRole? = nil, deviceId: String? = nil, _ what: String? = nil, from: EventCursor? = nil,
        within: Duration? = nil, on gateway: Gateway? = nil,
        matching: @escaping @Sendable (ConnectAttempt) -> Bool = { _ in true }
    ) async throws -> ConnectAttempt {
        let description = what ?? "a \(role.map { "\($0.rawValue) " } ?? "")connect\(deviceId.map { " of \($0)" } ?? "") from the client"
        return try await waitForEvent(description, within: within, from: from, on: gateway) { event in
            guard let attempt = ConnectAttempt(event) else { return nil }
            if let role, attempt.role != role.rawValue { return nil }
            if let deviceId, attempt.deviceId != deviceId { return nil }
            return matching(attempt) ? attempt : nil
        }
    }

    /// Waits until the handshake on `connectionId` ends: admitted, refused or closed.
    public func handshakeOutcome(of connectionId: String, _ what: String? = nil, within: Duration? = nil,
                                 on gateway: Gateway? = nil) async throws -> HandshakeOutcome {
        try await waitForEvent(what ?? "the outcome of the handshake on \(connectionId)", within: within, from: .start,
                               on: gateway) { Self.outcome(of: connectionId, in: $0) }
    }

    /// Waits for a pairing request (`device.pair.requested`).
    /// - Parameters:
    ///   - deviceId: only a request of this device; `except` excludes one device instead.
    ///   - from: where to start looking (`.start`: the first request ever made).
    /// - Returns: the request.
    @discardableResult
    public func pairingRequest(
        deviceId: String? = nil, except excluded: String? = nil, _ what: String? = nil, from: EventCursor? = nil,
        within: Duration? = nil, on gateway: Gateway? = nil
    ) async throws -> PairingRequestInfo {
        let description = what ?? "a pairing request\(deviceId.map { " of \($0)" } ?? "")"
        return try await waitForEvent(description, within: within, from: from, on: gateway) { event in
            guard case .pairingRequested(let request) = event else { return nil }
            if let deviceId, request.deviceId != deviceId { return nil }
            if let excluded, request.deviceId == excluded { return nil }
            return request
        }
    }

    /// The first pairing request the client causes.
    public func firstPairingRequest() async throws -> PairingRequestInfo {
        try await pairingRequest("a pairing request for the client's first connect", from: .start)
    }

    /// Waits until `connectionId` closes.
    /// - Returns: the close code and reason.
    @discardableResult
    public func expectClosed(_ connectionId: String, _ what: String? = nil, from: EventCursor = .start,
                             within: Duration? = nil, on gateway: Gateway? = nil) async throws -> (code: Int, reason: String) {
        try await waitForEvent(what ?? "the close of \(connectionId)", within: within, from: from, on: gateway) { event in
            if case .connectionClosed(let id, let code, let reason) = event, id == connectionId { (code, reason) } else { nil }
        }
    }

    /// Requires `connectionId` to stay open for `duration` (it may have closed before: that counts
    /// too). Besides checking that a client keeps an admitted session, this lets it act on what
    /// the Gateway just sent (store its tokens) before a scenario restarts or reinstalls it.
    public func expectStaysOpen(_ connectionId: String, for duration: Duration = .milliseconds(150), _ what: String? = nil,
                                on gateway: Gateway? = nil) async throws {
        try await expectNoEvent(within: duration, what ?? "close of \(connectionId)", from: .start, on: gateway) { event in
            if case .connectionClosed(let id, _, _) = event { id == connectionId } else { false }
        }
    }

    /// Waits for an event the client causes by itself (a retry, a reconnect) within `within`; a
    /// client that does not and that supports the `connect` stimulus gets it (when
    /// `connectFallback`), for rules that allow a client to wait for an explicit reconnect.
    /// - Returns: the matched value.
    @discardableResult
    public func untilClient<T: Sendable>(
        _ what: String, from cursor: EventCursor, within: Duration = .seconds(12), connectFallback: Bool = true,
        _ match: @escaping @Sendable (GatewayEvent) -> T?
    ) async throws -> T {
        do {
            return try await waitForEvent(what, within: within, from: cursor, match)
        } catch let failure as ScenarioFailure {
            guard connectFallback, client.supports(.connect) else { throw failure }
        }
        let attempts = events(from: cursor).filter { if case .connectionOpened = $0 { true } else { false } }.count
        note(attempts == 0
             ? "the client did not reconnect by itself within \(Self.format(within)): sending the connect stimulus"
             : "the client opened \(attempts) connection\(attempts == 1 ? "" : "s") within \(Self.format(within)) but not \(what): "
                + "sending the connect stimulus")
        try await client.reply(to: .connect)
        return try await waitForEvent(what, from: cursor, match)
    }

    // MARK: - Declared commands

    /// The commands the client's node declares (`connect.commands` of its first node connect),
    /// known as soon as it connects, admitted or not. A client that sends no node connect within
    /// the step deadline declares nothing (empty), so a scenario that needs a command is
    /// `unsupported` for it rather than failed: a real Gateway only ever invokes what a node
    /// declared in its connect (`node.invoke` answers "command not declared by node" otherwise,
    /// src/gateway/server-methods/nodes.ts@540e1d3e `isNodeCommandAllowed`).
    public func declaredCommands() async throws -> [String] {
        try await declaration()?.commands ?? []
    }

    /// The first node connect, or `nil` when none came within the step deadline (noted in the
    /// transcript).
    private func declaration() async throws -> ConnectAttempt? {
        do {
            return try await nextConnect(role: .node, "the client's first node connect (its declared commands)", from: .start)
        } catch let failure as ScenarioFailure {
            note("no node connect to read declared commands from: \(failure.message)")
            return nil
        }
    }

    /// Why a client does not declare `missing`, for an `unsupported` message.
    private func undeclared(_ missing: [String], connect: ConnectAttempt?) -> String {
        let names = missing.joined(separator: ", ")
        guard connect != nil else {
            return "the client sent no node connect within \(Self.format(stepTimeout)), so it declares no commands (needs \(names))"
        }
        return "the client does not declare \(missing.count == 1 ? "the command" : "the commands") \(names)"
    }

    /// Requires the client's node to declare every one of `commands` in its `connect`: a real
    /// Gateway never invokes an undeclared command, so a scenario that needs one is
    /// `unsupported` for a client that does not declare it. Decided from the first node connect,
    /// admitted or not, before waiting for a session or a result.
    /// - Throws: `ScenarioUnsupported` naming the missing commands.
    public func requireDeclared(_ commands: String...) async throws {
        let connect = try await declaration()
        let declared = Set(connect?.commands ?? [])
        let missing = commands.filter { !declared.contains($0) }
        guard missing.isEmpty else { try unsupported(undeclared(missing, connect: connect)) }
    }

    /// The names of the built-in probe commands (``ProbeCommand/readOnly``), as a scenario's
    /// `needsCommands` group: a client that declares none of them needs `--probe-command`.
    public static let probeCommands = ProbeCommand.readOnly.map(\.name)

    /// The probes this run may use, in order: `--probe-command` first, then those the client's
    /// adapter named in its hello (`probeCommands`), then the built-in ones; a name only once.
    public var probeCandidates: [ProbeCommand] {
        var candidates: [ProbeCommand] = []
        for probe in configuredProbeCommands + client.announcedProbeCommands + ProbeCommand.readOnly
        where !candidates.contains(where: { $0.name == probe.name }) {
            candidates.append(probe)
        }
        return candidates
    }

    /// A declared command to invoke as a probe ("is the client still answering on this socket?"):
    /// the first of ``probeCandidates`` the node declares (invoke it with ``probeParams(for:)``).
    /// Decided from the first node connect, before waiting for a session.
    /// - Throws: `ScenarioUnsupported` when it declares none of them, saying what to add.
    public func probeCommand() async throws -> String {
        let connect = try await declaration()
        let declared = Set(connect?.commands ?? [])
        let names = probeCandidates.map(\.name)
        guard let command = names.first(where: declared.contains) else {
            guard connect != nil else { try unsupported(undeclared(names, connect: nil)) }
            try unsupported("the client declares none of \(names.joined(separator: ", ")) to probe it with; name a read-only "
                            + "command it declares with --probe-command NAME[=PARAMS]")
        }
        return command
    }

    /// The `params` to invoke the probe `command` with: those given with `--probe-command` or in
    /// the adapter's hello, or an empty object.
    public func probeParams(for command: String) -> JSONValue {
        probeCandidates.first { $0.name == command }?.params ?? .object([:])
    }

    // MARK: - Pairing

    /// Approves the newest pending request of `deviceId` as an all-powerful operator. When the
    /// client superseded it in the meantime (its other session asking too), the replacement is
    /// approved.
    /// - Returns: the approved request.
    /// - Throws: `ScenarioFailure` when the device has no pending request to approve.
    @discardableResult
    public func approveNewest(deviceId: String, on gateway: Gateway? = nil) async throws -> PairingRequestInfo {
        let gateway = gateway ?? self.gateway
        var problem = "no pending request of the device"
        for _ in 0..<5 {
            guard let request = await gateway.pendingPairingRequests().last(where: { $0.deviceId == deviceId }) else { break }
            do {
                try await gateway.approve(requestId: request.requestId)
                note("approved pairing request \(request.requestId) of \(deviceId)")
                return request
            } catch {
                problem = "\(error)"
            }
        }
        try fail("could not approve a pending request of \(deviceId)", expected: "a pending pairing request", actual: problem)
    }

    /// Pairs a fresh client: waits for its first pairing request, approves it and lets the client
    /// reconnect (by itself, or with the `connect` stimulus when it does not).
    /// - Returns: the device's first node session.
    public func pairClient() async throws -> SessionInfo {
        let request = try await firstPairingRequest()
        let deviceId = request.deviceId
        let cursor = mark()
        try await approveNewest(deviceId: deviceId)
        return try await sessionWithConnectFallback(device: deviceId, from: cursor, "a node session of \(deviceId) after its approval")
    }

    // MARK: - What the client shows and answers

    /// Asks the client whether it shows what `stimulus` describes (`expect-sessions`,
    /// `expect-voice-wake-triggers`, `expect-transcript`, ...): an `error` answer fails the run
    /// with `message`, the stimulus as what was expected and what the client shows instead.
    public func expectClientShows(_ stimulus: Stimulus, _ message: String) async throws {
        if case .error(let shown) = try await client.reply(to: stimulus) {
            try fail(message, expected: stimulus.description, actual: shown)
        }
    }

    /// Sends `stimulus` and requires the client to refuse it (any answer but `ok`): `message`
    /// names what accepting it would mean (`the client accepted a 51st queued message`).
    /// - Parameter expected: the refusal that was expected, for the report.
    /// - Returns: the client's answer.
    @discardableResult
    public func expectClientRefuses(_ stimulus: Stimulus, _ message: String, expected: String) async throws -> StimulusReply {
        let reply = try await client.reply(to: stimulus)
        try expect(reply != .ok, message, expected: expected, actual: "ok")
        return reply
    }

    // MARK: - The first frame

    /// Waits for the first frame the client sends on `connectionId` and requires it to be a
    /// request frame (failure: `the first frame is not a request`, with the frame as sent).
    /// - Returns: the request.
    public func firstRequest(on connectionId: String) async throws -> RequestFrame {
        let first = try await waitForEvent(EventMatcher<Frame?>("the first frame on \(connectionId)") { event in
            if case .frameIn(let id, let frame, _) = event, id == connectionId { .some(frame) } else { nil }
        })
        guard case .request(let request)? = first else {
            try fail("the first frame is not a request", expected: "a req frame",
                     actual: first.map { "\($0.json.jsonString.prefix(200))" } ?? "not a valid frame")
        }
        return request
    }

    /// Requires `attempt` to fit the profile's closed connect schema
    /// (``GatewayProfile/connectSchema``): a member it does not define, or one of the wrong type,
    /// fails the run naming the connect and the violation.
    public func expectClosedConnectSchema(_ attempt: ConnectAttempt) throws {
        if case .failure(let violation) = ConnectParams.validate(attempt.params, rules: profile.connectSchema) {
            try fail("the \(attempt.role) connect on \(attempt.connectionId) leaves the closed connect schema",
                     expected: "params the schema admits", actual: violation.message)
        }
    }

    // MARK: - Declared commands by family

    /// For each of `families` (command name prefixes: `canvas.`, `camera.`), the first declared
    /// command of that family in name order; families the client declares nothing of are left out.
    /// - Throws: `ScenarioUnsupported` when it declares a command of none of them.
    public func declaredCommands(oneOfEach families: [String]) async throws -> [String] {
        let declared = try await declaredCommands()
        let commands = families.compactMap { family in declared.filter { $0.hasPrefix(family) }.sorted().first }
        guard !commands.isEmpty else {
            try unsupported("the client declares no \(families.map { "\($0)*" }.joined(separator: ", ")) command")
        }
        return commands
    }

    // MARK: - Invokes that must succeed

    /// Invokes `command` on `nodeId` (with the step deadline) and requires an `ok:true` result.
    /// - Parameter what: names the invoke in the failure message (`"\(what) did not succeed"`),
    ///   which shows the outcome (no result, or the error the client answered).
    /// - Returns: the result.
    @discardableResult
    public func expectInvokeSucceeds(_ command: String, nodeId: String, params: JSONValue? = nil, idempotencyKey: String? = nil,
                                     _ what: String) async throws -> NodeInvokeResult {
        let outcome = await gateway.invoke(nodeId: nodeId, command: command, params: params, idempotencyKey: idempotencyKey,
                                           wait: stepTimeout)
        guard case .result(let result) = outcome, result.ok else {
            try fail("\(what) did not succeed", expected: "ok:true", actual: "\(outcome)")
        }
        return result
    }

    // MARK: - Pushes the Gateway sent

    /// The payload of the newest push of `pushType` (`alert`, `background`) the Gateway sent to
    /// `nodeId`, or a failure `the Gateway sent <what>` (expected: a push of that type).
    public func lastPushPayload(_ pushType: String, to nodeId: String, _ what: String) async throws -> JSONValue {
        let pushes = await gateway.pushDeliveries().filter { $0.nodeId == nodeId && $0.pushType == pushType }
        return try required(pushes.last?.payload, "the Gateway sent \(what)", expected: "an \(pushType) push", actual: "none")
    }

    // MARK: - Beacons

    /// The `payloadJSON` of the beacon `beacon` (a `node.presence.alive` node event) read as a
    /// JSON object; a failure says whether it was not a string or not a JSON object.
    public func beaconPayload(_ beacon: ClientRequest) throws -> JSONValue {
        let shown = String(beacon.params.jsonString.prefix(300))
        let text = try required(beacon.params["payloadJSON"]?.stringValue, "the beacon's payloadJSON is not a string",
                                expected: "payloadJSON: a JSON object as a string", actual: shown)
        guard let payload = try? JSONValue(parsing: text), payload.objectValue != nil else {
            try fail("the beacon's payloadJSON is not a JSON object", expected: "a JSON object as text", actual: String(text.prefix(200)))
        }
        return payload
    }

    // MARK: - Watch connects

    /// Requires the Watch connect `answer` to have presented `credential` (`bootstrapToken`,
    /// `deviceToken`) and opened a session (200); `what` names the connect (`the pairing connect`).
    public func expectWatchConnect(_ answer: WatchExchangeInfo, credential: String, _ what: String) throws {
        try expectEqual(answer.credential ?? "none", credential, "the credential of \(what)")
        try expectEqual(answer.status, 200, "the status of \(what)")
    }

    /// Waits from `cursor` for the Watch's next connect to be answered (`what` names it) and
    /// requires it to present `credential` and open a session (see ``expectWatchConnect(_:credential:_:)``).
    /// - Returns: the answer.
    @discardableResult
    public func expectWatchConnect(_ what: String, credential: String, from cursor: EventCursor,
                                   within: Duration? = nil) async throws -> WatchExchangeInfo {
        let answer = try await waitForEvent(.watchAnswer(WatchDirectRules.connectPath).named(what), within: within, from: cursor)
        try expectWatchConnect(answer, credential: credential, what)
        return answer
    }

    // MARK: - Requests the client did not send

    /// Requires that `matcher` matched no event from `cursor` on, so far (no waiting: for what
    /// the client sent before a closing round trip); `message` says what a match means, and the
    /// failure lists the matches.
    /// - Parameter expected: what was expected instead, for the report.
    public func expectNoMatch<T: Sendable>(_ matcher: EventMatcher<T>, from cursor: EventCursor, _ message: String,
                                           expected: String, on gateway: Gateway? = nil) throws {
        try expectNone(matches(matcher, from: cursor, on: gateway), message, expected: expected)
    }

    /// Requires that the client sent no `method` request from `cursor` on (`message`: what one
    /// means, `the client wrote its triggers back`); the failure lists those it sent.
    public func expectNoRequest(_ method: GatewayMethod, from cursor: EventCursor, _ message: String, on gateway: Gateway? = nil) throws {
        try expectNone(requests(method, from: cursor, on: gateway), message, expected: "no \(method.rawValue)")
    }

    /// Requires that `count` `chat.send` requests from `cursor` on carried one of `texts`
    /// (`message` names the count: `how many chat.send requests carried the two messages`).
    public func expectChatSends(_ count: Int, carrying texts: [String], from cursor: EventCursor, _ message: String) throws {
        let sends = chatSends(from: cursor).filter { $0.text.map(texts.contains) ?? false }
        try expectEqual(sends.count, count, message)
    }

    // MARK: - Presence triggers

    /// Requires the beacon payload `payload` to name a trigger the Gateway knows
    /// (``NodeEventRules/presenceTriggers``: `background`, `silent_push`, ...).
    public func expectKnownPresenceTrigger(_ payload: JSONValue) throws {
        let valid = NodeEventRules.presenceTriggers
        let trigger = payload["trigger"]?.stringValue
        try expect(trigger.map(valid.contains) ?? false, "the beacon names a known trigger",
                   expected: "trigger one of \(valid.sorted().joined(separator: ", "))",
                   actual: trigger.map { "trigger \"\($0)\"" } ?? "no trigger")
    }

    // MARK: - Tokens a session presented

    /// The device token `session` authenticated with.
    /// - Throws: `ScenarioUnsupported` when it authenticated otherwise (a shared token, a
    ///   bootstrap token): the scenario's rule is about a client that keeps a device token.
    public func presentedDeviceToken(of session: SessionInfo) throws -> String {
        guard session.authMethod == "device-token", let token = session.presentedToken else {
            try unsupported("the client's \(session.role.rawValue) session does not use a device token (\(session.authMethod))")
        }
        return token
    }

    // MARK: - Refused requests and their resends

    /// Waits from `cursor` for the Gateway to refuse a request of the client on `connectionId`
    /// with `reason` in the error's `details` (a drain's `UNAVAILABLE`), and reads which method
    /// the refused request called.
    /// - Parameter what: how the failure message names the refusal.
    /// - Returns: the method (`?` when the request is not in the log).
    public func refusedRequest(on connectionId: String, reason: String, from cursor: EventCursor, _ what: String) async throws -> String {
        let requestId = try await waitForEvent(what, from: cursor) { event -> String? in
            guard case .frameOut(let id, .response(let response)) = event, id == connectionId, !response.ok,
                  response.error?.details?["reason"]?.stringValue == reason else { return nil }
            return response.id
        }
        return matches(.anyRequest, from: cursor).first { $0.connectionId == connectionId && $0.request.id == requestId }?
            .request.method ?? "?"
    }

    /// Requires that the client sent `method` again after a refusal with `reason` (in the error's
    /// `details`), and every time no sooner than `minimumMs` after that refusal (Gateway clock,
    /// read from the transcript: each resend measured from the refusal just before it).
    public func expectResendsWait(_ method: String, afterRefusalsWith reason: String, atLeastMs minimumMs: Int64,
                                  on gateway: Gateway? = nil) throws {
        var lastRefusalMs: Int64?
        var measured = 0
        var requestMethods: [String: String] = [:]
        for entry in (gateway ?? self.gateway).transcript.entries {
            guard let message = entry.message, let id = message["id"]?.stringValue else { continue }
            let key = "\(entry.connectionId) \(id)"
            switch entry.kind {
            case .inbound where message["type"]?.stringValue == "req":
                let sent = message["method"]?.stringValue ?? ""
                requestMethods[key] = sent
                guard sent == method, let refused = lastRefusalMs else { continue }
                measured += 1
                try expect(entry.gatewayMs - refused >= minimumMs,
                           "the client sent \(method) again sooner than \(minimumMs) ms after a refusal with reason \(reason)",
                           expected: "at least \(minimumMs) ms after the refusal", actual: "\(entry.gatewayMs - refused) ms")
                lastRefusalMs = nil
            case .outbound where message["type"]?.stringValue == "res" && requestMethods[key] == method:
                if message["error"]?["details"]?["reason"]?.stringValue == reason { lastRefusalMs = entry.gatewayMs }
            default:
                break
            }
        }
        try expect(measured > 0, "the client did not send \(method) again after the refusal with reason \(reason)",
                   expected: "a resend of \(method)", actual: "none")
    }
}
