import GatewayProtocol

/// The errors of both approval families (docs/protocol.md §7.2, §7.4-7.5), in one place.
public enum ApprovalErrors {
    private static func invalid(_ message: String, reason: String? = nil, extra: [String: JSONValue] = [:]) -> ErrorShape {
        var details = extra
        if let reason { details["reason"] = .string(reason) }
        return ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message,
                          details: details.isEmpty ? nil : .object(details))
    }

    /// Unified: `INVALID_REQUEST "approval not found"`, `details.reason = APPROVAL_NOT_FOUND`
    /// (unknown, invisible or unauthorised ids alike).
    public static let unifiedNotFound = invalid("approval not found", reason: ErrorCode.approvalNotFound.rawValue)

    /// Legacy: `INVALID_REQUEST "unknown or expired approval id"` with `APPROVAL_NOT_FOUND` and a
    /// remediation.
    public static let legacyNotFound = invalid(
        "unknown or expired approval id", reason: ErrorCode.approvalNotFound.rawValue,
        extra: ["remediation": "Re-request the action; pending approvals are cleared after expiry or restart."])

    /// Legacy loser: `INVALID_REQUEST "approval already resolved"`, `APPROVAL_ALREADY_RESOLVED`.
    public static let alreadyResolved = invalid("approval already resolved", reason: "APPROVAL_ALREADY_RESOLVED")

    /// Legacy: a decision that is not one of the three values.
    public static let invalidDecision = invalid("invalid decision")

    /// Legacy: a prefix matching more than one approval.
    public static let ambiguousPrefix = invalid("ambiguous approval id prefix; use the full id")

    /// Legacy: `allow-always` was not offered; the record stays pending.
    public static let allowAlwaysUnavailable = invalid(
        "allow-always is unavailable for this command", reason: "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE")

    /// `exec.approval.request` with an id that is still pending.
    public static let idAlreadyPending = invalid("approval id already pending")

    /// `exec.approval.request` without a command.
    public static let commandRequired = invalid("command is required")

    /// `exec.approval.request` with an id in the reserved `plugin:` namespace.
    public static let reservedPluginPrefix = invalid("approval ids starting with plugin: are reserved")

    /// `exec.approval.request` with `host:"node"` and no argv.
    public static let commandArgvRequiredForNode = invalid("commandArgv is required for host=node")

    /// `exec.approval.request` with `host:"node"` and no `nodeId` (⚠️ UNCONFIRMED wording).
    public static let nodeIdRequiredForNode = invalid("nodeId is required for host=node")

    /// `exec.approval.request` whose command is too long to display.
    public static let commandDisplayLimit = invalid(
        "command is too long to display for approval", reason: "EXEC_APPROVAL_COMMAND_DISPLAY_LIMIT")

    /// `approval.history` with a cursor it did not issue.
    public static let invalidHistoryCursor = invalid("invalid approval.history cursor")

    /// `invalid <method> params` (unified handlers answer without validator detail).
    public static func invalidParams(_ method: String, _ detail: String? = nil) -> ErrorShape {
        invalid(detail.map { "invalid \(method) params: \($0)" } ?? "invalid \(method) params")
    }
}

/// The legacy wire shapes of approvals: events, replies and list entries (A.3, A.4, A.7, A.8).
public enum ExecApprovalWire {
    /// The `…requested` event of a kind (`exec.approval.requested`, `plugin.approval.requested`);
    /// `nil` for kinds without one (system-agent, ⚠️ UNCONFIRMED).
    public static func requestedEventName(_ kind: ApprovalKind) -> String? {
        switch kind {
        case .exec: GatewayEventName.execApprovalRequested.rawValue
        case .plugin: GatewayEventName.pluginApprovalRequested.rawValue
        case .systemAgent: nil
        }
    }

    /// The `…resolved` event of a kind (`openclaw.approval.resolved` for system-agent).
    public static func resolvedEventName(_ kind: ApprovalKind) -> String {
        switch kind {
        case .exec: GatewayEventName.execApprovalResolved.rawValue
        case .plugin: GatewayEventName.pluginApprovalResolved.rawValue
        case .systemAgent: GatewayEventName.openclawApprovalResolved.rawValue
        }
    }

    /// `{approvalKind, id, request, createdAtMs, expiresAtMs}`: the `…requested` payload and the
    /// `exec.approval.list` entry.
    public static func requestedPayload(_ record: ApprovalRecord) -> JSONValue {
        [
            "approvalKind": .string(record.presentation.kind.rawValue),
            "id": .string(record.id),
            "request": record.legacyRequest,
            "createdAtMs": .int(record.createdAtMs),
            "expiresAtMs": .int(record.expiresAtMs),
        ]
    }

    /// `{id, decision, resolvedBy, ts, request}`: the `…resolved` payload.
    public static func resolvedPayload(_ record: ApprovalRecord) -> JSONValue {
        [
            "id": .string(record.id),
            "decision": record.decision.map { .string($0.rawValue) } ?? .null,
            "resolvedBy": record.resolvedBy.map(JSONValue.string) ?? .null,
            "ts": .int(record.resolvedAtMs ?? record.createdAtMs),
            "request": record.legacyRequest,
        ]
    }

    /// The decision a legacy caller sees: `null` for expiry, cancellation and "no route"
    /// (A.8: "the caller gets `decision: null`").
    public static func legacyDecision(_ record: ApprovalRecord) -> ApprovalDecision? {
        guard record.status == .allowed || record.status == .denied, record.reason != .noRoute else { return nil }
        return record.decision
    }

    /// The legacy `terminalReason` of a record that ended without a decision
    /// (⚠️ UNCONFIRMED values except `no-approval-route`).
    public static func terminalReason(_ record: ApprovalRecord) -> String? {
        guard record.status.isTerminal, legacyDecision(record) == nil, let reason = record.reason else { return nil }
        return reason == .noRoute ? "no-approval-route" : reason.rawValue
    }

    /// `{id, decision|null, createdAtMs, expiresAtMs}` (final `exec.approval.request` reply), plus
    /// `terminalReason?` for `exec.approval.waitDecision`.
    public static func decisionReply(_ record: ApprovalRecord, includeTerminalReason: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(record.id),
            "decision": legacyDecision(record).map { .string($0.rawValue) } ?? .null,
            "createdAtMs": .int(record.createdAtMs),
            "expiresAtMs": .int(record.expiresAtMs),
        ]
        if includeTerminalReason, let reason = terminalReason(record) { object["terminalReason"] = .string(reason) }
        return .object(object)
    }

    /// The `twoPhase` first reply `{status:"accepted", id, deliveryRoute, createdAtMs, expiresAtMs}`.
    public static func acceptedReply(_ record: ApprovalRecord, route: ApprovalDeliveryRoute) -> JSONValue {
        [
            "status": "accepted",
            "id": .string(record.id),
            "deliveryRoute": .string(route.rawValue),
            "createdAtMs": .int(record.createdAtMs),
            "expiresAtMs": .int(record.expiresAtMs),
        ]
    }

    /// The flat pending-only `exec.approval.get` view.
    public static func getView(_ record: ApprovalRecord) -> JSONValue {
        let exec: ExecApprovalPresentation? = if case .exec(let value) = record.presentation { value } else { nil }
        func nullable(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return [
            "id": .string(record.id),
            "commandText": .string(exec?.commandText ?? ""),
            "commandPreview": nullable(exec?.commandPreview),
            "allowedDecisions": .array(record.allowedDecisions.map { .string($0.rawValue) }),
            "host": nullable(exec?.host),
            "nodeId": nullable(exec?.nodeId),
            "agentId": nullable(exec?.agentId),
            "expiresAtMs": .int(record.expiresAtMs),
        ]
    }

    /// The stored `request` object for a record created without one (scripted approvals): the
    /// fields of the upstream adapter, `null` where unknown.
    static func defaultRequest(for record: ApprovalRecord) -> JSONValue {
        func nullable(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        let decisions = JSONValue.array(record.allowedDecisions.map { .string($0.rawValue) })
        switch record.presentation {
        case .exec(let exec):
            var object: [String: JSONValue] = [
                "command": .string(exec.commandText), "cwd": .null, "nodeId": nullable(exec.nodeId),
                "host": nullable(exec.host), "security": .null, "ask": .null,
                "warningText": nullable(exec.warningText), "allowedDecisions": decisions,
                "agentId": nullable(exec.agentId), "resolvedPath": .null,
                "sessionKey": nullable(record.sourceSessionKey),
            ]
            if let preview = exec.commandPreview { object["commandPreview"] = .string(preview) }
            return .object(object)
        case .plugin(let plugin):
            return [
                "title": .string(plugin.title), "description": .string(plugin.description),
                "severity": .string(plugin.severity), "pluginId": nullable(plugin.pluginId),
                "toolName": nullable(plugin.toolName), "agentId": nullable(plugin.agentId),
                "sessionKey": nullable(record.sourceSessionKey), "allowedDecisions": decisions,
            ]
        case .systemAgent(let system):
            return [
                "title": .string(system.title), "description": .string(system.description),
                "proposalHash": .string(system.proposalHash), "agentId": nullable(system.agentId),
                "sessionKey": nullable(record.sourceSessionKey), "allowedDecisions": decisions,
            ]
        }
    }
}

/// Where a new approval was delivered (`deliveryRoute` of the `twoPhase` reply, A.8). The actor
/// decides it from the connected sessions; `.none` denies the approval at once (reason `no-route`).
public enum ApprovalDeliveryRoute: String, Sendable, Hashable {
    /// A connected approval client (an `operator.approvals` session).
    case approvalClient = "approval-client"
    /// A configured forwarder.
    case forwarder
    /// The turn's source channel.
    case turnSource = "turn-source"
    /// Nobody can be asked.
    case none
}
