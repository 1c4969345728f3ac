import Conformance
import GatewayProtocol
import MockGateway

/// Steps the approval and question scenarios share (approvals-and-questions.md A, B): finding the
/// client's operator session, opening a record with the Gateway's scripting API and waiting until
/// the record's events reached that session.
enum OperatorSteps {
    /// Waits for the client's operator session (`hello-ok` with role `operator`) on the run's Gateway.
    static func operatorSession(_ run: ScenarioRun) async throws -> SessionInfo {
        try await run.waitForEvent("the client's operator session (hello-ok with role operator)") { event in
            if case .sessionOpened(let info) = event, info.role == "operator" { info } else { nil }
        }
    }

    /// Waits until the Gateway sent the event `name` about record `id` to `session`.
    /// - Parameters:
    ///   - status: when given, only an event whose payload carries this `status` counts.
    ///   - gateway: the Gateway `session` belongs to (the run's by default).
    ///   - sessionName: how the failure message names `session`.
    static func awaitEvent(
        _ run: ScenarioRun, _ name: String, id: String, status: String? = nil, to session: SessionInfo,
        on gateway: Gateway? = nil, sessionName: String = "operator session"
    ) async throws {
        let sessionId = session.connectionId
        let what = status.map { "\(name) {status: \($0)}" } ?? name
        try await run.waitForEvent("\(what) for \(id) on the \(sessionName)", on: gateway, where: { event in
            guard case .frameOut(let connectionId, .event(let frame)) = event, connectionId == sessionId else { return false }
            return frame.event == name && frame.payload?["id"]?.stringValue == id
                && (status == nil || frame.payload?["status"]?.stringValue == status)
        })
    }

    /// Creates an exec approval with the scripting API and waits until its prompt
    /// (`exec.approval.requested`) reached `session`.
    /// - Returns: the approval's id.
    static func openApproval(
        _ run: ScenarioRun, command: String, allowedDecisions: [ApprovalDecision] = ApprovalDecision.allCases,
        expiresIn: Duration, to session: SessionInfo, on gateway: Gateway? = nil, sessionName: String = "operator session"
    ) async throws -> String {
        let record = try await (gateway ?? run.gateway).createApproval(
            command: command, allowedDecisions: allowedDecisions, expiresIn: expiresIn)
        try await awaitEvent(run, "exec.approval.requested", id: record.id, to: session, on: gateway, sessionName: sessionName)
        return record.id
    }

    /// Creates a question with the scripting API and waits until it (`question.requested`)
    /// reached `session`.
    /// - Returns: the question's id.
    static func openQuestion(
        _ run: ScenarioRun, _ prompt: String, options: [String], multiSelect: Bool = false, allowOther: Bool = false,
        expiresIn: Duration, to session: SessionInfo
    ) async throws -> String {
        let question = try await run.gateway.createQuestion(prompt, options: options, multiSelect: multiSelect,
                                                            allowOther: allowOther, expiresIn: expiresIn)
        try await awaitEvent(run, "question.requested", id: question.id, to: session)
        return question.id
    }
}
