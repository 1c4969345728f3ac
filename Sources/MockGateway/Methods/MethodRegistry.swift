import GatewayProtocol

/// Where a request goes: a served method's spec, or the error that refuses it.
enum MethodRoute: Sendable {
    /// Run the spec's handler.
    case serve(MethodSpec)
    /// Answer with this error (`unknown method`, a role refusal, a missing scope).
    case refuse(ErrorShape)
}

/// Every Gateway method, each declared once (``MethodSpec``). Dispatch, `hello-ok.features.methods`,
/// the role and scope checks and `unknown method` all derive from it; the entries are in
/// `MethodTable.swift` (``MethodRegistry/standard``).
struct MethodRegistry: Sendable {
    /// The entries, in declaration order.
    let specs: [MethodSpec]
    private let byName: [String: MethodSpec]
    /// The entries sorted by name, once: `hello-ok` lists a filter of them on every connect.
    private let sortedByName: [MethodSpec]

    /// A registry of `specs`; a later entry of the same name replaces an earlier one.
    init(_ specs: [MethodSpec]) {
        self.specs = specs
        var byName: [String: MethodSpec] = [:]
        for spec in specs { byName[spec.name.rawValue] = spec }
        self.byName = byName
        sortedByName = specs.sorted { $0.name.rawValue < $1.name.rawValue }
    }

    /// The entry of `method`, if declared.
    func spec(for method: String) -> MethodSpec? { byName[method] }

    /// The methods `hello-ok.features.methods` lists for a session of `role` on `profile`:
    /// those the profile serves to that side of the role split and that are advertised, sorted.
    func advertised(role: GatewayRole, profile: GatewayProfile) -> [String] {
        sortedByName.filter { spec in
            spec.advertised && spec.isServed(by: profile) && Self.isCallerSide(spec.caller, of: role)
        }.map(\.name.rawValue)
    }

    /// Whether `method` is an operator method (declared, or under an admin-only prefix such as
    /// `config.`): a node calling it gets `unauthorized role: node` rather than `unknown method`.
    func isKnownOperatorMethod(_ method: String) -> Bool {
        if let spec = byName[method] { return spec.scope != nil }
        return OperatorMethodPolicy.adminPrefixes.contains { method.hasPrefix($0) }
    }

    /// The scope of an operator method; undeclared methods need `operator.admin` (default deny,
    /// as upstream `authorizeOperatorScopesForMethod`).
    func requirement(for method: String) -> MethodScopeRequirement {
        byName[method]?.scope ?? MethodScopeRequirement(.admin)
    }

    /// Whether `role` may call `method` at all: node methods need `role:"node"`, every other
    /// method `role:"operator"`.
    func isRoleAllowed(_ role: GatewayRole, toCall method: String) -> Bool {
        byName[method]?.caller == .node ? role == .node : role == .operator
    }

    /// Routes one request of a session.
    ///
    /// A node session: a served node method is served; an operator method (served or not) is
    /// refused by role; anything else is `unknown method`. Any other session: a node method is
    /// refused by role; a method the profile does not serve is `unknown method` before any scope
    /// check (what clients of older Gateways see for `question.list`); then the role must be
    /// `operator` and the scope held.
    func route(method: String, role: GatewayRole, scopes: Set<OperatorScope>, profile: GatewayProfile) -> MethodRoute {
        let spec = byName[method]
        if role == .node {
            if let spec, spec.caller == .node {
                return spec.isServed(by: profile) ? .serve(spec) : .refuse(Self.unknownMethodError(method))
            }
            return isKnownOperatorMethod(method)
                ? .refuse(OperatorMethodPolicy.unauthorizedRoleError(role)) : .refuse(Self.unknownMethodError(method))
        }
        guard let spec else { return .refuse(Self.unknownMethodError(method)) }
        guard case .operator(let requirement) = spec.caller else { return .refuse(OperatorMethodPolicy.unauthorizedRoleError(role)) }
        guard spec.isServed(by: profile) else { return .refuse(Self.unknownMethodError(method)) }
        guard role == .operator else { return .refuse(OperatorMethodPolicy.unauthorizedRoleError(role)) }
        guard requirement.isSatisfied(by: scopes) else {
            return .refuse(OperatorMethodPolicy.missingScopeError(requirement.scope, style: profile.missingScopeStyle))
        }
        return .serve(spec)
    }

    /// `INVALID_REQUEST "unknown method: <name>"`.
    static func unknownMethodError(_ method: String) -> ErrorShape {
        ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unknown method: \(method)")
    }

    /// Whether a session of `role` is on the caller side of `caller` (node sessions call node
    /// methods; every other role is offered the operator methods).
    static func isCallerSide(_ caller: MethodCaller, of role: GatewayRole) -> Bool {
        (caller == .node) == (role == .node)
    }
}
