import GatewayProtocol

/// The scope a method needs: one scope that is reported when missing, plus any other scopes that
/// also admit the caller.
public struct MethodScopeRequirement: Sendable, Hashable {
    /// The scope named in `missing scope: <scope>` and in `details.requiredScopes`.
    public var scope: OperatorScope
    /// Scopes that admit the caller as well (for example `operator.sessions.write` for `question.*`).
    public var alsoAdmittedBy: [OperatorScope]

    /// Creates a requirement.
    public init(_ scope: OperatorScope, alsoAdmittedBy: [OperatorScope] = []) {
        self.scope = scope
        self.alsoAdmittedBy = alsoAdmittedBy
    }

    /// Whether a session holding `granted` meets the requirement (implications included).
    public func isSatisfied(by granted: Set<OperatorScope>) -> Bool {
        scope.isGranted(by: granted) || alsoAdmittedBy.contains { $0.isGranted(by: granted) }
    }
}

/// Who may call which method: the role policy (docs/protocol.md §6.2) and the method → scope
/// table (docs/protocol.md §5.12, §6.8, §9.2, §6.9, §7.1, §7.7, §7.10).
///
/// The Gateway checks the role first, then the scope, for every request after `hello-ok`.
public enum OperatorMethodPolicy {
    /// The methods only a `role:"node"` socket may call (docs/protocol.md §6.2).
    public static let nodeOnlyMethods: Set<String> = Set(GatewayMethod.nodeMethods.map(\.rawValue))

    /// The scope of every operator method the fake Gateway knows.
    ///
    /// Sources: `src/gateway/method-scopes.ts` (read: `node.list`, `node.describe`,
    /// `gateway.identity.get`, `health`, `status`, ...; write: `node.invoke`, `push.test`, ...),
    /// docs/protocol.md §5.12 (pairing), docs/protocol.md §7.1 (approvals) and §7.7
    /// (questions).
    public static let scopeTable: [String: MethodScopeRequirement] = {
        var table: [String: MethodScopeRequirement] = [:]
        func assign(_ scope: OperatorScope, alsoAdmittedBy: [OperatorScope] = [], _ methods: [String]) {
            for method in methods { table[method] = MethodScopeRequirement(scope, alsoAdmittedBy: alsoAdmittedBy) }
        }
        func assign(_ scope: OperatorScope, _ methods: [GatewayMethod]) { assign(scope, methods.map(\.rawValue)) }
        assign(.pairing, [
            GatewayMethod.devicePairList, .devicePairApprove, .devicePairReject, .devicePairRemove,
            .devicePairRename, .deviceTokenRotate, .deviceTokenRevoke,
            .nodePairRequest, .nodePairList, .nodePairApprove, .nodePairReject,
            .nodePairRemove, .nodePairVerify, .nodeRename,
        ])
        assign(.admin, [GatewayMethod.devicePairSetupCode, .devicePairSetupStatus])
        assign(.read, [GatewayMethod.gatewayIdentityGet, .nodeList, .nodeDescribe, .sessionsMessagesSubscribe,
                       .sessionsMessagesUnsubscribe, .sessionsSubscribe, .sessionsUnsubscribe])
        assign(.read, [
            "health", "status", "system-presence", "last-heartbeat", "sessions.list", "sessions.get", "chat.history",
            "models.list", "agents.list",
        ])
        assign(.write, [GatewayMethod.nodeInvoke, .nodePendingEnqueue, .pushTest])
        assign(.write, ["chat.send", "chat.abort", "send", "agent", "talk.mode"])
        assign(.approvals, [
            "approval.get", "approval.resolve", "approval.history",
            "exec.approval.request", "exec.approval.waitDecision", "exec.approval.resolve",
            "exec.approval.get", "exec.approval.list", "exec.approval.grants.list", "exec.approval.grants.revoke",
            "plugin.approval.request", "plugin.approval.list", "plugin.approval.waitDecision",
            "plugin.approval.resolve",
        ])
        // "own-run question boundary": operator.sessions.write is admitted for all five
        // (docs/protocol.md §7.7); the fake Gateway has no runs to tell own from foreign.
        assign(.questions, alsoAdmittedBy: [.sessionsWrite], [
            "question.request", "question.waitAnswer", "question.resolve", "question.get", "question.list",
        ])
        return table
    }()

    /// Method-name prefixes forced to `operator.admin` (the approval policy files and config).
    public static let adminPrefixes: [String] = ["exec.approvals.", "config.", "wizard.", "update."]

    /// The scope requirement of `method`. Unclassified methods need `operator.admin`
    /// (default-deny, as upstream `authorizeOperatorScopesForMethod`).
    public static func requirement(for method: String) -> MethodScopeRequirement {
        if let known = scopeTable[method] { return known }
        return MethodScopeRequirement(.admin)
    }

    /// Whether `method` is a classified operator method (listed in `scopeTable` or under an admin
    /// prefix). A node calling one gets `unauthorized role: node` rather than `unknown method`.
    public static func isKnownOperatorMethod(_ method: String) -> Bool {
        scopeTable[method] != nil || adminPrefixes.contains { method.hasPrefix($0) }
    }

    /// Whether `role` may call `method` at all: node-only methods need `role:"node"`, every other
    /// method needs `role:"operator"` (upstream `role-policy.ts`).
    public static func isRoleAllowed(_ role: GatewayRole, toCall method: String) -> Bool {
        nodeOnlyMethods.contains(method) ? role == .node : role == .operator
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
