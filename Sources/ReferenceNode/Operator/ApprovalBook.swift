import GatewayProtocol

/// Which approval API family a Gateway offers (docs/protocol.md §7.6).
public enum ApprovalFamily: String, Sendable, Hashable {
    /// `approval.get` / `approval.resolve`.
    case unified
    /// `exec.approval.get` / `exec.approval.resolve` only.
    case legacy
    /// Neither pair is advertised.
    case unavailable

    /// The family to use for the advertised `methods`: unified when both unified methods are
    /// there, legacy only when both are absent and both legacy methods are there.
    static func choose(methods: Set<String>, configuration: ReferenceConfiguration) -> ApprovalFamily {
        if configuration.has(.legacyOnlyUnifiedApprovals) { return .unified }
        let unified = [GatewayMethod.approvalGet, .approvalResolve].map { methods.contains($0.rawValue) }
        if unified.allSatisfy({ $0 }) { return .unified }
        let legacy = [GatewayMethod.execApprovalGet, .execApprovalResolve].allSatisfy { methods.contains($0.rawValue) }
        if unified.allSatisfy({ !$0 }), legacy { return .legacy }
        return .unavailable
    }

    /// The read-back method.
    var getMethod: String { (self == .legacy ? GatewayMethod.execApprovalGet : .approvalGet).rawValue }
    /// The resolve method.
    var resolveMethod: String { (self == .legacy ? GatewayMethod.execApprovalResolve : .approvalResolve).rawValue }
}

/// One approval prompt as the operator side of the reference client shows it
/// (docs/protocol.md §7.2, §7.11).
public struct ApprovalCard: Sendable, Hashable {
    /// Where the card stands.
    public enum Phase: Sendable, Hashable {
        /// Waiting for a decision; the offered decisions are enabled.
        case pending
        /// A resolve is in flight; every action is locked.
        case resolving(decision: String)
        /// The reply was lost or ambiguous; locked until a canonical read-back.
        case uncertain
        /// Final: `status` is `allowed`, `denied`, `expired`, `cancelled`, `resolved-elsewhere`
        /// or `unavailable`.
        case terminal(status: String, decision: String?)
    }

    /// The exact approval id.
    public var id: String
    /// `exec`, `plugin` or `system-agent` (sent as `kind` on `approval.resolve`).
    public var kind: String
    /// The Gateway that owns the prompt (its URL key).
    public var gateway: String
    /// The decisions the record allows.
    public var allowedDecisions: [String]
    /// The deadline on the Gateway clock, if known.
    public var expiresAtMs: Int64?
    /// The card's phase.
    public var phase: Phase
    /// The text the card shows next to its state.
    public var note: String?
    /// The session the approval is bound to, when the Gateway said so (`request.sessionKey`,
    /// `session.approval`, a replay): a replay of that session is authoritative for the card.
    public var sessionKey: String? = nil

    /// The buttons the card offers: the allowed decisions while pending, nothing otherwise.
    public var offeredDecisions: [String] { phase == .pending ? allowedDecisions : [] }

    /// Whether the card accepts no more decisions.
    public var isLocked: Bool { phase != .pending }
}

/// What to do with a resolve request from the user.
enum ResolvePlan: Sendable, Hashable {
    /// Send this request.
    case send(method: String, params: JSONValue)
    /// Refuse, with the reason shown to the user.
    case refuse(String)
    /// The card is unknown here: fetch it first (`approval.get` / `exec.approval.get`).
    case fetchCard
}

/// What to do after a resolve reply.
enum ResolveFollowUp: Sendable, Hashable {
    /// Our decision was applied.
    case applied
    /// Another decision or outcome won; the card shows `note`.
    case lost(note: String)
    /// Read the record back (now if connected, else after the operator reconnects).
    case readBack
    /// Resolve again with `decision` (only the `retry-after-losing-race` mutant does this).
    case retry(decision: String)
}

/// The approval cards of the operator session and their locking rules (docs/protocol.md
/// §7.4-7.6, §7.11), as a value: every method takes an input and says what to do.
struct ApprovalBook: Sendable {
    private struct Key: Hashable {
        var gateway: String
        var id: String
    }

    static let knownDecisions: Set<String> = ["allow-once", "allow-always", "deny"]

    private var cards: [Key: ApprovalCard] = [:]
    /// The Gateway whose prompts are shown and may be resolved.
    private(set) var currentGateway: String

    init(currentGateway: String) {
        self.currentGateway = currentGateway
    }

    /// The cards of the current Gateway, sorted by id.
    var visibleCards: [ApprovalCard] {
        cards.values.filter { $0.gateway == currentGateway }.sorted { $0.id < $1.id }
    }

    /// The card `id` of the current Gateway.
    func card(_ id: String) -> ApprovalCard? { cards[Key(gateway: currentGateway, id: id)] }

    /// Switches Gateways: the old Gateway's prompts stay stored (owner-scoped, restored when
    /// switching back) but are no longer shown or resolvable (D.4).
    mutating func switchGateway(to gateway: String) { currentGateway = gateway }

    /// `allowedDecisions` if well-formed (1-3 unique known values including `deny`), else `nil`:
    /// prompts with a malformed list are dropped (D.1).
    static func validDecisions(_ value: JSONValue?) -> [String]? {
        guard let list = value?.arrayValue?.compactMap(\.stringValue), !list.isEmpty, list.count <= 3,
              Set(list).count == list.count, list.allSatisfy(knownDecisions.contains), list.contains("deny") else { return nil }
        return list
    }

    // MARK: - Events and reads

    /// Adds or refreshes a pending prompt; a terminal card is never turned back to pending.
    mutating func upsertPending(id: String, kind: String, allowedDecisions: [String], expiresAtMs: Int64?,
                                sessionKey: String? = nil) {
        let key = Key(gateway: currentGateway, id: id)
        if var existing = cards[key] {
            existing.allowedDecisions = allowedDecisions
            existing.expiresAtMs = expiresAtMs ?? existing.expiresAtMs
            existing.sessionKey = sessionKey ?? existing.sessionKey
            cards[key] = existing
            return
        }
        cards[key] = ApprovalCard(id: id, kind: kind, gateway: currentGateway, allowedDecisions: allowedDecisions,
                                  expiresAtMs: expiresAtMs, phase: .pending, note: nil, sessionKey: sessionKey)
    }

    /// Applies a canonical terminal state (a tombstone: nothing resurrects the card afterwards).
    mutating func markTerminal(id: String, status: String, decision: String?, note: String) {
        let key = Key(gateway: currentGateway, id: id)
        guard var card = cards[key] else {
            cards[key] = ApprovalCard(id: id, kind: "exec", gateway: currentGateway, allowedDecisions: [],
                                      expiresAtMs: nil, phase: .terminal(status: status, decision: decision), note: note)
            return
        }
        card.phase = .terminal(status: status, decision: decision)
        card.note = note
        cards[key] = card
    }

    /// Applies a unified snapshot (`approval.get`, `approval.resolve`, `session.approval`).
    mutating func apply(snapshot: JSONValue, sessionKey: String? = nil) {
        guard let id = snapshot["id"]?.stringValue, let status = snapshot["status"]?.stringValue else { return }
        let presentation = snapshot["presentation"]
        if status == "pending" {
            guard let decisions = Self.validDecisions(presentation?["allowedDecisions"]) else { return }
            upsertPending(id: id, kind: presentation?["kind"]?.stringValue ?? "exec", allowedDecisions: decisions,
                          expiresAtMs: snapshot["expiresAtMs"]?.int64Value, sessionKey: sessionKey)
        } else {
            markTerminal(id: id, status: status, decision: snapshot["decision"]?.stringValue, note: Self.terminalNote(status))
        }
    }

    /// Applies a Gateway event about approvals; other events are ignored.
    mutating func apply(event: String, payload: JSONValue?) {
        guard let payload else { return }
        switch event {
        case GatewayEventName.execApprovalRequested.rawValue, GatewayEventName.pluginApprovalRequested.rawValue:
            guard let id = payload["id"]?.stringValue,
                  let decisions = Self.validDecisions(payload["request"]?["allowedDecisions"]) else { return }
            let kind = payload["approvalKind"]?.stringValue ?? (event.hasPrefix("plugin") ? "plugin" : "exec")
            upsertPending(id: id, kind: kind, allowedDecisions: decisions, expiresAtMs: payload["expiresAtMs"]?.int64Value,
                          sessionKey: payload["request"]?["sessionKey"]?.stringValue)
        case GatewayEventName.execApprovalResolved.rawValue, GatewayEventName.pluginApprovalResolved.rawValue,
             GatewayEventName.openclawApprovalResolved.rawValue:
            guard let id = payload["id"]?.stringValue else { return }
            let decision = payload["decision"]?.stringValue
            let status = decision.map { $0 == "deny" ? "denied" : "allowed" } ?? "expired"
            markTerminal(id: id, status: status, decision: decision, note: Self.terminalNote(status))
        case GatewayEventName.sessionApproval.rawValue:
            if let snapshot = payload["approval"] { apply(snapshot: snapshot, sessionKey: payload["sessionKey"]?.stringValue) }
        default:
            break
        }
    }

    /// Applies the `approvalReplay` of a `sessions.messages.subscribe` reply (docs/protocol.md §7.3): every
    /// listed approval is applied; with `truncated:false` the replay is authoritative for its
    /// session, so a local pending card of that session it does not list is closed (it ended
    /// while the client was away); with `truncated:true` unseen local cards stay until a
    /// canonical read. Cards of other sessions, or of no known session, are left alone.
    /// - Returns: the ids of the cards that changed.
    mutating func applyReplay(_ replay: JSONValue, configuration: ReferenceConfiguration) -> [String] {
        let sessionKey = replay["sessionKey"]?.stringValue
        let listed = replay["approvals"]?.arrayValue ?? []
        for snapshot in listed { apply(snapshot: snapshot, sessionKey: sessionKey) }
        var changed = listed.compactMap { $0["id"]?.stringValue }
        guard let sessionKey, replay["truncated"]?.boolValue == false, !configuration.has(.ignoreApprovalReplay) else { return changed }
        let present = Set(changed)
        for card in visibleCards where card.phase == .pending && card.sessionKey == sessionKey && !present.contains(card.id) {
            markTerminal(id: card.id, status: "unavailable", decision: nil, note: "This approval is no longer pending.")
            changed.append(card.id)
        }
        return changed
    }

    /// Creates a card from a fetch reply (`approval.get` snapshot or the flat `exec.approval.get`).
    mutating func applyFetched(id: String, family: ApprovalFamily, payload: JSONValue) {
        if family == .legacy {
            guard let decisions = Self.validDecisions(payload["allowedDecisions"]) else { return }
            upsertPending(id: payload["id"]?.stringValue ?? id, kind: "exec", allowedDecisions: decisions,
                          expiresAtMs: payload["expiresAtMs"]?.int64Value)
        } else if let snapshot = payload["approval"] {
            apply(snapshot: snapshot)
        }
    }

    static func terminalNote(_ status: String) -> String {
        switch status {
        case "allowed": "This approval was already allowed."
        case "denied": "This approval was already denied."
        case "expired": "Approval expired before this decision was applied."
        case "cancelled": "Approval was cancelled before this decision was applied."
        default: "This approval is closed."
        }
    }

    // MARK: - Resolving

    /// Decides whether `decision` may be sent for `id` now (D.1, D.2, A.8).
    mutating func prepareResolve(id: String, decision: String, family: ApprovalFamily, gatewayNowMs: Int64,
                                 configuration: ReferenceConfiguration) -> ResolvePlan {
        var key = Key(gateway: currentGateway, id: id)
        if cards[key] == nil {
            if let foreign = cards.keys.first(where: { $0.id == id && $0.gateway != currentGateway }) {
                // A prompt of another Gateway is never resolved on this connection (D.4).
                guard configuration.has(.resolveOldGatewayPrompt) else {
                    return .refuse("This approval belongs to a different gateway.")
                }
                key = foreign
            } else {
                return .fetchCard
            }
        }
        guard var card = cards[key] else { return .fetchCard }
        guard family != .unavailable else { return .refuse("approvals are unavailable on this gateway") }
        let expired: Bool = {
            if case .terminal(let status, _) = card.phase { return status == "expired" }
            return card.expiresAtMs.map { gatewayNowMs >= $0 } ?? false
        }()
        if expired {
            // A.8: now == expiresAtMs already counts as expired; an expired prompt is locked.
            if !configuration.has(.resolveExpiredApproval) {
                card.phase = .terminal(status: "expired", decision: nil)
                card.note = Self.terminalNote("expired")
                cards[key] = card
                return .refuse("approval expired")
            }
        } else if case .terminal(let status, _) = card.phase {
            return .refuse("approval already \(status)")
        }
        switch card.phase {
        case .resolving: return .refuse("a decision is already being sent")
        case .uncertain: return .refuse("Decision status is unknown. Actions remain locked until OpenClaw reconnects.")
        case .pending, .terminal: break
        }
        if !configuration.has(.ignoreAllowedDecisions), !card.allowedDecisions.contains(decision) {
            return .refuse("decision \(decision) is not offered (allowed: \(card.allowedDecisions.joined(separator: ", ")))")
        }
        card.phase = .resolving(decision: decision)
        cards[key] = card
        let params: JSONValue = family == .legacy
            ? ["id": .string(id), "decision": .string(decision)]
            : ["id": .string(id), "kind": .string(configuration.has(.execKindForEveryApproval) ? "exec" : card.kind),
               "decision": .string(decision)]
        return .send(method: family.resolveMethod, params: params)
    }

    /// Applies the outcome of a resolve request (D.2).
    mutating func completeResolve(id: String, decision: String, family: ApprovalFamily,
                                  result: Result<JSONValue, RequestFailure>,
                                  configuration: ReferenceConfiguration) -> ResolveFollowUp {
        let key = cards[Key(gateway: currentGateway, id: id)] != nil
            ? Key(gateway: currentGateway, id: id)
            : (cards.keys.first { $0.id == id } ?? Key(gateway: currentGateway, id: id))
        guard var card = cards[key] else { return .lost(note: "unknown approval") }
        func setUncertain() -> ResolveFollowUp {
            card.phase = .uncertain
            card.note = "Decision status is unknown. Actions remain locked until OpenClaw reconnects."
            cards[key] = card
            return .readBack
        }
        func loser(status: String, winner: String?, note: String) -> ResolveFollowUp {
            if configuration.has(.retryAfterLosingRace) {
                card.phase = .pending
                cards[key] = card
                return .retry(decision: decision)
            }
            card.phase = .terminal(status: status, decision: winner)
            card.note = note
            cards[key] = card
            return .lost(note: note)
        }
        switch result {
        case .success(let payload):
            if family == .legacy {
                card.phase = .terminal(status: decision == "deny" ? "denied" : "allowed", decision: decision)
                card.note = "Resolved by gateway."
                cards[key] = card
                return .applied
            }
            guard let applied = payload["applied"]?.boolValue, let snapshot = payload["approval"],
                  let status = snapshot["status"]?.stringValue else { return setUncertain() }
            let recorded = snapshot["decision"]?.stringValue
            if applied {
                // An applied reply whose decision differs from ours is not a valid acknowledgement.
                guard recorded == decision else { return setUncertain() }
                card.phase = .terminal(status: status, decision: recorded)
                card.note = nil
                cards[key] = card
                return .applied
            }
            return loser(status: status, winner: recorded, note: Self.terminalNote(status))
        case .failure(let failure):
            if failure.isAmbiguous {
                if configuration.has(.noReadbackAfterLostAck) {
                    card.phase = .pending
                    card.note = nil
                    cards[key] = card
                    return .lost(note: "no reply")
                }
                return setUncertain()
            }
            if case .gateway(let error) = failure, error.details?["reason"]?.stringValue == "APPROVAL_ALREADY_RESOLVED" {
                return loser(status: "resolved-elsewhere", winner: nil, note: "Approval was resolved elsewhere.")
            }
            return setUncertain()
        }
    }

    /// The cards of the current Gateway waiting for a read-back.
    var readBackCandidates: [String] {
        cards.values.filter { $0.gateway == currentGateway && $0.phase == .uncertain }.map(\.id).sorted()
    }

    /// Applies a read-back (D.3): pending unlocks with a note, terminal is final, anything else
    /// (not found, failure) keeps the card locked.
    mutating func applyReadBack(id: String, family: ApprovalFamily, result: Result<JSONValue, RequestFailure>) {
        let key = Key(gateway: currentGateway, id: id)
        guard var card = cards[key], card.phase == .uncertain, case .success(let payload) = result else { return }
        if family == .legacy {
            // The legacy get is pending-only: a reply means the decision was not recorded.
            card.phase = .pending
            card.note = "The previous decision was not recorded. Review and try again."
            cards[key] = card
            return
        }
        guard let snapshot = payload["approval"], let status = snapshot["status"]?.stringValue else { return }
        if status == "pending" {
            card.phase = .pending
            card.note = "The previous decision was not recorded. Review and try again."
            cards[key] = card
        } else {
            markTerminal(id: id, status: status, decision: snapshot["decision"]?.stringValue, note: Self.terminalNote(status))
        }
    }
}
