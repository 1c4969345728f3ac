import Foundation
import GatewayProtocol

/// Who wins when the client under test and another surface resolve the same record.
public enum RaceOrder: Sendable, Hashable {
    /// The other surface's answer is applied just before the client's request is handled.
    case surfaceFirst
    /// The client's request is handled first; the other surface answers right after it.
    case clientFirst
    /// Chosen by the Gateway's seed.
    case seeded
}

// MARK: - Approvals

extension Gateway {
    /// Creates an exec approval as the agent runtime would (`exec.approval.requested` goes to
    /// every session with `operator.approvals`).
    /// - Parameters:
    ///   - command: the command text shown to the approver.
    ///   - allowedDecisions: the decisions offered; `deny` is always added.
    ///   - expiresIn: lifetime on the Gateway clock (default: the family's default).
    /// - Returns: the pending record.
    /// - Throws: `GatewayError` for an invalid draft.
    @discardableResult
    public func createApproval(command: String, allowedDecisions: [ApprovalDecision] = ApprovalDecision.allCases,
                               expiresIn: Duration? = nil) async throws(GatewayError) -> ApprovalRecord {
        recordOperatorAction("create approval: \(command)")
        return try await core.scriptCreateApproval(ApprovalDraft.exec(
            command, allowedDecisions: allowedDecisions, expiresInMs: expiresIn?.milliseconds))
    }

    /// The approval record with `id`, as `approval.get` would show it.
    public func approval(id: String) async -> ApprovalRecord? {
        await core.operatorSurface.state.approvals.record(id: id)
    }

    /// Resolves an approval from another surface (first answer wins).
    /// - Returns: `.applied` when this answer won, `.alreadyTerminal` with the winner otherwise.
    @discardableResult
    public func resolveApproval(id: String, decision: ApprovalDecision, surface: String = "console") async -> ApprovalResolution {
        recordOperatorAction("resolve approval \(id): \(decision.rawValue) (\(surface))")
        return await core.scriptResolveApproval(id: id, decision: decision, surface: surface)
    }

    /// Expires a pending approval now.
    /// - Throws: `GatewayError` for an unknown or finished approval.
    public func expireApproval(id: String) async throws(GatewayError) {
        recordOperatorAction("expire approval \(id)")
        try await core.scriptOperator { state, now in state.approvals.expireNow(id: id, nowMs: now) }
    }

    /// Cancels a pending approval (the run was aborted).
    /// - Throws: `GatewayError` for an unknown or finished approval.
    public func cancelApproval(id: String) async throws(GatewayError) {
        recordOperatorAction("cancel approval \(id)")
        try await core.scriptOperator { state, now in state.approvals.cancel(id: id, nowMs: now) }
    }

    /// Arms a race on approval `id`: when the client next sends a resolve for it
    /// (`approval.resolve` or `exec.approval.resolve`), another surface answers `decision`
    /// in the given order.
    public func raceApproval(id: String, surfaceDecision: ApprovalDecision, order: RaceOrder = .surfaceFirst,
                             surface: String = "watch") async {
        await core.armRace(RaceArm(recordId: id, kind: .approval(surfaceDecision), order: order, surface: surface))
    }

    /// Every resolve attempt so far (approvals and questions), in order.
    public func resolveAttempts() async -> [ResolveAttempt] {
        await core.operatorSurface.state.resolveAttempts
    }
}

// MARK: - Questions

extension Gateway {
    /// Creates an agent question with one item (as the `ask_user` tool would).
    /// - Parameters:
    ///   - prompt: the question text.
    ///   - options: option labels.
    ///   - multiSelect: more than one option may be chosen.
    ///   - allowOther: free text is allowed (`isOther`).
    ///   - expiresIn: lifetime on the Gateway clock (default 15 minutes).
    /// - Returns: the pending record.
    /// - Throws: `GatewayError` for an invalid question.
    @discardableResult
    public func createQuestion(_ prompt: String, options: [String], multiSelect: Bool = false, allowOther: Bool = false,
                               expiresIn: Duration? = nil) async throws(GatewayError) -> QuestionRecord {
        recordOperatorAction("ask question: \(prompt)")
        let item = QuestionItem(questionId: "q1", header: "Question", question: prompt,
                                options: options.map { QuestionOption(label: $0) }, multiSelect: multiSelect, isOther: allowOther)
        return try await core.scriptOperator { state, now in
            state.questions.open(QuestionDraft(questions: [item], expiresInMs: expiresIn?.milliseconds), nowMs: now)
        }
    }

    /// The question record with `id`.
    public func question(id: String) async -> QuestionRecord? {
        await core.operatorSurface.state.questions.record(id: id)
    }

    /// Answers a question from another surface.
    /// - Parameter answers: chosen labels (or free text) by question item id (`q1` for
    ///   questions made by `createQuestion`).
    /// - Throws: `GatewayError` with the `QUESTION_*` reason the wire would get.
    @discardableResult
    public func answerQuestion(id: String, answers: [String: [String]], surface: String = "console") async throws(GatewayError) -> QuestionRecord {
        recordOperatorAction("answer question \(id) (\(surface))")
        return try await core.scriptOperator { state, now in state.questions.answer(id: id, answers: answers, as: .surface(surface), nowMs: now) }
    }

    /// Cancels a question from another surface.
    /// - Throws: `GatewayError` with the `QUESTION_*` reason the wire would get.
    @discardableResult
    public func cancelQuestion(id: String, surface: String = "console") async throws(GatewayError) -> QuestionRecord {
        recordOperatorAction("cancel question \(id) (\(surface))")
        return try await core.scriptOperator { state, now in state.questions.cancel(id: id, as: .surface(surface), nowMs: now) }
    }

    /// Expires a pending question now.
    /// - Throws: `GatewayError` for an unknown or finished question.
    @discardableResult
    public func expireQuestion(id: String) async throws(GatewayError) -> QuestionRecord {
        recordOperatorAction("expire question \(id)")
        return try await core.scriptOperator { state, now in state.questions.expireNow(id: id, nowMs: now) }
    }

    /// Arms a race on question `id`: when the client next sends `question.resolve` for it,
    /// another surface answers first or right after.
    public func raceQuestion(id: String, surfaceAnswers: [String: [String]], order: RaceOrder = .surfaceFirst,
                             surface: String = "watch") async {
        await core.armRace(RaceArm(recordId: id, kind: .question(surfaceAnswers), order: order, surface: surface))
    }
}

/// A race armed by a scenario.
struct RaceArm: Sendable {
    enum Kind: Sendable {
        case approval(ApprovalDecision)
        case question([String: [String]])
    }

    let recordId: String
    let kind: Kind
    let order: RaceOrder
    let surface: String
}

extension GatewayCore {
    func scriptCreateApproval(_ draft: ApprovalDraft) throws(GatewayError) -> ApprovalRecord {
        try scriptOperator { state, now in state.approvals.create(draft, nowMs: now) }
    }

    func scriptResolveApproval(id: String, decision: ApprovalDecision, surface: String) -> ApprovalResolution {
        let result = operatorSurface.state.approvals.resolve(id: id, decision: decision, as: .surface(surface), nowMs: nowMs)
        applyOperatorEffects(result.effects)
        return result.value
    }

    /// Runs a scripted operation on the operator state and applies its effects (also on failure).
    @discardableResult
    func scriptOperator<Value: Sendable>(
        _ operation: (inout OperatorState, Int64) -> OperatorAttempt<Value>
    ) throws(GatewayError) -> Value {
        let attempt = operation(&operatorSurface.state, nowMs)
        applyOperatorEffects(attempt.effects)
        switch attempt.value {
        case .success(let value): return value
        case .failure(let error): throw GatewayError(error.shape)
        }
    }

    func armRace(_ arm: RaceArm) {
        operatorSurface.armedRaces.append(arm)
        noteFault("race armed on \(arm.recordId) (\(arm.order))")
    }

    /// The race armed for this request, if it resolves an armed record.
    func takeRace(for request: RequestFrame) -> (arm: RaceArm, surfaceFirst: Bool)? {
        let resolveMethods: Set<String> = Set([GatewayMethod.approvalResolve, .execApprovalResolve, .questionResolve].map(\.rawValue))
        guard resolveMethods.contains(request.method), let id = request.params?["id"]?.stringValue,
              let index = operatorSurface.armedRaces.firstIndex(where: { $0.recordId == id }) else { return nil }
        let arm = operatorSurface.armedRaces.remove(at: index)
        let surfaceFirst: Bool
        switch arm.order {
        case .surfaceFirst: surfaceFirst = true
        case .clientFirst: surfaceFirst = false
        case .seeded: surfaceFirst = random.next() % 2 == 0
        }
        return (arm, surfaceFirst)
    }

    /// The other surface's answer of an armed race.
    func runSurfaceSide(of arm: RaceArm) {
        switch arm.kind {
        case .approval(let decision):
            _ = scriptResolveApproval(id: arm.recordId, decision: decision, surface: arm.surface)
        case .question(let answers):
            let attempt = operatorSurface.state.questions.answer(id: arm.recordId, answers: answers, as: .surface(arm.surface), nowMs: nowMs)
            applyOperatorEffects(attempt.effects)
        }
    }
}
