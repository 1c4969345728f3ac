import GatewayProtocol

/// The scope a method needs: one scope that is reported when missing, plus any other scopes that
/// also admit the caller.
public struct MethodScopeRequirement: Sendable, Hashable {
    /// The scope named in `missing scope: <scope>` and in `details.requiredScopes`.
    public var scope: OperatorScope
    /// Scopes that admit the caller as well (for example `operator.sessions.write` for `question.*`).
    public var alsoAdmittedBy: [OperatorScope]
    /// Whether the handler raises the requirement from the params (upstream's `dynamic` scope,
    /// for example `sessions.patch`: `scope` admits the call, some params need more).
    public var raisedByParams: Bool

    /// Creates a requirement.
    public init(_ scope: OperatorScope, alsoAdmittedBy: [OperatorScope] = [], raisedByParams: Bool = false) {
        self.scope = scope
        self.alsoAdmittedBy = alsoAdmittedBy
        self.raisedByParams = raisedByParams
    }

    /// Whether a session holding `granted` meets the requirement (implications included).
    public func isSatisfied(by granted: Set<OperatorScope>) -> Bool {
        scope.isGranted(by: granted) || alsoAdmittedBy.contains { $0.isGranted(by: granted) }
    }
}

/// Who may call which method: the role policy and each method's scope,
/// both declared with the method in the method registry (`Methods/MethodTable.swift`).
///
/// The Gateway checks the role first, then the scope, for every request after `hello-ok`.
public enum OperatorMethodPolicy {
    /// The methods only a `role:"node"` socket may call, from the
    /// method registry.
    public static var nodeOnlyMethods: Set<String> {
        Set(MethodRegistry.standard.specs.filter { $0.caller == .node }.map(\.name.rawValue))
    }

    /// Method-name prefixes forced to `operator.admin` (the approval policy files and config).
    public static let adminPrefixes: [String] = GatewayMethod.adminFamilyPrefixes

    /// The scope requirement of `method`, as the method registry declares it. Unclassified
    /// methods need `operator.admin` (default-deny, as upstream `authorizeOperatorScopesForMethod`).
    public static func requirement(for method: String) -> MethodScopeRequirement {
        MethodRegistry.standard.requirement(for: method)
    }

    /// Whether `method` is a classified operator method (declared in the method registry or under
    /// an admin prefix). A node calling one gets `unauthorized role: node` rather than `unknown method`.
    public static func isKnownOperatorMethod(_ method: String) -> Bool {
        MethodRegistry.standard.isKnownOperatorMethod(method)
    }

    /// Whether `role` may call `method` at all: node-only methods need `role:"node"`, every other
    /// method needs `role:"operator"` (upstream `role-policy.ts`).
    public static func isRoleAllowed(_ role: GatewayRole, toCall method: String) -> Bool {
        MethodRegistry.standard.isRoleAllowed(role, toCall: method)
    }

    /// Checks role and scopes for one request.
    ///
    /// - Parameters:
    ///   - method: The request's method.
    ///   - role: The session's role.
    ///   - scopes: The session's granted scopes.
    ///   - style: How a missing scope is reported (the Gateway profile's generation).
    /// - Returns: `nil` when the call may proceed, otherwise the error to answer with.
    public static func authorize(
        method: String, role: GatewayRole, scopes: Set<OperatorScope>,
        style: GatewayProfile.MissingScopeStyle
    ) -> ErrorShape? {
        guard isRoleAllowed(role, toCall: method) else { return unauthorizedRoleError(role) }
        guard role == .operator else { return nil }
        let requirement = requirement(for: method)
        guard requirement.isSatisfied(by: scopes) else {
            return missingScopeError(requirement.scope, style: style)
        }
        return nil
    }

    /// `authorize(method:role:scopes:style:)` for a session described by its wire strings.
    public static func authorize(method: String, role: String, scopes: [String],
                                 style: GatewayProfile.MissingScopeStyle) -> ErrorShape? {
        authorize(method: method, role: GatewayRole(rawValue: role), scopes: Set(wire: scopes), style: style)
    }

    /// `INVALID_REQUEST "unauthorized role: <role>"` (docs/protocol.md §6.2).
    public static func unauthorizedRoleError(_ role: GatewayRole) -> ErrorShape {
        ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unauthorized role: \(role.rawValue)")
    }

    /// The missing-scope error (docs/protocol.md §10.2, §7.10).
    ///
    /// - `.forbidden` (current): `FORBIDDEN "missing scope: <scope>"` with
    ///   `details {code:"MISSING_SCOPE", missingScope, requiredScopes}`.
    /// - `.invalidRequest` (older Gateways): `INVALID_REQUEST` with the same message and no details.
    public static func missingScopeError(
        _ scope: OperatorScope, requiredScopes: [OperatorScope]? = nil, style: GatewayProfile.MissingScopeStyle
    ) -> ErrorShape {
        let message = "missing scope: \(scope.rawValue)"
        switch style {
        case .forbidden:
            let required = (requiredScopes ?? [scope]).map { JSONValue.string($0.rawValue) }
            return ErrorShape(code: ErrorCode.forbidden.rawValue, message: message, details: [
                "code": "MISSING_SCOPE", "missingScope": .string(scope.rawValue), "requiredScopes": .array(required),
            ])
        case .invalidRequest:
            return ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message)
        }
    }
}
