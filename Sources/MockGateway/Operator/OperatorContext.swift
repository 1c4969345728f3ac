import GatewayProtocol

/// The operator-side differences between Gateway generations, as plain values so that the pure
/// operator cores do not depend on a whole profile.
public struct OperatorProfileFeatures: Sendable, Hashable {
    /// Whether `approval.get` / `approval.resolve` / `approval.history` and `session.approval`
    /// events exist (2026.7). The legacy `exec.approval.*` family always exists.
    public var unifiedApprovals: Bool
    /// Whether `question.*` exists (2026.7).
    public var questions: Bool
    /// How a missing scope is reported.
    public var missingScopeStyle: GatewayProfile.MissingScopeStyle
    /// The deadline of an `exec.approval.request` without `timeoutMs`
    /// (`DEFAULT_EXEC_APPROVAL_TIMEOUT_MS`; 30 min in recent builds, 2 min in older ones).
    public var defaultExecApprovalTimeoutMs: Int64
    /// The Control UI base path that prefixes `urlPath` (`/approve/<id>`).
    public var controlUIBasePath: String

    /// Creates a feature set.
    public init(
        unifiedApprovals: Bool, questions: Bool, missingScopeStyle: GatewayProfile.MissingScopeStyle,
        defaultExecApprovalTimeoutMs: Int64 = 1_800_000, controlUIBasePath: String = ""
    ) {
        self.unifiedApprovals = unifiedApprovals
        self.questions = questions
        self.missingScopeStyle = missingScopeStyle
        self.defaultExecApprovalTimeoutMs = defaultExecApprovalTimeoutMs
        self.controlUIBasePath = controlUIBasePath
    }

    /// The features of a Gateway profile.
    public init(profile: GatewayProfile) {
        self.init(unifiedApprovals: profile.hasUnifiedApprovals, questions: profile.hasQuestions,
                  missingScopeStyle: profile.missingScopeStyle)
    }

    /// The mid-2026 Gateway.
    public static let current = OperatorProfileFeatures(profile: .current)
    /// The Gateway before unified approvals and questions.
    public static let legacy = OperatorProfileFeatures(profile: .legacy)
}

/// Who is calling: a connected session, or a named surface of the scripting API.
public struct OperatorCaller: Sendable, Hashable {
    /// The session's role.
    public var role: GatewayRole
    /// The session's granted scopes.
    public var scopes: Set<OperatorScope>
    /// The connection id, or the scripted surface's name ("control-ui", "watch", ...). Recorded
    /// with every resolve attempt.
    public var surface: String
    /// The paired device id, when the session has a device identity.
    public var deviceId: String?
    /// `client.id`.
    public var clientId: String?
    /// `client.displayName`.
    public var displayName: String?

    /// Creates a caller.
    public init(role: GatewayRole = .operator, scopes: Set<OperatorScope>, surface: String,
                deviceId: String? = nil, clientId: String? = nil, displayName: String? = nil) {
        self.role = role
        self.scopes = scopes
        self.surface = surface
        self.deviceId = deviceId
        self.clientId = clientId
        self.displayName = displayName
    }

    /// A caller described by the wire strings of its session.
    public init(wireRole: String, wireScopes: [String], surface: String, deviceId: String? = nil,
                clientId: String? = nil, displayName: String? = nil) {
        self.init(role: GatewayRole(rawValue: wireRole), scopes: Set(wire: wireScopes), surface: surface,
                  deviceId: deviceId, clientId: clientId, displayName: displayName)
    }

    /// A scripted surface with `operator.admin`: the "other device" of race scenarios.
    public static func surface(_ name: String, deviceId: String? = nil) -> OperatorCaller {
        OperatorCaller(scopes: [.admin], surface: name, deviceId: deviceId, displayName: name)
    }

    /// The label legacy events carry as `resolvedBy` (upstream: `displayName ?? client.id`),
    /// falling back to the surface name.
    public var resolvedByLabel: String { displayName ?? clientId ?? surface }

    /// Whether the caller holds `operator.admin`.
    public var isAdmin: Bool { scopes.contains(.admin) }
}

/// A broadcast the owning actor must deliver. Every recipient must also pass
/// `EventScopeGate.allows(event:scopes:role:)` for `name`.
public struct OperatorEvent: Sendable, Hashable {
    /// Who should receive the event, before scope gating.
    public enum Audience: Sendable, Hashable {
        /// Every session (filtered by scope).
        case broadcast
        /// The sessions of one session key when the Gateway can tell (questions bound to a
        /// session); otherwise a broadcast. The fake Gateway may simply broadcast.
        case sessionOrBroadcast(sessionKey: String)
        /// Only `operator.admin` sessions and sessions of these paired devices (approvals bound to
        /// reviewer devices; upstream `getApprovalClientConnIds`).
        case adminOrDevices([String])
        /// Only sessions that subscribed to exactly this session key with
        /// `sessions.messages.subscribe {key, includeApprovals:true}` (`session.approval`).
        case approvalSubscribers(sessionKey: String)
    }

    /// The event name, e.g. `exec.approval.requested`.
    public var name: String
    /// The payload.
    public var payload: JSONValue
    /// The intended audience.
    public var audience: Audience
    /// Whether slow consumers may drop it (`dropIfSlow`).
    public var dropIfSlow: Bool

    /// Creates an event.
    public init(name: String, payload: JSONValue, audience: Audience = .broadcast, dropIfSlow: Bool = true) {
        self.name = name
        self.payload = payload
        self.audience = audience
        self.dropIfSlow = dropIfSlow
    }
}

/// A record that became terminal, so the actor can complete the requests waiting on it.
public enum OperatorSettlement: Sendable, Hashable {
    /// An approval reached a terminal status.
    case approval(ApprovalRecord)
    /// A question reached a terminal status; `resolutionId` is the answering call's
    /// client-supplied id (never stored on the record or in events).
    case question(QuestionRecord, resolutionId: String?)
}

/// Something the owning actor must do after a pure operator operation.
public enum OperatorEffect: Sendable, Hashable {
    /// Deliver a broadcast.
    case publish(OperatorEvent)
    /// Complete every waiter whose `subject` matches, with `waiter.finalReply(for:)`.
    case settled(OperatorSettlement)
    /// Report to scenario observers (maps onto `GatewayEvent.operatorRecord`).
    case observed(OperatorRecordEvent)
}

/// A request the actor keeps open until a record settles (long polls and blocking requests).
///
/// Waiters live in the actor, keyed by the request. When an effect `.settled(s)` arrives the actor
/// answers every waiter with `finalReply(for: s)` (non-`nil` only for the waiter's own subject).
/// When the clock reaches `deadlineMs` the actor first applies `expire(nowMs:)` of the owning
/// store (a question may expire at the same instant), then answers still-open waiters with
/// `timeoutReply`.
public struct OperatorWaiter: Sendable, Hashable {
    /// The record waited on.
    public enum Subject: Sendable, Hashable {
        /// An approval id.
        case approval(id: String)
        /// A question id.
        case question(id: String)
    }

    /// Which request is waiting, which decides the reply shape.
    public enum Purpose: Sendable, Hashable {
        /// `exec.approval.request`: `{id, decision|null, createdAtMs, expiresAtMs}`.
        case execApprovalRequest
        /// `exec.approval.waitDecision`: the same plus `terminalReason?`.
        case execApprovalWaitDecision
        /// `question.waitAnswer`: `{status, answers?, resolutionId?}`.
        case questionWaitAnswer(includeResolutionId: Bool)
    }

    /// The record waited on.
    public var subject: Subject
    /// The reply shape.
    public var purpose: Purpose
    /// A first reply to send at once while the request stays open (`twoPhase` `accepted`).
    public var interimReply: JSONValue?
    /// When to give up waiting (question long-poll `timeoutMs`); `nil` waits for settlement.
    public var deadlineMs: Int64?
    /// The reply at `deadlineMs` (`{status:"pending"}`).
    public var timeoutReply: JSONValue?

    /// Creates a waiter.
    public init(subject: Subject, purpose: Purpose, interimReply: JSONValue? = nil,
                deadlineMs: Int64? = nil, timeoutReply: JSONValue? = nil) {
        self.subject = subject
        self.purpose = purpose
        self.interimReply = interimReply
        self.deadlineMs = deadlineMs
        self.timeoutReply = timeoutReply
    }

    /// The final reply for a settlement, or `nil` when it concerns another record.
    public func finalReply(for settlement: OperatorSettlement) -> JSONValue? {
        switch (subject, settlement) {
        case (.approval(let id), .approval(let record)) where record.id.isExactly(id):
            return ExecApprovalWire.decisionReply(record, includeTerminalReason: purpose == .execApprovalWaitDecision)
        case (.question(let id), .question(let record, let resolutionId)) where record.id.isExactly(id):
            let include = if case .questionWaitAnswer(let flag) = purpose { flag } else { false }
            return record.waitAnswerResult(resolutionId: include ? resolutionId : nil)
        default:
            return nil
        }
    }
}

/// How a request to an operator core ends.
public enum OperatorReply: Sendable, Hashable {
    /// `ok:true` with this payload.
    case success(JSONValue)
    /// `ok:false` with this error.
    case failure(ErrorShape)
    /// The request stays open; see `OperatorWaiter`.
    case deferred(OperatorWaiter)
}

/// The result of one request handler: the reply plus the effects to apply.
public struct OperatorOutcome: Sendable, Hashable {
    /// The reply.
    public var reply: OperatorReply
    /// Effects, in order.
    public var effects: [OperatorEffect]

    /// Creates an outcome.
    public init(_ reply: OperatorReply, effects: [OperatorEffect] = []) {
        self.reply = reply
        self.effects = effects
    }

    /// The success payload, if the reply is a success.
    public var payload: JSONValue? { if case .success(let value) = reply { value } else { nil } }
    /// The error, if the reply is a failure.
    public var error: ErrorShape? { if case .failure(let value) = reply { value } else { nil } }
    /// The waiter, if the reply is deferred.
    public var waiter: OperatorWaiter? { if case .deferred(let value) = reply { value } else { nil } }
    /// The events to publish, in order.
    public var events: [OperatorEvent] {
        effects.compactMap { if case .publish(let event) = $0 { event } else { nil } }
    }
}

/// A failed scripting call: the same error a wire client would get.
public struct OperatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error shape.
    public var shape: ErrorShape
    /// Wraps an error shape.
    public init(_ shape: ErrorShape) { self.shape = shape }
    /// `code: message`.
    public var description: String { "\(shape.code): \(shape.message)" }
}
