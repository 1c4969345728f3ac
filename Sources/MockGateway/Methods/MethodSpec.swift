import GatewayProtocol

/// Which side of the role split may call a method, and with which operator scope
/// (upstream `role-policy.ts` and `method-scopes.ts`).
enum MethodCaller: Sendable, Hashable {
    /// Only a `role:"node"` socket; any other role gets `unauthorized role: <role>`.
    case node
    /// Only a `role:"operator"` socket holding this scope; a node gets `unauthorized role: node`,
    /// an operator without the scope the profile's missing-scope error.
    case `operator`(MethodScopeRequirement)
}

/// Which Gateway generations serve a method (or emit an event, ``EventSpec``): a predicate on
/// ``GatewayProfile`` written as a value, so that a test can walk it.
enum MethodAvailability: Sendable, Hashable {
    /// Every profile.
    case always
    /// Profiles with the unified approval family (`hasUnifiedApprovals`).
    case unifiedApprovals
    /// Profiles with agent questions (`hasQuestions`).
    case questions
    /// Profiles with the newest node methods (`hasNewerNodeMethods`).
    case newerNodeMethods
    /// Profiles without them (the protocol-3-era predecessors).
    case olderNodeMethods
    /// Profiles with the setup-code lifecycle (`hasSetupCodeLifecycle`).
    case setupCodeLifecycle
    /// Profiles with structured `node.event` results (`nodeEventReply == .structured`).
    case structuredNodeEvents
    /// No profile: the method is classified (its role and scope are known, so a node calling it
    /// is refused by role) but this Gateway does not serve it.
    case never

    /// Whether a Gateway of `profile` serves the method.
    func admits(_ profile: GatewayProfile) -> Bool {
        switch self {
        case .always: true
        case .unifiedApprovals: profile.hasUnifiedApprovals
        case .questions: profile.hasQuestions
        case .newerNodeMethods: profile.hasNewerNodeMethods
        case .olderNodeMethods: !profile.hasNewerNodeMethods
        case .setupCodeLifecycle: profile.hasSetupCodeLifecycle
        case .structuredNodeEvents: profile.nodeEventReply == .structured
        case .never: false
        }
    }

    /// Whether an operator core with `features` serves the method (the operator cores see only
    /// ``OperatorProfileFeatures``, not a whole profile).
    func admits(_ features: OperatorProfileFeatures) -> Bool {
        switch self {
        case .always: true
        case .unifiedApprovals: features.unifiedApprovals
        case .questions: features.questions
        case .newerNodeMethods, .olderNodeMethods, .setupCodeLifecycle, .structuredNodeEvents, .never: false
        }
    }
}

/// One request to a served method, as its handler sees it.
struct MethodCall: Sendable {
    /// The request frame.
    let request: RequestFrame
    /// The calling session.
    let session: Session
    /// The connection the request arrived on (and the answer goes to).
    let connectionId: String

    /// The request's method name.
    var method: String { request.method }
    /// The request's params.
    var params: JSONValue? { request.params }
    /// A node session's node id (`client.id` when the session has none).
    var nodeId: String { session.nodeId ?? session.client.id.rawValue }
    /// A non-empty string member of the params.
    func string(_ key: String) -> String? { params?[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
    /// `INVALID_REQUEST "invalid <method> params: <detail>"`.
    func invalidParams(_ detail: String) -> ErrorShape {
        ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid \(method) params: \(detail)")
    }
    /// Where the answer to this request goes (for a state machine's answer effect).
    var replyAddress: ReplyAddress {
        ReplyAddress(requestId: request.id, method: request.method, connectionId: connectionId)
    }
    /// The session as an operator-core caller.
    var operatorCaller: OperatorCaller {
        OperatorCaller(wireRole: session.role, wireScopes: session.scopes, surface: connectionId,
                       deviceId: session.deviceId, clientId: session.client.id.rawValue,
                       displayName: session.client.displayName)
    }
}

/// One request to an operator-core method (approvals, questions): pure input of a handler that
/// returns an ``OperatorOutcome``.
struct OperatorCall: Sendable {
    /// The request's params.
    var params: JSONValue?
    /// Who is calling.
    var caller: OperatorCaller
    /// Where a new `exec.approval.request` can be delivered.
    var route: ApprovalDeliveryRoute
    /// The Gateway clock.
    var nowMs: Int64
}

/// How a served method is answered.
enum MethodHandler: Sendable {
    /// A handler of the Gateway actor: it answers (now or later) and applies its effects.
    case core(@Sendable (isolated GatewayCore, MethodCall) -> Void)
    /// A pure operator-core handler: the actor applies the outcome (reply, waiter, effects) and
    /// any armed race (`Gateway.armRace`) around it.
    case operatorState(@Sendable (inout OperatorState, OperatorCall) -> OperatorOutcome)
}

/// One Gateway method, declared once: its name, who may call it with which scope, which
/// profiles serve it, whether `hello-ok.features.methods` lists it, and its handler.
struct MethodSpec: Sendable {
    /// The wire name.
    let name: GatewayMethod
    /// The role (and, for operators, the scope) that may call it.
    let caller: MethodCaller
    /// The profiles that serve it.
    let availability: MethodAvailability
    /// Whether `hello-ok.features.methods` lists it where it is served.
    let advertised: Bool
    /// The handler; `nil` exactly when ``availability`` is ``MethodAvailability/never``.
    let handler: MethodHandler?

    /// A node method.
    static func node(_ name: GatewayMethod, _ availability: MethodAvailability = .always,
                     _ handler: @escaping @Sendable (isolated GatewayCore, MethodCall) -> Void) -> MethodSpec {
        MethodSpec(name: name, caller: .node, availability: availability, advertised: true, handler: .core(handler))
    }

    /// An operator method served by the Gateway actor.
    static func `operator`(_ name: GatewayMethod, _ scope: MethodScopeRequirement,
                           _ availability: MethodAvailability = .always, advertised: Bool = true,
                           _ handler: @escaping @Sendable (isolated GatewayCore, MethodCall) -> Void) -> MethodSpec {
        MethodSpec(name: name, caller: .operator(scope), availability: availability, advertised: advertised,
                   handler: .core(handler))
    }

    /// An operator method served by a pure operator core (``OperatorState``).
    static func operatorCore(_ name: GatewayMethod, _ scope: MethodScopeRequirement,
                             _ availability: MethodAvailability = .always,
                             _ handler: @escaping @Sendable (inout OperatorState, OperatorCall) -> OperatorOutcome) -> MethodSpec {
        MethodSpec(name: name, caller: .operator(scope), availability: availability, advertised: true,
                   handler: .operatorState(handler))
    }

    /// An operator method this Gateway classifies but does not serve (`unknown method` to
    /// operators, `unauthorized role: node` to nodes).
    static func unserved(_ name: GatewayMethod, _ scope: MethodScopeRequirement) -> MethodSpec {
        MethodSpec(name: name, caller: .operator(scope), availability: .never, advertised: false, handler: nil)
    }

    /// Whether a Gateway of `profile` serves the method.
    func isServed(by profile: GatewayProfile) -> Bool { handler != nil && availability.admits(profile) }

    /// The operator scope requirement, `nil` for node methods.
    var scope: MethodScopeRequirement? {
        if case .operator(let requirement) = caller { requirement } else { nil }
    }
}
