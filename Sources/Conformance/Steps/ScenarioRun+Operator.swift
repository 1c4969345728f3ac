import GatewayProtocol
import MockGateway

/// Steps of the approval and question scenarios (docs/protocol.md §7, §7.7): opening a
/// record with the Gateway's scripting API, waiting until its events reached the client's
/// operator session, and reading what the client tried.
extension ScenarioRun {
    /// Waits until the Gateway sent the event `name` about record `id` to `session`.
    /// - Parameters:
    ///   - status: when given, only an event whose payload carries this `status` counts.
    ///   - gateway: the Gateway `session` belongs to (the run's by default).
    ///   - sessionName: how the failure message names `session`.
    public func awaitOperatorEvent(
        _ name: String, id: String, status: String? = nil, to session: SessionInfo,
        on gateway: Gateway? = nil, sessionName: String = "operator session"
    ) async throws {
        let sessionId = session.connectionId
        let what = status.map { "\(name) {status: \($0)}" } ?? name
        try await waitForEvent("\(what) for \(id) on the \(sessionName)", on: gateway, where: { event in
            guard case .frameOut(let connectionId, .event(let frame)) = event, connectionId == sessionId else { return false }
            return frame.event == name && frame.payload?["id"]?.stringValue == id
                && (status == nil || frame.payload?["status"]?.stringValue == status)
        })
    }

    /// Creates an exec approval with the scripting API and waits until its prompt
    /// (`exec.approval.requested`) reached `session`.
    /// - Returns: the approval's id.
    public func openApproval(
        command: String, allowedDecisions: [ApprovalDecision] = ApprovalDecision.allCases,
        expiresIn: Duration, to session: SessionInfo, on gateway: Gateway? = nil, sessionName: String = "operator session"
    ) async throws -> String {
        let record = try await (gateway ?? self.gateway).createApproval(
            command: command, allowedDecisions: allowedDecisions, expiresIn: expiresIn)
        try await awaitOperatorEvent(GatewayEventName.execApprovalRequested.rawValue, id: record.id, to: session, on: gateway, sessionName: sessionName)
        return record.id
    }

    /// Creates a question with the scripting API and waits until it (`question.requested`)
    /// reached `session`.
    /// - Parameter expiresIn: how long it stays open (15 minutes unless a scenario needs it to
    ///   expire).
    /// - Returns: the question's id.
    public func openQuestion(
        _ prompt: String, options: [String], multiSelect: Bool = false, allowOther: Bool = false,
        expiresIn: Duration = .seconds(900), to session: SessionInfo
    ) async throws -> String {
        let question = try await gateway.createQuestion(prompt, options: options, multiSelect: multiSelect,
                                                        allowOther: allowOther, expiresIn: expiresIn)
        try await awaitOperatorEvent(GatewayEventName.questionRequested.rawValue, id: question.id, to: session)
        return question.id
    }

    /// The resolve attempts for record `id` that came over the wire (the client is the only wire
    /// caller; the scripting API's own attempts are left out).
    public func clientResolveAttempts(id: String, on gateway: Gateway? = nil) async -> [ResolveAttempt] {
        await (gateway ?? self.gateway).resolveAttempts().filter { $0.channel != .script && ($0.recordId ?? $0.requestedId) == id }
    }
}
