import Foundation
import GatewayProtocol

// The wire handlers of both approval families. Each one reconciles deadlines first
// ("reads, waits and resolves all reconcile the deadline", A.8).

extension ApprovalStore {
    // MARK: - Unified (`approval.*`, 2026.7)

    /// `approval.get {id}` → `{approval: <pending or retained terminal snapshot>}`.
    public mutating func handleGet(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let id: String
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            guard let value = try reader.string("id", required: true, allowBlank: true) else { throw ParamError(detail: "id is required") }
            id = value
        } catch {
            return OperatorOutcome(.failure(ApprovalErrors.invalidParams(GatewayMethod.approvalGet.rawValue)))
        }
        let effects = expire(nowMs: nowMs)
        guard Self.isWellFormedId(id), let record = records[ExactID(id)], record.isVisible(to: caller) else {
            return OperatorOutcome(.failure(ApprovalErrors.unifiedNotFound), effects: effects)
        }
        return OperatorOutcome(.success(["approval": record.snapshot(basePath: features.controlUIBasePath)]), effects: effects)
    }

    /// `approval.resolve {id, kind, decision, reviewer?, grantExpiresInDays?}` →
    /// `{applied, approval}` for every contender (A.5, A.6).
    public mutating func handleResolve(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let members = params?.objectValue ?? [:]
        // Upstream reads the id even from params that fail validation; a missing id is "not found".
        guard let id = members["id"]?.stringValue, Self.isWellFormedId(id) else {
            return OperatorOutcome(.failure(ApprovalErrors.unifiedNotFound), effects: expire(nowMs: nowMs))
        }
        var paramsValid = params?.objectValue != nil
        var reviewer: ApprovalResolver?
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            _ = try reader.string("kind", required: true)
            _ = try reader.string("decision", required: true)
            _ = try reader.int("grantExpiresInDays", in: 1...3650)
            if let channelReviewer = try reader.objectMember("reviewer") {
                let parts = ["channel", "accountId", "senderId"].compactMap { channelReviewer[$0]?.stringValue }
                guard parts.count == 3 else { throw ParamError(detail: "reviewer is malformed") }
                reviewer = ApprovalResolver(kind: .channel, id: parts.joined(separator: ":"))
            }
        } catch {
            // A malformed reviewer is concealed as not found; other invalid params force-deny.
            if members["reviewer"] != nil && reviewer == nil {
                return OperatorOutcome(.failure(ApprovalErrors.unifiedNotFound), effects: expire(nowMs: nowMs))
            }
            paramsValid = false
        }
        let result = resolveUnified(id: id, kind: members["kind"]?.stringValue, decision: members["decision"]?.stringValue,
                                    paramsValid: paramsValid, caller: caller, channel: .unifiedApproval,
                                    resolver: reviewer, nowMs: nowMs)
        switch result.value {
        case .notFound:
            return OperatorOutcome(.failure(ApprovalErrors.unifiedNotFound), effects: result.effects)
        case .applied(let record), .alreadyTerminal(let record):
            let applied: Bool = if case .applied = result.value { true } else { false }
            let payload: JSONValue = ["applied": .bool(applied), "approval": record.snapshot(basePath: features.controlUIBasePath)]
            return OperatorOutcome(.success(payload), effects: result.effects)
        }
    }

    /// The default `approval.history` page size (⚠️ UNCONFIRMED).
    public static let defaultHistoryLimit: Int64 = 50

    /// `approval.history {cursor?, limit? (1-100), kind?}` → `{items:[terminal…], nextCursor?}`,
    /// newest first.
    public mutating func handleHistory(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let cursor: String?
        let limit: Int64
        let kind: ApprovalKind?
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            cursor = try reader.string("cursor", allowBlank: true)
            limit = try reader.int("limit", in: 1...100) ?? Self.defaultHistoryLimit
            if let raw = try reader.string("kind") {
                guard let parsed = ApprovalKind(rawValue: raw) else { throw ParamError(detail: "kind is unknown") }
                kind = parsed
            } else {
                kind = nil
            }
        } catch {
            return OperatorOutcome(.failure(ApprovalErrors.invalidParams(GatewayMethod.approvalHistory.rawValue)))
        }
        let effects = expire(nowMs: nowMs)
        var offset = 0
        if let cursor {
            // Cursors are opaque to clients; this one is "h<offset>".
            guard cursor.hasPrefix("h"), let parsed = Int(cursor.dropFirst()), parsed >= 0 else {
                return OperatorOutcome(.failure(ApprovalErrors.invalidHistoryCursor), effects: effects)
            }
            offset = parsed
        }
        let terminal = all.filter { $0.status.isTerminal && $0.isVisible(to: caller) && (kind == nil || $0.presentation.kind == kind) }
            .sorted { ($0.resolvedAtMs ?? 0, $0.createdAtMs, $0.id) > ($1.resolvedAtMs ?? 0, $1.createdAtMs, $1.id) }
        let page = terminal.dropFirst(offset).prefix(Int(limit))
        var payload: [String: JSONValue] = ["items": .array(page.map { $0.snapshot(basePath: features.controlUIBasePath) })]
        let next = offset + page.count
        if next < terminal.count { payload["nextCursor"] = .string("h\(next)") }
        return OperatorOutcome(.success(.object(payload)), effects: effects)
    }

    // MARK: - Legacy (`exec.approval.*`, <=2026.7)

    /// Commands longer than this are refused with `EXEC_APPROVAL_COMMAND_DISPLAY_LIMIT`
    /// (⚠️ UNCONFIRMED limit; chosen generously).
    public static let commandDisplayLimit = 20_000

    /// `exec.approval.request`: creates an exec approval and keeps the request open until it ends
    /// (`{id, decision|null, createdAtMs, expiresAtMs}`); with `twoPhase:true` an `accepted` reply
    /// comes first (A.3, A.8).
    ///
    /// - Parameter route: where the approval can be delivered (the actor knows who is connected);
    ///   `.none` ends it at once and the caller gets `decision: null`.
    public mutating func handleExecRequest(params: JSONValue?, caller: OperatorCaller, route: ApprovalDeliveryRoute = .approvalClient,
                                           nowMs: Int64) -> OperatorOutcome {
        let method = GatewayMethod.execApprovalRequest.rawValue
        let draft: ApprovalDraft
        let twoPhase: Bool
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            let explicitId = try reader.string("id")?.trimmingCharacters(in: .whitespacesAndNewlines)
            let argv = try reader.strings("commandArgv")
            let plan = try reader.objectMember("systemRunPlan")
            let planArgv = plan?["argv"]?.arrayValue?.compactMap(\.stringValue)
            let command = try reader.string("command") ?? plan?["commandText"]?.stringValue
                ?? (argv ?? planArgv).map { $0.joined(separator: " ") }
            let host = try reader.string("host")
            let nodeId = try reader.string("nodeId")
            let timeoutMs = try reader.int("timeoutMs", in: 1...QuestionStore.maximumTimeoutMs)
            twoPhase = try reader.bool("twoPhase") ?? false
            let unavailable = try reader.strings("unavailableDecisions") ?? []
            guard unavailable.allSatisfy({ $0 == ApprovalDecision.allowAlways.rawValue }) else {
                throw ParamError(detail: "unavailableDecisions may only contain allow-always")
            }
            _ = try reader.objectMember("env")
            guard let command, !command.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                return OperatorOutcome(.failure(ApprovalErrors.commandRequired))
            }
            if let explicitId, explicitId.hasPrefix("plugin:") {
                return OperatorOutcome(.failure(ApprovalErrors.reservedPluginPrefix))
            }
            if host == "node" {
                guard !(argv ?? planArgv ?? []).isEmpty else { return OperatorOutcome(.failure(ApprovalErrors.commandArgvRequiredForNode)) }
                guard nodeId != nil else { return OperatorOutcome(.failure(ApprovalErrors.nodeIdRequiredForNode)) }
            }
            guard command.count <= Self.commandDisplayLimit else { return OperatorOutcome(.failure(ApprovalErrors.commandDisplayLimit)) }
            let allowed = ApprovalDecision.allCases.filter { !unavailable.contains($0.rawValue) }
            let commandPreview = host == "node" ? nil : try reader.string("commandPreview")
            let warningText = try reader.string("warningText")
            let agentId = try reader.string("agentId")
            let sessionKey = try reader.string("sessionKey")
            func nullable(_ key: String) -> JSONValue { reader.object[key].flatMap { $0.isNull ? nil : $0 } ?? .null }
            var request: [String: JSONValue] = [
                "command": .string(command), "cwd": nullable("cwd"),
                "nodeId": host == "node" ? nodeId.map(JSONValue.string) ?? .null : .null,
                "host": host.map(JSONValue.string) ?? .null, "security": nullable("security"), "ask": nullable("ask"),
                "warningText": warningText.map(JSONValue.string) ?? .null,
                "allowedDecisions": .array(ApprovalDecision.normalizedAllowedDecisions(allowed).map { .string($0.rawValue) }),
                "agentId": agentId.map(JSONValue.string) ?? .null, "resolvedPath": nullable("resolvedPath"),
                "sessionKey": sessionKey.map(JSONValue.string) ?? .null,
                "systemRunPlan": plan.map(JSONValue.object) ?? .null,
            ]
            if let commandPreview { request["commandPreview"] = .string(commandPreview) }
            if host != "node", let argv { request["commandArgv"] = .array(argv.map(JSONValue.string)) }
            if let env = reader.object["env"]?.objectValue, !env.isEmpty { request["envKeys"] = .array(env.keys.sorted().map(JSONValue.string)) }
            if !unavailable.isEmpty { request["unavailableDecisions"] = .array(unavailable.map(JSONValue.string)) }
            for key in ["turnSourceChannel", "turnSourceTo", "turnSourceAccountId", "turnSourceThreadId"] {
                request[key] = nullable(key)
            }
            let presentation = ExecApprovalPresentation(
                commandText: command, commandPreview: commandPreview, warningText: warningText, host: host,
                nodeId: host == "node" ? nodeId : nil, agentId: agentId)
            draft = ApprovalDraft(id: explicitId.flatMap { $0.isEmpty ? nil : $0 }, presentation: .exec(presentation),
                                  allowedDecisions: allowed, expiresInMs: timeoutMs, agentId: agentId,
                                  sessionKey: sessionKey, legacyRequest: .object(request))
        } catch {
            return OperatorOutcome(.failure(ApprovalErrors.invalidParams(method, error.detail)))
        }
        let created = create(draft, route: route, nowMs: nowMs)
        let record: ApprovalRecord
        switch created.value {
        case .failure(let error): return OperatorOutcome(.failure(error.shape), effects: created.effects)
        case .success(let value): record = value
        }
        if record.status.isTerminal {
            return OperatorOutcome(.success(ExecApprovalWire.decisionReply(record, includeTerminalReason: false)),
                                   effects: created.effects)
        }
        let waiter = OperatorWaiter(subject: .approval(id: record.id), purpose: .execApprovalRequest,
                                    interimReply: twoPhase ? Optional(ExecApprovalWire.acceptedReply(record, route: route)) : nil)
        return OperatorOutcome(.deferred(waiter), effects: created.effects)
    }

    /// `exec.approval.waitDecision {id}` → `{id, decision|null, createdAtMs, expiresAtMs,
    /// terminalReason?}`; works until the finished entry is dropped (15 s).
    public mutating func handleExecWaitDecision(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let id: String
        do throws(ParamError) {
            guard let value = try OperatorParams(params).string("id", required: true) else { throw ParamError(detail: "id is required") }
            id = value
        } catch {
            return OperatorOutcome(.failure(ApprovalErrors.invalidParams(GatewayMethod.execApprovalWaitDecision.rawValue, error.detail)))
        }
        let effects = expire(nowMs: nowMs)
        switch legacyLookup(id, caller: caller, nowMs: nowMs) {
        case .failure(let error):
            return OperatorOutcome(.failure(error.shape), effects: effects)
        case .success(let record) where record.status.isTerminal:
            return OperatorOutcome(.success(ExecApprovalWire.decisionReply(record, includeTerminalReason: true)), effects: effects)
        case .success(let record):
            return OperatorOutcome(.deferred(OperatorWaiter(subject: .approval(id: record.id), purpose: .execApprovalWaitDecision)),
                                   effects: effects)
        }
    }

    /// `exec.approval.resolve {id, decision}` → `{ok:true}` (A.5, A.6): id prefixes accepted; an
    /// identical retry of the recorded decision succeeds; any other decision on a finished record
    /// gets `APPROVAL_ALREADY_RESOLVED`; `allow-always` that was not offered is refused and the
    /// record stays pending.
    public mutating func handleExecResolve(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let requestedId: String
        let rawDecision: String
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            guard let id = try reader.string("id", required: true), let decision = try reader.string("decision", required: true) else {
                throw ParamError(detail: "id and decision are required")
            }
            requestedId = id
            rawDecision = decision
        } catch {
            return OperatorOutcome(.failure(ApprovalErrors.invalidParams(GatewayMethod.execApprovalResolve.rawValue, error.detail)))
        }
        var effects = expire(nowMs: nowMs)
        func reject(_ error: ErrorShape, record: ApprovalRecord?) -> OperatorOutcome {
            effects += logAttempt(id: requestedId, record: record, caller: caller, channel: .execApproval, requested: rawDecision,
                                  result: .rejected(code: error.code, reason: error.details?["reason"]?.stringValue), nowMs: nowMs)
            return OperatorOutcome(.failure(error), effects: effects)
        }
        guard let decision = ApprovalDecision(rawValue: rawDecision) else { return reject(ApprovalErrors.invalidDecision, record: nil) }
        let record: ApprovalRecord
        switch legacyLookup(requestedId, caller: caller, nowMs: nowMs) {
        case .failure(let error): return reject(error.shape, record: nil)
        case .success(let found): record = found
        }
        if record.status.isTerminal {
            if ExecApprovalWire.legacyDecision(record) == decision {
                effects += logAttempt(id: requestedId, record: record, caller: caller, channel: .execApproval,
                                      requested: rawDecision, result: .idempotentRetry, nowMs: nowMs)
                return OperatorOutcome(.success(["ok": true]), effects: effects)
            }
            effects += logAttempt(id: requestedId, record: record, caller: caller, channel: .execApproval, requested: rawDecision,
                                  result: .lost(winnerStatus: record.status.rawValue), nowMs: nowMs)
            return OperatorOutcome(.failure(ApprovalErrors.alreadyResolved), effects: effects)
        }
        guard decision == .deny || record.allowedDecisions.contains(decision) else {
            return reject(decision == .allowAlways ? ApprovalErrors.allowAlwaysUnavailable : ApprovalErrors.invalidDecision, record: record)
        }
        effects += settle(record.id, status: decision == .deny ? .denied : .allowed, decision: decision, reason: .user,
                          resolver: ApprovalResolver(caller: caller), resolvedBy: caller.resolvedByLabel, nowMs: nowMs)
        effects += logAttempt(id: requestedId, record: records[ExactID(record.id)], caller: caller, channel: .execApproval,
                              requested: rawDecision, result: .applied, nowMs: nowMs)
        return OperatorOutcome(.success(["ok": true]), effects: effects)
    }

    /// `exec.approval.get {id}`: the flat view of a *pending* exec approval; a finished one is
    /// "unknown or expired approval id" (A.3, A.7).
    public mutating func handleExecGet(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let id: String
        do throws(ParamError) {
            guard let value = try OperatorParams(params).string("id", required: true) else { throw ParamError(detail: "id is required") }
            id = value
        } catch {
            return OperatorOutcome(.failure(ApprovalErrors.invalidParams(GatewayMethod.execApprovalGet.rawValue, error.detail)))
        }
        let effects = expire(nowMs: nowMs)
        switch legacyLookup(id, caller: caller, nowMs: nowMs) {
        case .success(let record) where record.status == .pending:
            return OperatorOutcome(.success(ExecApprovalWire.getView(record)), effects: effects)
        case .success:
            return OperatorOutcome(.failure(ApprovalErrors.legacyNotFound), effects: effects)
        case .failure(let error):
            return OperatorOutcome(.failure(error.shape), effects: effects)
        }
    }

    /// `exec.approval.list {}` → `[{approvalKind:"exec", id, request, createdAtMs, expiresAtMs}]`
    /// (a bare array), the pending exec approvals visible to the caller, oldest first.
    public mutating func handleExecList(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        do throws(ParamError) {
            _ = try OperatorParams(params)
        } catch {
            return OperatorOutcome(.failure(ApprovalErrors.invalidParams(GatewayMethod.execApprovalList.rawValue, error.detail)))
        }
        let effects = expire(nowMs: nowMs)
        let pending = all.filter { $0.status == .pending && $0.presentation.kind == .exec && $0.isVisible(to: caller) }
        return OperatorOutcome(.success(.array(pending.map(ExecApprovalWire.requestedPayload))), effects: effects)
    }
}
