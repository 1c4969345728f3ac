import GatewayProtocol

/// A value plus the effects the owning actor must apply.
public struct OperatorResult<Value: Sendable>: Sendable {
    /// The value.
    public var value: Value
    /// Effects, in order.
    public var effects: [OperatorEffect]

    /// Creates a result.
    public init(_ value: Value, effects: [OperatorEffect] = []) {
        self.value = value
        self.effects = effects
    }
}

extension OperatorResult: Equatable where Value: Equatable {}
extension OperatorResult: Hashable where Value: Hashable {}

/// An operation that may fail; on failure the effects (for example expiries discovered on the
/// way) must still be applied.
public typealias OperatorAttempt<Value: Sendable> = OperatorResult<Result<Value, OperatorError>>

extension OperatorResult {
    /// The value of a successful attempt, or the error. Effects are not returned: apply
    /// `effects` first when they matter.
    public func get<Success>() throws(OperatorError) -> Success where Value == Result<Success, OperatorError> {
        try value.get()
    }

    /// The error of a failed attempt.
    public func failure<Success>() -> ErrorShape? where Value == Result<Success, OperatorError> {
        if case .failure(let error) = value { error.shape } else { nil }
    }
}

/// A new approval as the scripting API (or the legacy request handler) describes it.
public struct ApprovalDraft: Sendable, Hashable {
    /// An explicit id; a random UUID when `nil`.
    public var id: String?
    /// What it shows.
    public var presentation: ApprovalPresentation
    /// The offered decisions; `deny` is always added.
    public var allowedDecisions: [ApprovalDecision]
    /// Lifetime; the deadline is `createdAtMs + expiresInMs`. `nil` uses the profile's default
    /// exec timeout.
    public var expiresInMs: Int64?
    /// The requesting agent (defaults to the presentation's).
    public var agentId: String?
    /// The requesting session (routes `session.approval`).
    public var sessionKey: String?
    /// Restricts reviewers to these devices (plus admin).
    public var reviewerDeviceIds: [String]
    /// The legacy `request` object; built from the presentation when `nil`.
    public var legacyRequest: JSONValue?

    /// Creates a draft.
    public init(id: String? = nil, presentation: ApprovalPresentation,
                allowedDecisions: [ApprovalDecision] = ApprovalDecision.allCases, expiresInMs: Int64? = nil,
                agentId: String? = nil, sessionKey: String? = nil, reviewerDeviceIds: [String] = [],
                legacyRequest: JSONValue? = nil) {
        self.id = id
        self.presentation = presentation
        self.allowedDecisions = allowedDecisions
        self.expiresInMs = expiresInMs
        self.agentId = agentId
        self.sessionKey = sessionKey
        self.reviewerDeviceIds = reviewerDeviceIds
        self.legacyRequest = legacyRequest
    }

    /// An exec approval for `command`.
    public static func exec(_ command: String, id: String? = nil, allowedDecisions: [ApprovalDecision] = ApprovalDecision.allCases,
                            expiresInMs: Int64? = nil, sessionKey: String? = nil) -> ApprovalDraft {
        ApprovalDraft(id: id, presentation: .exec(ExecApprovalPresentation(commandText: command, host: "gateway", agentId: "main")),
                      allowedDecisions: allowedDecisions, expiresInMs: expiresInMs, sessionKey: sessionKey)
    }
}

/// How a unified resolve (or a scripted resolve) ended.
public enum ApprovalResolution: Sendable, Hashable {
    /// This call ended the approval (possibly as a forced `malformed-verdict` deny).
    case applied(ApprovalRecord)
    /// The approval had already ended; the recorded winner.
    case alreadyTerminal(ApprovalRecord)
    /// Unknown or invisible id.
    case notFound

    /// The terminal record, when there is one.
    public var record: ApprovalRecord? {
        switch self {
        case .applied(let record), .alreadyTerminal(let record): record
        case .notFound: nil
        }
    }
}

/// Every approval of the fake Gateway: one lifecycle for both API families.
///
/// Rules (docs/protocol.md §7): first answer wins (the store is mutated serially by its
/// owner, so the first `resolve` that finds the record pending is the winner; later ones see it
/// terminal); the deadline is reconciled by every read, wait and resolve (`now >= expiresAtMs` is
/// expired); legacy `exec.approval.*` sees a finished record for 15 s
/// (`RESOLVED_ENTRY_GRACE_MS`); unified readers keep terminal rows for 30 days (only when the
/// profile has the unified family; the older in-memory Gateway forgets them after the grace).
public struct ApprovalStore: Sendable {
    /// How long legacy readers still see a finished record (`RESOLVED_ENTRY_GRACE_MS`).
    public static let legacyResolvedGraceMs: Int64 = 15_000
    /// How long unified readers see a terminal record (design note: 30 days).
    public static let unifiedRetentionMs: Int64 = 30 * 24 * 60 * 60 * 1000

    /// The profile's operator features.
    public var features: OperatorProfileFeatures
    /// Records by exact id (terminal ones until their retention ends).
    private(set) var records: [ExactID: ApprovalRecord] = [:]
    /// Every resolve attempt, in order.
    public private(set) var resolveAttempts: [ResolveAttempt] = []
    private var creationOrder: [ExactID] = []
    private var random: SeededRandom

    /// Creates an empty store.
    public init(features: OperatorProfileFeatures = .current, random: SeededRandom = SeededRandom(seed: 0)) {
        self.features = features
        self.random = random
    }

    /// Records in creation order.
    public var all: [ApprovalRecord] { creationOrder.compactMap { records[$0] } }

    /// The record with exactly this id.
    public func record(id: String) -> ApprovalRecord? { records[ExactID(id)] }

    /// The earliest instant at which `expire(nowMs:)` has work: a pending deadline or the end of a
    /// retention window. The actor schedules its wake-up there.
    public var nextDeadlineMs: Int64? {
        // Read in place, no array built (the Gateway's timer asks after every frame).
        let retention = retentionMs
        var earliest: Int64?
        for record in records.values {
            let deadline: Int64
            if record.status == .pending {
                deadline = record.expiresAtMs
            } else if let resolvedAtMs = record.resolvedAtMs {
                deadline = resolvedAtMs + retention
            } else {
                continue
            }
            if earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        return earliest
    }

    private var retentionMs: Int64 {
        features.unifiedApprovals ? Self.unifiedRetentionMs : Self.legacyResolvedGraceMs
    }

    // MARK: - Lifecycle

    /// Creates an approval, as another surface (an agent run) would, and announces it.
    ///
    /// - Parameters:
    ///   - draft: What to create.
    ///   - route: Where it was delivered; `.none` denies it at once with reason `no-route`
    ///     (A.8), without a `…requested` event.
    ///   - nowMs: Gateway clock.
    /// - Returns: The record and its effects (`…requested`, `session.approval`, observations), or
    ///   `approval id already pending` for a pending id, or invalid params for an empty, `.` or
    ///   `..` id.
    public mutating func create(_ draft: ApprovalDraft, route: ApprovalDeliveryRoute = .approvalClient,
                                nowMs: Int64) -> OperatorAttempt<ApprovalRecord> {
        var effects = expire(nowMs: nowMs)
        let id = draft.id ?? random.uuidString()
        guard Self.isWellFormedId(id) else {
            return OperatorResult(.failure(OperatorError(ApprovalErrors.invalidParams(GatewayMethod.execApprovalRequest.rawValue, "id is not a well-formed approval id"))), effects: effects)
        }
        if records[ExactID(id)]?.status == .pending { return OperatorResult(.failure(OperatorError(ApprovalErrors.idAlreadyPending)), effects: effects) }
        // A finished record with the same id is replaced by a new lifecycle.
        let lifetime = max(1, draft.expiresInMs ?? features.defaultExecApprovalTimeoutMs)
        let record = ApprovalRecord(
            id: id, presentation: draft.presentation, allowedDecisions: draft.allowedDecisions, createdAtMs: nowMs,
            expiresAtMs: nowMs + lifetime, sourceAgentId: draft.agentId, sourceSessionKey: draft.sessionKey,
            reviewerDeviceIds: draft.reviewerDeviceIds, legacyRequest: draft.legacyRequest)
        records[ExactID(id)] = record
        creationOrder.removeAll { $0 == ExactID(id) }
        creationOrder.append(ExactID(id))
        effects.append(.observed(OperatorRecordEvent(kind: .approval, id: id, action: .requested, status: .approval(.pending))))
        if route == .none {
            effects += settle(id, status: .denied, decision: .deny, reason: .noRoute,
                              resolver: ApprovalResolver(kind: .system), resolvedBy: nil, nowMs: nowMs)
            return OperatorResult(.success(records[ExactID(id)] ?? record), effects: effects)
        }
        if let name = ExecApprovalWire.requestedEventName(record.presentation.kind) {
            effects.append(.publish(OperatorEvent(name: name, payload: ExecApprovalWire.requestedPayload(record),
                                                  audience: legacyAudience(of: record))))
        }
        if let event = sessionApprovalEvent(record, nowMs: nowMs) { effects.append(.publish(event)) }
        return OperatorResult(.success(record), effects: effects)
    }

    /// Expires every pending approval whose deadline has come (`now >= expiresAtMs`) and forgets
    /// terminal records whose retention has ended.
    public mutating func expire(nowMs: Int64) -> [OperatorEffect] {
        var effects: [OperatorEffect] = []
        for key in creationOrder {
            guard let record = records[key], record.status == .pending, nowMs >= record.expiresAtMs else { continue }
            effects += settle(record.id, status: .expired, decision: nil, reason: .timeout,
                              resolver: ApprovalResolver(kind: .system), resolvedBy: nil, nowMs: nowMs)
        }
        let retention = retentionMs
        let forgotten = records.values.filter { record in
            guard record.status.isTerminal, let resolvedAtMs = record.resolvedAtMs else { return false }
            return nowMs >= resolvedAtMs + retention
        }.map { ExactID($0.id) }
        for key in forgotten { records[key] = nil }
        if !forgotten.isEmpty { creationOrder.removeAll { forgotten.contains($0) } }
        return effects
    }

    /// Ends a pending approval now with `expired`, regardless of its deadline (scripting).
    /// Fails with `approval not found` when the id is unknown or already terminal.
    public mutating func expireNow(id: String, nowMs: Int64) -> OperatorAttempt<ApprovalRecord> {
        endPending(id, status: .expired, reason: .timeout, nowMs: nowMs)
    }

    /// Cancels a pending approval (`run-aborted` or `gateway-restart`); the blocked command never
    /// resumes and a legacy caller sees `decision: null`. Fails with `approval not found` when the
    /// id is unknown or already terminal.
    public mutating func cancel(id: String, reason: ApprovalTerminalReason = .runAborted,
                                nowMs: Int64) -> OperatorAttempt<ApprovalRecord> {
        endPending(id, status: .cancelled, reason: reason, nowMs: nowMs)
    }

    private mutating func endPending(_ id: String, status: ApprovalStatus, reason: ApprovalTerminalReason,
                                     nowMs: Int64) -> OperatorAttempt<ApprovalRecord> {
        var effects = expire(nowMs: nowMs)
        guard records[ExactID(id)]?.status == .pending else {
            return OperatorResult(.failure(OperatorError(ApprovalErrors.unifiedNotFound)), effects: effects)
        }
        effects += settle(id, status: status, decision: nil, reason: reason,
                          resolver: ApprovalResolver(kind: .system), resolvedBy: nil, nowMs: nowMs)
        guard let record = records[ExactID(id)] else { return OperatorResult(.failure(OperatorError(ApprovalErrors.unifiedNotFound)), effects: effects) }
        return OperatorResult(.success(record), effects: effects)
    }

    /// A Gateway restart: every pending approval becomes `cancelled` (`gateway-restart`).
    public mutating func cancelAllPendingForRestart(nowMs: Int64) -> [OperatorEffect] {
        all.filter { $0.status == .pending }.flatMap { record in
            settle(record.id, status: .cancelled, decision: nil, reason: .gatewayRestart,
                   resolver: ApprovalResolver(kind: .system), resolvedBy: nil, nowMs: nowMs)
        }
    }

    /// Resolves an approval from a scripted surface with the unified rules (first answer wins; a
    /// decision that was not offered force-denies with `malformed-verdict`).
    public mutating func resolve(id: String, decision: ApprovalDecision, as caller: OperatorCaller = .surface("script"),
                                 nowMs: Int64) -> OperatorResult<ApprovalResolution> {
        let kind = records[ExactID(id)]?.presentation.kind.rawValue
        return resolveUnified(id: id, kind: kind, decision: decision.rawValue, paramsValid: true,
                              caller: caller, channel: .script, nowMs: nowMs)
    }

    // MARK: - Shared rules

    /// Ids are any non-empty string except `.` and `..` (safe in a deep-link path). Swift strings
    /// cannot hold lone surrogates, the other excluded case.
    public static func isWellFormedId(_ id: String) -> Bool {
        !id.isEmpty && id != "." && id != ".."
    }

    /// The unified resolve rule (A.5): exact id; terminal → the recorded winner
    /// (`applied:false`); a wrong kind, a decision not offered or invalid params → forced deny
    /// with `malformed-verdict` (applied); otherwise the decision wins.
    mutating func resolveUnified(id: String, kind: String?, decision: String?, paramsValid: Bool,
                                 caller: OperatorCaller, channel: ResolveAttempt.Channel,
                                 resolver explicitResolver: ApprovalResolver? = nil,
                                 nowMs: Int64) -> OperatorResult<ApprovalResolution> {
        var effects = expire(nowMs: nowMs)
        let requested = decision ?? "<none>"
        guard let record = records[ExactID(id)], record.isVisible(to: caller) else {
            effects += logAttempt(id: id, record: nil, caller: caller, channel: channel, requested: requested,
                                  result: .rejected(code: ErrorCode.invalidRequest.rawValue, reason: ErrorCode.approvalNotFound.rawValue), nowMs: nowMs)
            return OperatorResult(.notFound, effects: effects)
        }
        if record.status.isTerminal {
            effects += logAttempt(id: id, record: record, caller: caller, channel: channel, requested: requested,
                                  result: .lost(winnerStatus: record.status.rawValue), nowMs: nowMs)
            return OperatorResult(.alreadyTerminal(record), effects: effects)
        }
        let parsed = decision.flatMap(ApprovalDecision.init(rawValue:))
        let offered = parsed.map { $0 == .deny || record.allowedDecisions.contains($0) } ?? false
        let wellFormed = paramsValid && kind == record.presentation.kind.rawValue && offered
        let resolver = explicitResolver ?? ApprovalResolver(caller: caller)
        if wellFormed, let parsed {
            effects += settle(id, status: parsed == .deny ? .denied : .allowed, decision: parsed, reason: .user,
                              resolver: resolver, resolvedBy: caller.resolvedByLabel, nowMs: nowMs)
        } else {
            effects += settle(id, status: .denied, decision: .deny, reason: .malformedVerdict,
                              resolver: resolver, resolvedBy: caller.resolvedByLabel, nowMs: nowMs)
        }
        let settled = records[ExactID(id)] ?? record
        effects += logAttempt(id: id, record: settled, caller: caller, channel: channel, requested: requested,
                              result: .applied, nowMs: nowMs)
        return OperatorResult(.applied(settled), effects: effects)
    }

    /// Moves a pending record to a terminal state and produces the announcements:
    /// the legacy `…resolved` event (only when a decision was made and the request was announced),
    /// `session.approval` (unified profiles, session-bound records), the settlement for waiters
    /// and an observation.
    mutating func settle(_ id: String, status: ApprovalStatus, decision: ApprovalDecision?,
                         reason: ApprovalTerminalReason, resolver: ApprovalResolver, resolvedBy: String?,
                         nowMs: Int64) -> [OperatorEffect] {
        guard var record = records[ExactID(id)], record.status == .pending else { return [] }
        record.status = status
        record.decision = decision
        record.reason = reason
        record.resolvedAtMs = nowMs
        record.resolver = resolver
        record.resolvedBy = resolvedBy
        records[ExactID(id)] = record
        var effects: [OperatorEffect] = []
        // No legacy event for expiry or cancellation: none was found upstream (A.4, ⚠️ UNCONFIRMED);
        // legacy callers learn it from `decision: null`.
        if ExecApprovalWire.legacyDecision(record) != nil {
            effects.append(.publish(OperatorEvent(name: ExecApprovalWire.resolvedEventName(record.presentation.kind),
                                                  payload: ExecApprovalWire.resolvedPayload(record),
                                                  audience: legacyAudience(of: record))))
        }
        if let event = sessionApprovalEvent(record, nowMs: nowMs) { effects.append(.publish(event)) }
        effects.append(.settled(.approval(record)))
        effects.append(.observed(OperatorRecordEvent(kind: .approval, id: id, action: .resolved, status: .approval(status),
                                                     decision: decision?.rawValue, surface: resolvedBy)))
        return effects
    }

    /// Legacy approval events go only to sessions that may see the record (A.4).
    private func legacyAudience(of record: ApprovalRecord) -> OperatorEvent.Audience {
        record.reviewerDeviceIds.isEmpty ? .broadcast : .adminOrDevices(record.reviewerDeviceIds)
    }

    /// `session.approval {sessionKey, updatedAtMs, phase, approval}` for session-bound records on
    /// profiles with the unified family (2026.7); the snapshot carries no attribution.
    private func sessionApprovalEvent(_ record: ApprovalRecord, nowMs: Int64) -> OperatorEvent? {
        guard features.unifiedApprovals, let sessionKey = record.sourceSessionKey else { return nil }
        let payload: JSONValue = [
            "sessionKey": .string(sessionKey),
            "updatedAtMs": .int(nowMs),
            "phase": record.status.isTerminal ? "terminal" : "pending",
            "approval": record.snapshot(basePath: features.controlUIBasePath, withAttribution: false),
        ]
        return OperatorEvent(name: GatewayEventName.sessionApproval.rawValue, payload: payload, audience: .approvalSubscribers(sessionKey: sessionKey))
    }

    mutating func logAttempt(id: String, record: ApprovalRecord?, caller: OperatorCaller, channel: ResolveAttempt.Channel,
                             requested: String, result: ResolveAttempt.Result, nowMs: Int64) -> [OperatorEffect] {
        let attempt = ResolveAttempt(recordKind: .approval, requestedId: id, recordId: record?.id, surface: caller.surface,
                                     channel: channel, requested: requested, result: result, atMs: nowMs)
        resolveAttempts.append(attempt)
        return [.observed(attempt.recordEvent(status: record.map { .approval($0.status) } ?? .unknown))]
    }

    /// The record legacy readers see for `idOrPrefix` (A.5: legacy accepts id prefixes): exec
    /// approvals that are pending or finished less than 15 s ago, visible to `caller`.
    func legacyLookup(_ idOrPrefix: String, caller: OperatorCaller, nowMs: Int64) -> Result<ApprovalRecord, OperatorError> {
        func isLegacyVisible(_ record: ApprovalRecord) -> Bool {
            guard record.presentation.kind == .exec, record.isVisible(to: caller) else { return false }
            guard record.status.isTerminal, let resolvedAtMs = record.resolvedAtMs else { return true }
            return nowMs < resolvedAtMs + Self.legacyResolvedGraceMs
        }
        if let exact = records[ExactID(idOrPrefix)], isLegacyVisible(exact) { return .success(exact) }
        let matches = all.filter { $0.id.hasExactPrefix(idOrPrefix) && isLegacyVisible($0) }
        switch matches.count {
        case 0: return .failure(OperatorError(ApprovalErrors.legacyNotFound))
        case 1: return .success(matches[0])
        default: return .failure(OperatorError(ApprovalErrors.ambiguousPrefix))
        }
    }
}
