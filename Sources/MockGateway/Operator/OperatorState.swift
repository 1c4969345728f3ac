import GatewayProtocol

/// The operator side of the fake Gateway as one value: approvals, questions and the method
/// dispatch for both, for the Gateway actor to own.
///
/// The actor routes every request whose method `OperatorState.serves(_:)` to
/// `handle(method:params:caller:route:nowMs:)` and applies the outcome: send the reply (or park a
/// `.deferred` waiter), publish each `.publish` event to the sessions that pass
/// `EventScopeGate.allows(event:scopes:role:)` and the event's audience, complete waiters on
/// `.settled`, forward `.observed` to `GatewayEvent.operatorRecord`. It calls `expire(nowMs:)`
/// whenever the clock reaches `nextDeadlineMs` or moves (timers are only wake-ups; every handler
/// reconciles deadlines itself).
public struct OperatorState: Sendable {
    /// The profile's operator features.
    public private(set) var features: OperatorProfileFeatures
    /// Both approval families.
    public var approvals: ApprovalStore
    /// Agent questions.
    public var questions: QuestionStore

    /// Creates an empty operator side.
    /// - Parameters:
    ///   - features: the Gateway generation's operator features.
    ///   - random: the seeded source for approval and question ids.
    public init(features: OperatorProfileFeatures, random: SeededRandom) {
        var random = random
        self.features = features
        self.approvals = ApprovalStore(features: features, random: SeededRandom(seed: random.next()))
        self.questions = QuestionStore(random: SeededRandom(seed: random.next()))
    }

    /// The methods handled here, by family.
    public static let unifiedApprovalMethods: Set<String> = ["approval.get", "approval.resolve", "approval.history"]
    /// The legacy exec approval methods.
    public static let execApprovalMethods: Set<String> = [
        "exec.approval.request", "exec.approval.waitDecision", "exec.approval.resolve", "exec.approval.get",
        "exec.approval.list",
    ]
    /// The question methods.
    public static let questionMethods: Set<String> = [
        "question.request", "question.waitAnswer", "question.resolve", "question.get", "question.list",
    ]

    /// Whether `method` belongs to the operator cores (whatever the profile).
    public static func serves(_ method: String) -> Bool {
        unifiedApprovalMethods.contains(method) || execApprovalMethods.contains(method) || questionMethods.contains(method)
    }

    /// Whether this profile has `method` (for `hello-ok.features.methods`).
    public func offers(_ method: String) -> Bool {
        if Self.unifiedApprovalMethods.contains(method) { return features.unifiedApprovals }
        if Self.questionMethods.contains(method) { return features.questions }
        return Self.execApprovalMethods.contains(method)
    }

    /// The methods this profile advertises.
    public var offeredMethods: [String] {
        (Self.unifiedApprovalMethods.union(Self.execApprovalMethods).union(Self.questionMethods)).filter(offers).sorted()
    }

    /// `INVALID_REQUEST "unknown method: <name>"`.
    public static func unknownMethodError(_ method: String) -> ErrorShape {
        ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unknown method: \(method)")
    }

    /// Handles one request.
    ///
    /// Order: a method of a family the profile lacks → `unknown method` (what clients of older
    /// Gateways see for `question.list`, C.4); then role and scope (`OperatorMethodPolicy`); then
    /// the family's handler. Applying the policy again in the actor is harmless.
    ///
    /// - Parameters:
    ///   - route: where a new `exec.approval.request` can be delivered.
    /// - Returns: `nil` when `method` is not an operator-core method.
    public mutating func handle(method: String, params: JSONValue?, caller: OperatorCaller,
                                route: ApprovalDeliveryRoute = .approvalClient, nowMs: Int64) -> OperatorOutcome? {
        guard Self.serves(method) else { return nil }
        guard offers(method) else { return OperatorOutcome(.failure(Self.unknownMethodError(method))) }
        if let denied = OperatorMethodPolicy.authorize(method: method, role: caller.role, scopes: caller.scopes,
                                                       style: features.missingScopeStyle) {
            return OperatorOutcome(.failure(denied))
        }
        switch method {
        case "approval.get": return approvals.handleGet(params: params, caller: caller, nowMs: nowMs)
        case "approval.resolve": return approvals.handleResolve(params: params, caller: caller, nowMs: nowMs)
        case "approval.history": return approvals.handleHistory(params: params, caller: caller, nowMs: nowMs)
        case "exec.approval.request": return approvals.handleExecRequest(params: params, caller: caller, route: route, nowMs: nowMs)
        case "exec.approval.waitDecision": return approvals.handleExecWaitDecision(params: params, caller: caller, nowMs: nowMs)
        case "exec.approval.resolve": return approvals.handleExecResolve(params: params, caller: caller, nowMs: nowMs)
        case "exec.approval.get": return approvals.handleExecGet(params: params, caller: caller, nowMs: nowMs)
        case "exec.approval.list": return approvals.handleExecList(params: params, caller: caller, nowMs: nowMs)
        case "question.request": return questions.handleRequest(params: params, caller: caller, nowMs: nowMs)
        case "question.waitAnswer": return questions.handleWaitAnswer(params: params, caller: caller, nowMs: nowMs)
        case "question.resolve": return questions.handleResolve(params: params, caller: caller, nowMs: nowMs)
        case "question.get": return questions.handleGet(params: params, caller: caller, nowMs: nowMs)
        case "question.list": return questions.handleList(params: params, caller: caller, nowMs: nowMs)
        default: return nil
        }
    }

    /// Expires due approvals and questions and forgets records past their retention.
    public mutating func expire(nowMs: Int64) -> [OperatorEffect] {
        approvals.expire(nowMs: nowMs) + questions.expire(nowMs: nowMs)
    }

    /// The earliest instant at which `expire(nowMs:)` has work.
    public var nextDeadlineMs: Int64? {
        [approvals.nextDeadlineMs, questions.nextDeadlineMs].compactMap { $0 }.min()
    }

    /// Every resolve attempt of both stores, in time order.
    public var resolveAttempts: [ResolveAttempt] {
        (approvals.resolveAttempts + questions.resolveAttempts).enumerated()
            .sorted { ($0.element.atMs, $0.offset) < ($1.element.atMs, $1.offset) }.map(\.element)
    }
}
