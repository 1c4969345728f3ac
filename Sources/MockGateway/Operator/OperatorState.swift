import GatewayProtocol

/// The operator side of the fake Gateway as one value: approvals, questions and the method
/// dispatch for both, for the Gateway actor to own.
///
/// The actor routes every request whose method-registry entry has an operator-core handler to
/// that handler and applies the outcome: send the reply (or park a
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

    /// The registry entries of the methods handled here (approvals and questions).
    static var operatorCoreSpecs: [MethodSpec] {
        MethodRegistry.standard.specs.filter { if case .operatorState? = $0.handler { true } else { false } }
    }

    /// Whether this profile has `method`, an operator-core method (for `hello-ok.features.methods`).
    public func offers(_ method: String) -> Bool {
        Self.operatorCoreSpecs.contains { $0.name.rawValue == method && $0.availability.admits(features) }
    }

    /// The operator-core methods this profile serves, sorted.
    public var offeredMethods: [String] {
        Self.operatorCoreSpecs.filter { $0.availability.admits(features) }.map(\.name.rawValue).sorted()
    }

    /// `INVALID_REQUEST "unknown method: <name>"`.
    public static func unknownMethodError(_ method: String) -> ErrorShape {
        MethodRegistry.unknownMethodError(method)
    }

    /// Handles one request to an approval or question method, as its method-registry entry
    /// declares it.
    ///
    /// Order: a method of a family the profile lacks → `unknown method` (what clients of older
    /// Gateways see for `question.list`, C.4); then role and scope (`OperatorMethodPolicy`); then
    /// the entry's handler. The Gateway actor routes through the registry before calling the
    /// handler itself; this entry point serves callers holding only an `OperatorState`.
    ///
    /// - Parameters:
    ///   - route: where a new `exec.approval.request` can be delivered.
    /// - Returns: `nil` when `method` is not an operator-core method.
    public mutating func handle(method: String, params: JSONValue?, caller: OperatorCaller,
                                route: ApprovalDeliveryRoute = .approvalClient, nowMs: Int64) -> OperatorOutcome? {
        guard let spec = MethodRegistry.standard.spec(for: method), case .operatorState(let handler)? = spec.handler else {
            return nil
        }
        guard spec.availability.admits(features) else { return OperatorOutcome(.failure(Self.unknownMethodError(method))) }
        if let denied = OperatorMethodPolicy.authorize(method: method, role: caller.role, scopes: caller.scopes,
                                                       style: features.missingScopeStyle) {
            return OperatorOutcome(.failure(denied))
        }
        return handler(&self, OperatorCall(params: params, caller: caller, route: route, nowMs: nowMs))
    }

    /// Expires due approvals and questions and forgets records past their retention.
    public mutating func expire(nowMs: Int64) -> [OperatorEffect] {
        approvals.expire(nowMs: nowMs) + questions.expire(nowMs: nowMs)
    }

    /// The earliest instant at which `expire(nowMs:)` has work.
    public var nextDeadlineMs: Int64? {
        switch (approvals.nextDeadlineMs, questions.nextDeadlineMs) {
        case (let approval?, let question?): min(approval, question)
        case (let approval?, nil): approval
        case (nil, let question): question
        }
    }

    /// Every resolve attempt of both stores, in time order.
    public var resolveAttempts: [ResolveAttempt] {
        (approvals.resolveAttempts + questions.resolveAttempts).enumerated()
            .sorted { ($0.element.atMs, $0.offset) < ($1.element.atMs, $1.offset) }.map(\.element)
    }
}
