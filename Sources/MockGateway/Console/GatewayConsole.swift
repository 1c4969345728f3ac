import Foundation
import GatewayProtocol

/// The operator console of `harness serve`: takes one line, carries it out on a Gateway as an
/// all-powerful operator surface of its own (what it resolves counts as "another surface",
/// named `console`), and returns the reply as a typed value.
///
/// ```swift
/// let console = GatewayConsole(gateway: gateway)
/// let reply = await console.handle("approve latest")
/// print(reply?.rendered(.json) ?? "")
/// ```
///
/// `latest` is resolved from the Gateway's own event log when the command runs: the newest
/// still-pending pairing request, the most recently connected node that is still connected, the
/// most recently created approval or question.
public struct GatewayConsole: Sendable {
    /// The surface name the console resolves approvals and questions as.
    public static let surface = "console"

    /// The Gateway it drives.
    public let gateway: Gateway
    /// How long `invoke` waits for the node's answer, in real time.
    public var invokeWait: Duration
    /// The `timeoutMs` sent with `invoke` (the Gateway gives up after it on its clock).
    public var invokeTimeoutMs: Int
    /// Draws a setup code's QR code (and writes the PNG file when a path is given), or returns
    /// `nil` to issue the code without one; `nil` means no QR codes (`harness serve` installs one
    /// backed by libqrencode).
    public var qrRenderer: (@Sendable (_ text: String, _ pngFile: String?) throws -> SetupCodeQR?)?

    /// Creates a console for `gateway`.
    public init(gateway: Gateway, invokeWait: Duration = .seconds(30), invokeTimeoutMs: Int = 30_000,
                qrRenderer: (@Sendable (_ text: String, _ pngFile: String?) throws -> SetupCodeQR?)? = nil) {
        self.gateway = gateway
        self.invokeWait = invokeWait
        self.invokeTimeoutMs = invokeTimeoutMs
        self.qrRenderer = qrRenderer
    }

    /// Parses and runs one line.
    /// - Returns: the reply, or `nil` for a blank line or a `#` comment.
    public func handle(_ line: String) async -> ConsoleReply? {
        let command: ConsoleCommand
        do {
            guard let parsed = try ConsoleCommand.parse(line) else { return nil }
            command = parsed
        } catch {
            let name = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? ""
            return ConsoleReply(command: name, outcome: .failure(error))
        }
        // The reply names the command as typed (`shutdown` stays `shutdown`, `exit` stays `exit`).
        let typed = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? command.name
        return ConsoleReply(command: typed, outcome: await run(command))
    }

    /// Runs a parsed command.
    public func run(_ command: ConsoleCommand) async -> Result<ConsoleResult, ConsoleError> {
        do {
            return .success(try await execute(command))
        } catch {
            return .failure(error)
        }
    }

    private func execute(_ command: ConsoleCommand) async throws(ConsoleError) -> ConsoleResult {
        switch command {
        case .pending:
            return .pending(await gateway.pendingPairingRequests())
        case .devices:
            let connected = Set(await gateway.connectedNodes().map(\.nodeId))
            return .devices(await gateway.pairedDevices(), connectedNodeIds: connected)
        case .nodes:
            return .nodes(await gateway.connectedNodes())
        case .connections:
            return .connections(await gateway.openConnections())
        case .status:
            return .status(ConsoleStatus(
                url: gateway.url, devices: await gateway.pairedDevices().count, nodes: await gateway.connectedNodes().count,
                pending: await gateway.pendingPairingRequests().count, connections: await gateway.openConnections().count,
                faults: await gateway.faultStatus()))
        case .approve(let reference):
            let requestId = try await pairingRequestId(reference, command: "approve")
            let device = try await gatewayCall { () async throws(GatewayError) in try await gateway.approve(requestId: requestId) }
            return .approved(requestId: requestId, device: device)
        case .reject(let reference):
            let requestId = try await pairingRequestId(reference, command: "reject")
            let deviceId = await gateway.pendingPairingRequests().first { $0.requestId == requestId }?.deviceId
            try await gatewayCall { () async throws(GatewayError) in try await gateway.reject(requestId: requestId) }
            return .rejected(requestId: requestId, deviceId: deviceId)
        case .remove(let text):
            let deviceId = try await self.deviceId(text)
            try await gatewayCall { () async throws(GatewayError) in try await gateway.removeDevice(deviceId) }
            return .removed(deviceId: deviceId)
        case .revoke(let text, let role):
            let deviceId = try await self.deviceId(text)
            try await gatewayCall { () async throws(GatewayError) in try await gateway.revokeToken(deviceId: deviceId, role: role) }
            return .revoked(deviceId: deviceId, role: role)
        case .invoke(let reference, let name, let params):
            let nodeId = try await self.nodeId(reference)
            switch await gateway.invokeAndWait(nodeId: nodeId, command: name, params: params, timeoutMs: invokeTimeoutMs, wait: invokeWait) {
            case .result(let result):
                return .invoked(nodeId: nodeId, command: name, result: result)
            case .timedOut:
                throw ConsoleError("invoke: \(name) on \(nodeId) timed out without a result")
            case .nodeDisconnected:
                throw ConsoleError("invoke: node \(nodeId) is not connected (or disconnected before answering)")
            }
        case .setupCode(let requested, let pngFile):
            let url = gateway.advertisedURL
            if SetupURLExposure(url: url) == .publicPlaintext {
                // As `openclaw qr`: no code at all for plain ws:// off the private networks.
                throw ConsoleError("""
                    setup-code: \(url) is plain ws:// to an address that is neither loopback nor on a private network; \
                    the real Gateway issues no setup code for it, since anyone on the way could read the bootstrap token. \
                    Serve with --tls, or give --url with a LAN address (10.x, 172.16-31.x, 192.168.x or a .local name)
                    """)
            }
            if pngFile != nil, qrRenderer == nil { throw ConsoleError("setup-code: this console cannot draw QR codes") }
            // No profile: `full`. On plain ws:// to a LAN address `full` (asked for or not) becomes
            // `limited`, and the reply says so (`accessDowngraded`), as `device.pair.setupCode` does.
            let name = requested ?? "full"
            let issued = await gateway.issueSetupCode(profile: BootstrapProfile.named(name))
            var qr: SetupCodeQR?
            if let qrRenderer {
                do {
                    qr = try qrRenderer(issued.code.encoded, pngFile)
                } catch {
                    throw ConsoleError("setup-code: the code was issued, but its QR code failed: \(error)")
                }
            }
            return .setupCode(issued, profile: issued.accessDowngraded ? "limited" : name, qr: qr)
        case .advance(let seconds):
            await gateway.advance(by: .milliseconds(Int64((seconds * 1000).rounded())))
            return .advanced(seconds: seconds, nowMs: gateway.clock.nowMs)
        case .shutdown:
            await gateway.restart()
            return .restarted
        case .restartStayingDown(let expectedMs):
            await gateway.beginRestart(restartExpectedMs: expectedMs)
            return .faultArmed("down after a restart (shutdown with restartExpectedMs \(expectedMs), 1012); new connections are dropped until resume")
        case .resume:
            await gateway.resumeAfterRestart()
            return .faultArmed("accepting connections again")
        case .help(let name):
            guard let name else { return .help(ConsoleCommandHelp.all) }
            guard let entry = ConsoleCommandHelp.named(name) else {
                throw ConsoleError("help: unknown command '\(name)' (type 'help' for the list)")
            }
            return .helpCommand(entry)
        case .quit:
            return .quitting
        case .approval(let text, let decisions, let expiresIn):
            let record = try await gatewayCall { () async throws(GatewayError) in
                try await gateway.createApproval(command: text, allowedDecisions: decisions,
                                                 expiresIn: expiresIn.map(Self.duration))
            }
            return .approvalCreated(record)
        case .resolveApproval(let reference, let decision):
            let id = try recordId(reference, kind: "approval")
            switch await gateway.resolveApproval(id: id, decision: decision, surface: Self.surface) {
            case .applied(let record): return .approvalResolved(applied: true, record: record)
            case .alreadyTerminal(let record): return .approvalResolved(applied: false, record: record)
            case .notFound: throw ConsoleError("resolve-approval: approval '\(id)' not found")
            }
        case .expireApproval(let reference):
            let id = try recordId(reference, kind: "approval")
            try await gatewayCall { () async throws(GatewayError) in try await gateway.expireApproval(id: id) }
            guard let record = await gateway.approval(id: id) else { throw ConsoleError("expire-approval: approval '\(id)' not found") }
            return .approvalResolved(applied: true, record: record)
        case .raceApproval(let reference, let decision, let clientFirst, let surface):
            let id = try recordId(reference, kind: "approval")
            await gateway.raceApproval(id: id, surfaceDecision: decision, order: clientFirst ? .clientFirst : .surfaceFirst,
                                       surface: surface)
            return .faultArmed("when the client resolves approval \(id), \(surface) answers \(decision.rawValue) "
                + (clientFirst ? "right after it" : "just before it"))
        case .question(let prompt, let options, let multiSelect, let allowOther, let expiresIn):
            let record = try await gatewayCall { () async throws(GatewayError) in
                try await gateway.createQuestion(prompt, options: options, multiSelect: multiSelect, allowOther: allowOther,
                                                 expiresIn: expiresIn.map(Self.duration))
            }
            return .questionCreated(record)
        case .answerQuestion(let reference, let answers):
            let id = try recordId(reference, kind: "question")
            let byQuestion = try await questionAnswers(answers, question: id, command: "answer-question")
            let record = try await gatewayCall { () async throws(GatewayError) in
                try await gateway.answerQuestion(id: id, answers: byQuestion, surface: Self.surface)
            }
            return .questionResolved(record)
        case .drain(let drain):
            if let drain { await gateway.beginDrain(drain) } else { await gateway.endDrain() }
            return .drained(drain)
        case .wake(let reference, let reason):
            let nodeId = try await pushNodeId(reference)
            let attempt = await gateway.wakeNode(nodeId: nodeId, reason: reason ?? PushRelay.defaultWakeReason)
            guard attempt.delivery != nil else { throw ConsoleError("wake: \(attempt.summary)") }
            return .woken(attempt)
        case .changeAuth(let mode):
            await gateway.changeSharedSecret(mode)
            return .faultArmed("the shared secret changed (mode \(mode.name)); sessions that depended on the old one "
                + "were closed with 4001 gateway auth changed")
        case .cancelQuestion(let reference):
            let id = try recordId(reference, kind: "question")
            let record = try await gatewayCall { () async throws(GatewayError) in
                try await gateway.cancelQuestion(id: id, surface: Self.surface)
            }
            return .questionResolved(record)
        case .chat(let chat):
            return .chat(await chat.execute(on: gateway))
        case .expireQuestion(let reference):
            let id = try recordId(reference, kind: "question")
            let record = try await gatewayCall { () async throws(GatewayError) in try await gateway.expireQuestion(id: id) }
            return .questionResolved(record)
        case .raceQuestion(let reference, let answers, let clientFirst, let surface):
            let id = try recordId(reference, kind: "question")
            let byQuestion = try await questionAnswers(answers, question: id, command: "race-question")
            await gateway.raceQuestion(id: id, surfaceAnswers: byQuestion, order: clientFirst ? .clientFirst : .surfaceFirst,
                                       surface: surface)
            let shown = byQuestion.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.joined(separator: ","))" }.joined(separator: " ")
            return .faultArmed("when the client resolves question \(id), \(surface) answers \(shown) "
                + (clientFirst ? "right after it" : "just before it"))
        case .dropNext(let method, let keep):
            await gateway.dropNextResponse(to: method, cutConnection: !keep)
            return .faultArmed("the next response to \(method) is dropped" + (keep ? "" : ", then its connection is cut"))
        case .delay(let milliseconds):
            await gateway.delayResponses(by: milliseconds.map { .milliseconds($0) })
            return .faultArmed(milliseconds.map { "every response is delayed by \($0) ms" } ?? "responses are no longer delayed")
        case .stopTicks:
            await gateway.stopTicks()
            return .faultArmed("ticks stopped")
        case .resumeTicks:
            await gateway.resumeTicks()
            return .faultArmed("ticks resumed")
        case .skipSeq(let count):
            await gateway.skipSequenceNumbers(count)
            return .faultArmed("the next seq of every open connection skips \(count)")
        case .starting(let on):
            await gateway.setStartingUp(on)
            return .faultArmed(on ? "connects are answered UNAVAILABLE and closed with 1013" : "connects are accepted again")
        case .reset(let reference):
            let connectionId = try await self.connectionId(reference, command: "reset")
            await gateway.reset(connectionId: connectionId)
            return .faultArmed("connection \(connectionId) reset")
        case .close(let reference, let code, let reason):
            let connectionId = try await self.connectionId(reference, command: "close")
            await gateway.close(connectionId: connectionId, code: code, reason: reason)
            return .faultArmed("connection \(connectionId) closed with \(code)")
        case .sendBinary(let count):
            await gateway.sendNextEventsAsBinary(count)
            return .faultArmed("the next \(count) event frames go as binary messages")
        case .fragment(let count):
            await gateway.fragmentNextEvents(count)
            return .faultArmed("the next \(count) event frames go in three fragments with pings between them")
        case .presenceReply(let handled, let reason):
            await gateway.forceNextPresenceReply(handled: handled, reason: reason)
            return .faultArmed("the next node.presence.alive is answered handled:\(handled) reason:\(reason)")
        case .event(let reference, let name, let payload):
            if let reference {
                let connectionId = try await self.connectionId(reference, command: "event")
                await gateway.sendEvent(name, payload: payload, to: connectionId)
                return .eventSent(name: name, connectionIds: [connectionId])
            }
            let sessions = await gateway.openConnections().filter { $0.role != nil && !$0.closing }.map(\.connectionId)
            await gateway.broadcastEvent(name, payload: payload)
            return .eventSent(name: name, connectionIds: sessions)
        }
    }

    private static func duration(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    /// Runs a scripting call, turning its `GatewayError` into the console's one-line error.
    @discardableResult
    private func gatewayCall<Value: Sendable>(_ body: () async throws(GatewayError) -> Value) async throws(ConsoleError) -> Value {
        do {
            return try await body()
        } catch {
            throw ConsoleError(error.description)
        }
    }

    // MARK: - latest

    /// `text` resolved among `candidates`: an exact id, or the one candidate it is a prefix of
    /// (the console prints long ids cut short with `…`, which is ignored). Unknown text is
    /// returned as typed, for the Gateway's own error.
    static func resolvePrefix(_ text: String, among candidates: [String], kind: String) throws(ConsoleError) -> String {
        var prefix = text
        while prefix.hasSuffix("…") { prefix.removeLast() }
        if candidates.contains(prefix) { return prefix }
        let matches = Set(candidates.filter { !prefix.isEmpty && $0.hasPrefix(prefix) }).sorted()
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 {
            throw ConsoleError("'\(text)' matches \(matches.count) \(kind)s (\(matches.map(ConsoleText.short).joined(separator: ", "))); type more of it")
        }
        return prefix
    }

    /// The request id: `latest` is the newest request still pending, nothing is the only one.
    func pairingRequestId(_ reference: ConsoleReference?, command: String = "approve") async throws(ConsoleError) -> String {
        let pending = await gateway.pendingPairingRequests()
        guard let reference else {
            switch pending.count {
            case 0: throw ConsoleError("no pending pairing request")
            case 1: return pending[0].requestId
            default:
                throw ConsoleError("\(pending.count) pairing requests are pending: \(command) one by id (see pending), or \(command) latest")
            }
        }
        if case .id(let id) = reference { return try Self.resolvePrefix(id, among: pending.map(\.requestId), kind: "pending request") }
        guard !pending.isEmpty else { throw ConsoleError("no pending pairing request") }
        var created: [String: Int] = [:]
        for (position, event) in gateway.events.all.enumerated() {
            switch event {
            case .pairingRequested(let info): created[info.requestId] = position
            case .pairingSuperseded(_, let newRequestId, _): created[newRequestId] = max(created[newRequestId] ?? -1, position)
            default: break
            }
        }
        // Pending requests come oldest first; the log position breaks ties between equal timestamps.
        let newest = pending.enumerated().max { lhs, rhs in
            (created[lhs.element.requestId] ?? -1, lhs.offset) < (created[rhs.element.requestId] ?? -1, rhs.offset)
        }
        return newest?.element.requestId ?? pending[pending.count - 1].requestId
    }

    /// A paired device id: a prefix of one, or `latest` for the most recently approved device.
    func deviceId(_ text: String) async throws(ConsoleError) -> String {
        let devices = await gateway.pairedDevices()
        if text == "latest" {
            guard let newest = devices.first else { throw ConsoleError("no paired devices") }
            return newest.deviceId
        }
        return try Self.resolvePrefix(text, among: devices.map(\.deviceId), kind: "device")
    }

    /// The node id, resolving `latest` to the most recently connected node that is still connected.
    func nodeId(_ reference: ConsoleReference) async throws(ConsoleError) -> String {
        let connected = Set(await gateway.connectedNodes().map(\.nodeId))
        if case .id(let id) = reference { return try Self.resolvePrefix(id, among: connected.sorted(), kind: "node") }
        for event in gateway.events.all.reversed() {
            if case .nodeConnected(let nodeId, _) = event, connected.contains(nodeId) { return nodeId }
        }
        throw ConsoleError("no connected node")
    }

    /// The node id of `wake`: a prefix of a node with a push registration, or `latest` for the
    /// node whose kept registration is the newest. Unknown text is returned as typed (the wake
    /// then reports that it has no registration).
    func pushNodeId(_ reference: ConsoleReference) async throws(ConsoleError) -> String {
        let registered = await gateway.pushRegisteredNodeIds()
        if case .id(let id) = reference { return try Self.resolvePrefix(id, among: registered, kind: "registered node") }
        for event in gateway.events.all.reversed() {
            if case .pushRegistered(let nodeId, _, true, _) = event, registered.contains(nodeId) { return nodeId }
        }
        throw ConsoleError("wake: no node has a push registration (a node registers with node.event push.apns.register)")
    }

    /// The connection id, resolving `latest` to the most recently opened connection still open.
    func connectionId(_ reference: ConsoleReference, command: String) async throws(ConsoleError) -> String {
        let open = await gateway.openConnections().filter { !$0.closing }.map(\.connectionId)
        if case .id(let id) = reference {
            let resolved = try Self.resolvePrefix(id, among: open, kind: "connection")
            guard open.contains(resolved) else { throw ConsoleError("\(command): no open connection '\(id)' (see connections)") }
            return resolved
        }
        guard let newest = open.last else { throw ConsoleError("\(command): no open connection") }
        return newest
    }

    /// Answers by question id: a plain list goes to the question's first item.
    func questionAnswers(_ answers: ConsoleAnswers, question id: String, command: String) async throws(ConsoleError) -> [String: [String]] {
        switch answers {
        case .byQuestion(let values):
            return values
        case .firstQuestion(let values):
            guard let first = await gateway.question(id: id)?.questions.first?.questionId else {
                throw ConsoleError("\(command): question '\(id)' was not found")
            }
            return [first: values]
        }
    }

    /// The record id, resolving `latest` to the most recently created approval or question.
    func recordId(_ reference: ConsoleReference, kind: String) throws(ConsoleError) -> String {
        if case .id(let id) = reference { return id }
        for event in gateway.events.all.reversed() {
            if case .operatorRecord(let record) = event, record.kind == kind, record.action == .requested { return record.id }
        }
        throw ConsoleError("no \(kind) has been created yet")
    }
}
