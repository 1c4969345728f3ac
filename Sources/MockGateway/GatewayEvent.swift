import GatewayProtocol

/// Something the fake Gateway did or saw, as a typed value. Scenarios and tests wait on these
/// (with deadlines) instead of sleeping; `harness serve` prints them.
public enum GatewayEvent: Sendable, Hashable {
    /// The state directory could not be written (the Gateway keeps serving from memory).
    case stateSaveFailed(message: String)
    /// A WebSocket connection was accepted and challenged.
    case connectionOpened(connectionId: String, remoteAddress: String, nonce: String)
    /// A connection ended. `code` is the close code sent or received (1006 when the TCP
    /// connection dropped without a close frame).
    case connectionClosed(connectionId: String, code: Int, reason: String)
    /// A frame arrived (`frame` is `nil` when the message was not a valid frame).
    case frameIn(connectionId: String, frame: Frame?, binary: Bool)
    /// A frame was sent.
    case frameOut(connectionId: String, frame: Frame)
    /// The handshake failed; the error was sent and the connection closed with `closeCode`.
    case handshakeRejected(connectionId: String, error: ErrorShape, closeCode: Int)
    /// `hello-ok` was sent.
    case sessionOpened(SessionInfo)
    /// A pairing request was created (`device.pair.requested`).
    case pairingRequested(PairingRequestInfo)
    /// An identical retry refreshed a pending request in place (same `requestId`).
    case pairingRefreshed(PairingRequestInfo)
    /// A changed retry replaced pending requests with a new one.
    case pairingSuperseded(oldRequestIds: [String], newRequestId: String, deviceId: String)
    /// A pairing request ended: `approved` or `rejected` (`device.pair.resolved`), or `withdrawn`.
    case pairingResolved(requestId: String, deviceId: String, decision: PairingResolvedDecision)
    /// A pending pairing request expired.
    case pairingExpired(requestId: String, deviceId: String)
    /// A node registered after `hello-ok`.
    case nodeConnected(nodeId: String, connectionId: String)
    /// A node's connection ended (or was replaced by a newer socket).
    case nodeDisconnected(nodeId: String, connectionId: String)
    /// A `node.invoke.request` was sent to a node.
    case invokeSent(id: String, nodeId: String, command: String, connectionId: String)
    /// A `node.invoke.result` arrived. `matched` is false for an unknown or late id
    /// (acknowledged with `ignored:true`).
    case invokeResult(id: String, nodeId: String, ok: Bool, matched: Bool, connectionId: String)
    /// A `node.event` arrived and was answered.
    case nodeEvent(nodeId: String, event: String, payloadJSON: String?, connectionId: String)
    /// A `node.presence.alive` beacon was answered; `handled` and `reason` as sent (on a
    /// `bareOK` profile, the reply was a bare `{ok:true}` and `handled` is what the Gateway
    /// would have decided).
    case presenceHandled(nodeId: String, trigger: String?, handled: Bool, reason: NodeEventReason)
    /// A push registration (`push.apns.register`) was accepted (`accepted`) or ignored.
    case pushRegistered(nodeId: String, transport: PushTransport, accepted: Bool, gatewayDeviceId: String?)
    /// A push went to a node's transport (`push.test`, a silent wake): `relay` or `direct`, `alert` or
    /// `background`, and whether the transport accepted it.
    case pushSent(nodeId: String, transport: PushTransport, pushType: String, accepted: Bool)
    /// A foreground-only command refused in the background was queued for the node to pull.
    case pendingActionQueued(nodeId: String, actionId: String, command: String)
    /// A request other than the ones above was answered.
    case requestHandled(connectionId: String, method: String, ok: Bool, errorCode: String?)
    /// A device token was issued, rotated or revoked.
    case deviceToken(deviceId: String, role: GatewayRole, action: DeviceTokenAction)
    /// A fault was injected (for the transcript and reports).
    case faultInjected(description: String)
    /// The Gateway sent `shutdown` and closed every connection with 1012.
    case shutdown
    /// The Gateway accepts connections again after a restart.
    case restarted
    /// An operator-side record changed: an approval or a question was created or resolved, or
    /// somebody tried to resolve one (`resolveAttempt`).
    case operatorRecord(OperatorRecordEvent)
    /// A row was appended to a chat transcript (a `chat.send` applied, or the scripted agent's
    /// reply or post), whether or not any connection was subscribed to its `session.message`.
    case chatMessageStored(ChatMessage)
    /// The canvas host answered an HTTP request (capability-scoped or with a Bearer secret).
    case canvasRequest(CanvasRequestInfo)
    /// An Apple Watch direct-mode request reached the Gateway (logged when it is taken in, before
    /// it is answered: a poll may then wait). Its deadlines (the poll's 20 s, the session's idle
    /// timeout) start with it, so the timer loop wakes on it.
    case watchRequest(method: String, path: String)
    /// The Gateway answered an Apple Watch direct-mode request (a held poll when its answer came,
    /// or 499 when its client went away first): what the client sent that its rules judge and the
    /// status (docs/protocol.md §13).
    case watchAnswered(WatchExchangeInfo)
    /// A client called a method this Gateway does not serve (it was answered `unknown method`);
    /// logged once per method name for the life of the Gateway, with the first connection that
    /// called it.
    case methodUnserved(method: String, connectionId: String)
}

/// A session that completed the handshake.
public struct SessionInfo: Sendable, Hashable {
    /// The connection id.
    public var connectionId: String
    /// `role` as granted.
    public var role: GatewayRole
    /// Scopes as granted.
    public var scopes: [String]
    /// The device id, when the connect had a device identity.
    public var deviceId: String?
    /// `client.id`.
    public var clientId: String
    /// `client.mode`.
    public var clientMode: String
    /// The negotiated protocol version (`hello-ok.protocol`).
    public var protocolVersion: Int
    /// How the connect authenticated (`none`, `token`, `password`, `device-token`, `bootstrap-token`).
    public var authMethod: String
    /// Which signature payload verified (`v2` or `v3`), when a device signed.
    public var signatureVersion: String?
    /// The token the connect presented (auth.token, auth.deviceToken or auth.bootstrapToken), if any.
    public var presentedToken: String?
    /// The device token sent in `hello-ok.auth.deviceToken`, if any.
    public var issuedDeviceToken: String?

    /// Creates a session description.
    public init(connectionId: String, role: GatewayRole, scopes: [String], deviceId: String?, clientId: String,
                clientMode: String, protocolVersion: Int, authMethod: String, signatureVersion: String?,
                presentedToken: String?, issuedDeviceToken: String?) {
        self.connectionId = connectionId
        self.role = role
        self.scopes = scopes
        self.deviceId = deviceId
        self.clientId = clientId
        self.clientMode = clientMode
        self.protocolVersion = protocolVersion
        self.authMethod = authMethod
        self.signatureVersion = signatureVersion
        self.presentedToken = presentedToken
        self.issuedDeviceToken = issuedDeviceToken
    }
}

/// A pending pairing request as the scripting API and `harness serve` show it.
public struct PairingRequestInfo: Sendable, Hashable {
    /// The request id.
    public var requestId: String
    /// The device asking.
    public var deviceId: String
    /// The role of the connect that created or last refreshed it.
    public var role: GatewayRole
    /// Every role asked for (merged over superseded requests).
    public var roles: [GatewayRole]
    /// The operator scopes asked for.
    public var scopes: [String]
    /// When it was created (Gateway clock).
    public var createdAtMs: Int64

    /// Creates a request description.
    public init(requestId: String, deviceId: String, role: GatewayRole, roles: [GatewayRole], scopes: [String], createdAtMs: Int64) {
        self.requestId = requestId
        self.deviceId = deviceId
        self.role = role
        self.roles = roles
        self.scopes = scopes
        self.createdAtMs = createdAtMs
    }

    /// The description of a pending request of the pairing store.
    public init(_ request: PairingRequest) {
        self.init(requestId: request.requestId, deviceId: request.deviceId, role: request.role,
                  roles: request.roles, scopes: request.scopes, createdAtMs: request.ts)
    }
}

/// Which kind of operator record an ``OperatorRecordEvent`` is about.
public enum OperatorRecordKind: String, Sendable, Hashable, CustomStringConvertible {
    /// An approval.
    case approval
    /// An agent question.
    case question

    /// `approval` or `question`, as the event log and the console spell it.
    public var description: String { rawValue }
}

/// An operator record's status as an ``OperatorRecordEvent`` reports it.
public enum OperatorRecordStatus: Sendable, Hashable, CustomStringConvertible {
    /// An approval's status.
    case approval(ApprovalStatus)
    /// A question's status.
    case question(QuestionStatus)
    /// A resolve attempt named an id that is no record.
    case unknown

    /// The spelling of the event log and the console (`pending`, `allowed`, `answered`, `unknown`, ...).
    public var rawValue: String {
        switch self {
        case .approval(let status): status.rawValue
        case .question(let status): status.rawValue
        case .unknown: "unknown"
        }
    }

    /// The same as ``rawValue``.
    public var description: String { rawValue }
}

/// An operator-side record event: approvals and questions.
public struct OperatorRecordEvent: Sendable, Hashable {
    /// What happened.
    public enum Action: String, Sendable, Hashable {
        /// The record was created.
        case requested
        /// The record reached a terminal state (decision, answer, expiry, cancellation).
        case resolved
        /// Somebody tried to resolve it; `applied` says whether that attempt won.
        case resolveAttempt
    }

    /// Approval or question.
    public var kind: OperatorRecordKind
    /// The record id.
    public var id: String
    /// What happened.
    public var action: Action
    /// The record's status afterwards (`pending`, `allowed`, `denied`, `answered`, `cancelled`, `expired`, ...).
    public var status: OperatorRecordStatus
    /// The decision or answer, as JSON text, when there is one. Text rather than an enum on
    /// purpose: it holds what was sent as well as what was applied (a question's answers document,
    /// or an attempt's decision that the Gateway refused as not allowed), which no closed set of
    /// cases can carry without losing the value a scenario's failure message should show.
    public var decision: String?
    /// Who acted: a connection id, or a named surface of the scripting API.
    public var surface: String?
    /// For `resolveAttempt`: whether this attempt was the one applied.
    public var applied: Bool?
    /// For `resolveAttempt`: the method used (`approval.resolve`, `exec.approval.resolve`, `question.resolve`).
    public var method: String?

    /// Creates an operator record event.
    public init(kind: OperatorRecordKind, id: String, action: Action, status: OperatorRecordStatus, decision: String? = nil,
                surface: String? = nil, applied: Bool? = nil, method: String? = nil) {
        self.kind = kind
        self.id = id
        self.action = action
        self.status = status
        self.decision = decision
        self.surface = surface
        self.applied = applied
        self.method = method
    }
}

/// How a pairing request ended, as ``GatewayEvent/pairingResolved(requestId:deviceId:decision:)``
/// reports it: the two decisions `device.pair.resolved` announces, or `withdrawn` (the request
/// went away without an announcement).
public enum PairingResolvedDecision: String, Sendable, Hashable, CustomStringConvertible {
    /// Approved (manually or silently).
    case approved
    /// Rejected, or superseded by a newer request of the same device.
    case rejected
    /// Withdrawn without a `device.pair.resolved` announcement.
    case withdrawn

    /// The decision `device.pair.resolved` announced.
    public init(_ decision: PairingDecision) {
        switch decision {
        case .approved: self = .approved
        case .rejected: self = .rejected
        }
    }

    /// The raw value (`approved`), as transcripts and logs print it.
    public var description: String { rawValue }
}

/// What happened to a device token (``GatewayEvent/deviceToken(deviceId:role:action:)``).
public enum DeviceTokenAction: String, Sendable, Hashable, CustomStringConvertible {
    /// Issued in `hello-ok`.
    case issued
    /// Rotated (`device.token.rotate` or the scripting API).
    case rotated
    /// Revoked (`device.token.revoke` or the scripting API).
    case revoked

    /// The raw value (`issued`), as transcripts and logs print it.
    public var description: String { rawValue }
}

/// The `reason` of a structured `node.event` reply (`handled` and `reason`), for example
/// `persisted` or `throttled` for a `node.presence.alive` beacon. Open: a scripted reply
/// (``Gateway/forceNextPresenceReply(handled:reason:)``) may carry any reason.
public struct NodeEventReason: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `persisted`: the beacon was recorded as the device's last-seen time.
    public static let persisted: NodeEventReason = "persisted"
    /// `throttled`: a beacon within the throttle window; handled without a new record.
    public static let throttled: NodeEventReason = "throttled"
    /// `pairing_changed`: the sending session's pairing is no longer current.
    public static let pairingChanged: NodeEventReason = "pairing_changed"
    /// `persist_failed`: the record could not be written.
    public static let persistFailed: NodeEventReason = "persist_failed"
}
