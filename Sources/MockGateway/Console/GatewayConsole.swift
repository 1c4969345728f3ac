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

    /// Creates a console for `gateway`.
    public init(gateway: Gateway, invokeWait: Duration = .seconds(30), invokeTimeoutMs: Int = 30_000) {
        self.gateway = gateway
        self.invokeWait = invokeWait
        self.invokeTimeoutMs = invokeTimeoutMs
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
        return ConsoleReply(command: command.name, outcome: await run(command))
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
        case .approve(let reference):
            let requestId = try await pairingRequestId(reference)
            let device = try await gatewayCall { () async throws(GatewayError) in try await gateway.approve(requestId: requestId) }
            return .approved(requestId: requestId, device: device)
        case .reject(let reference):
            let requestId = try await pairingRequestId(reference)
            let deviceId = await gateway.pendingPairingRequests().first { $0.requestId == requestId }?.deviceId
            try await gatewayCall { () async throws(GatewayError) in try await gateway.reject(requestId: requestId) }
            return .rejected(requestId: requestId, deviceId: deviceId)
        case .remove(let deviceId):
            try await gatewayCall { () async throws(GatewayError) in try await gateway.removeDevice(deviceId) }
            return .removed(deviceId: deviceId)
        case .revoke(let deviceId, let role):
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
        case .setupCode(let profile):
            return .setupCode(await gateway.issueSetupCode(profile: profile.flatMap(BootstrapProfile.named)))
        case .advance(let seconds):
            await gateway.advance(by: .milliseconds(Int64((seconds * 1000).rounded())))
            return .advanced(seconds: seconds, nowMs: gateway.clock.nowMs)
        case .shutdown:
            await gateway.restart()
            return .restarted
        case .help:
            return .help(ConsoleCommandHelp.all)
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
        case .question(let prompt, let options, let multiSelect, let allowOther, let expiresIn):
            let record = try await gatewayCall { () async throws(GatewayError) in
                try await gateway.createQuestion(prompt, options: options, multiSelect: multiSelect, allowOther: allowOther,
                                                 expiresIn: expiresIn.map(Self.duration))
            }
            return .questionCreated(record)
        case .answerQuestion(let reference, let answers):
            let id = try recordId(reference, kind: "question")
            let byQuestion: [String: [String]]
            switch answers {
            case .byQuestion(let values):
                byQuestion = values
            case .firstQuestion(let values):
                guard let first = await gateway.question(id: id)?.questions.first?.questionId else {
                    throw ConsoleError("answer-question: question '\(id)' was not found")
                }
                byQuestion = [first: values]
            }
            let record = try await gatewayCall { () async throws(GatewayError) in
                try await gateway.answerQuestion(id: id, answers: byQuestion, surface: Self.surface)
            }
            return .questionResolved(record)
        case .drain(let drain):
            if let drain { await gateway.beginDrain(drain) } else { await gateway.endDrain() }
            return .drained(drain)
        case .cancelQuestion(let reference):
            let id = try recordId(reference, kind: "question")
            let record = try await gatewayCall { () async throws(GatewayError) in
                try await gateway.cancelQuestion(id: id, surface: Self.surface)
            }
            return .questionResolved(record)
        case .chat(let chat):
            return .chat(await chat.execute(on: gateway))
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

    /// The request id, resolving `latest` to the newest request that is still pending.
    func pairingRequestId(_ reference: ConsoleReference) async throws(ConsoleError) -> String {
        if case .id(let id) = reference { return id }
        let pending = await gateway.pendingPairingRequests()
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

    /// The node id, resolving `latest` to the most recently connected node that is still connected.
    func nodeId(_ reference: ConsoleReference) async throws(ConsoleError) -> String {
        if case .id(let id) = reference { return id }
        let connected = Set(await gateway.connectedNodes().map(\.nodeId))
        for event in gateway.events.all.reversed() {
            if case .nodeConnected(let nodeId, _) = event, connected.contains(nodeId) { return nodeId }
        }
        throw ConsoleError("no connected node")
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
