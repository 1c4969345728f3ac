import GatewayProtocol

/// A pending pairing request, created during a failed connect (docs/protocol.md §5.9).
public struct PairingRequest: Sendable, Hashable {
    /// How long a request stays approvable after the device's last retry: 5 minutes.
    public static let lifetimeMs: Int64 = 5 * 60 * 1000

    /// The request id (a UUID), shown to approvers and sent to the device in `details.requestId`.
    public var requestId: String
    /// `device.id`.
    public var deviceId: String
    /// The public key the request is for.
    public var publicKey: String
    /// `client.displayName` of the latest attempt.
    public var displayName: String?
    /// `client.platform` of the latest attempt.
    public var platform: String?
    /// `client.deviceFamily` of the latest attempt.
    public var deviceFamily: String?
    /// `client.id` of the latest attempt.
    public var clientId: ClientID?
    /// `client.mode` of the latest attempt.
    public var clientMode: ClientMode?
    /// The role of the connect that created the request.
    public var role: GatewayRole
    /// Every role the request asks for (merged across superseded requests).
    public var roles: [GatewayRole]
    /// Every operator scope the request asks for (merged across superseded requests).
    public var scopes: [String]
    /// The client IP of the latest attempt.
    public var remoteIp: String?
    /// The browser copilot's extension origin, if the request is one's.
    public var browserOrigin: String?
    /// Whether the request was made for a silent approval path (it is then never announced with
    /// `device.pair.requested` unless that approval fails).
    public var silent: Bool
    /// Whether the device already had a paired record (an upgrade or re-key).
    public var isRepair: Bool
    /// When the request was created; retries never change it.
    public var ts: Int64
    /// When an identical retry last refreshed it.
    public var refreshedAtMs: Int64?

    /// Creates a request.
    public init(
        requestId: String, deviceId: String, publicKey: String, displayName: String? = nil, platform: String? = nil,
        deviceFamily: String? = nil, clientId: ClientID? = nil, clientMode: ClientMode? = nil, role: GatewayRole, roles: [GatewayRole],
        scopes: [String], remoteIp: String? = nil, browserOrigin: String? = nil, silent: Bool = false,
        isRepair: Bool = false, ts: Int64, refreshedAtMs: Int64? = nil
    ) {
        self.requestId = requestId
        self.deviceId = deviceId
        self.publicKey = publicKey
        self.displayName = displayName
        self.platform = platform
        self.deviceFamily = deviceFamily
        self.clientId = clientId
        self.clientMode = clientMode
        self.role = role
        self.roles = roles
        self.scopes = scopes
        self.remoteIp = remoteIp
        self.browserOrigin = browserOrigin
        self.silent = silent
        self.isRepair = isRepair
        self.ts = ts
        self.refreshedAtMs = refreshedAtMs
    }

    /// The device's last retry: the expiry clock starts here.
    public var lastActivityMs: Int64 { refreshedAtMs ?? ts }

    /// The last instant at which the request can still be approved.
    public var expiresAtMs: Int64 { lastActivityMs + Self.lifetimeMs }

    /// Whether the request has expired at `nowMs`: more than 5 minutes after the last retry, so
    /// a device that keeps reconnecting keeps one request alive (the real Gateway prunes when
    /// `now − last > TTL`, hence the strict comparison).
    public func isExpired(atMs nowMs: Int64) -> Bool {
        nowMs - lastActivityMs > Self.lifetimeMs
    }

    /// Whether a retry asking for `ask` refreshes this request in place instead of superseding
    /// it: the same public key, and the same role and scope sets, or an ask this request already
    /// covers.
    ///
    /// With `comparesRole` (the current Gateway, upstream `samePendingApprovalSnapshot` and
    /// `incomingApprovalCoveredByExisting` in upstream
    /// `requestDevicePairingInWorker`), both also need the same primary `role` and browser origin: a device
    /// whose node and operator connections alternate gets a new request id on every alternation,
    /// as the iOS documentation describes ("the previous pending request is superseded and a new
    /// requestId is created"). Without it (protocol-3-era reading), the primary role is ignored
    /// and the alternating device keeps one merged request.
    func isRefreshed(by ask: PairingAsk, comparesRole: Bool) -> Bool {
        guard publicKey == ask.publicKey else { return false }
        if comparesRole, role != ask.role || browserOrigin != ask.browserOrigin { return false }
        if Set(roles) == Set(ask.roles), Set(scopes) == Set(ask.scopes) { return true }
        return covers(ask)
    }

    /// Whether this request already asks for every role and scope of `ask`.
    func covers(_ ask: PairingAsk) -> Bool {
        Set(ask.roles).isSubset(of: roles) && PairingScopes.firstMissing(ask.scopes, granted: scopes) == nil
    }

    /// Refreshes the request for an identical retry: same id, original `ts`, newer metadata.
    mutating func refresh(with ask: PairingAsk, isRepair: Bool, nowMs: Int64) {
        displayName = ask.client.displayName ?? displayName
        platform = ask.client.platform ?? platform
        deviceFamily = ask.client.deviceFamily ?? deviceFamily
        clientId = ask.client.clientId
        clientMode = ask.client.clientMode
        remoteIp = ask.remoteIp ?? remoteIp
        // An interactive retry keeps the request visible to approvers.
        silent = silent && ask.silent
        self.isRepair = self.isRepair || isRepair
        refreshedAtMs = nowMs
    }

    /// The single request that replaces every pending request of the device: a new id, whose
    /// roles and scopes merge what was pending with what is asked now.
    static func supersede(
        _ pending: [PairingRequest], with ask: PairingAsk, requestId: String, isRepair: Bool, nowMs: Int64
    ) -> PairingRequest {
        PairingRequest(
            requestId: requestId, deviceId: ask.deviceId, publicKey: ask.publicKey,
            displayName: ask.client.displayName, platform: ask.client.platform,
            deviceFamily: ask.client.deviceFamily, clientId: ask.client.clientId, clientMode: ask.client.clientMode,
            role: ask.role, roles: uniqued(pending.flatMap(\.roles) + ask.roles),
            scopes: uniqued(pending.flatMap(\.scopes) + ask.scopes), remoteIp: ask.remoteIp, browserOrigin: ask.browserOrigin,
            // Superseding an interactive request keeps the replacement interactive.
            silent: ask.silent && pending.allSatisfy(\.silent), isRepair: isRepair, ts: nowMs)
    }
}

/// What one connect asks pairing for.
struct PairingAsk: Sendable, Hashable {
    var deviceId: String
    var publicKey: String
    var role: GatewayRole
    var roles: [GatewayRole]
    var scopes: [String]
    var client: PairingClientInfo
    var remoteIp: String?
    var browserOrigin: String?
    var silent: Bool

    /// The ask of a plain connect: its role and its grantable scopes.
    init(_ attempt: PairingAttempt, silent: Bool) {
        self.init(attempt, roles: [attempt.role], scopes: attempt.grantableScopes, silent: silent)
    }

    /// An ask widened beyond the connect itself (a bootstrap profile asks for every profile role).
    init(_ attempt: PairingAttempt, roles: [GatewayRole], scopes: [String], silent: Bool) {
        deviceId = attempt.deviceId
        publicKey = attempt.publicKey
        role = attempt.role
        self.roles = uniqued([attempt.role] + roles)
        self.scopes = PairingScopes.normalized(scopes)
        client = attempt.client
        remoteIp = attempt.remoteIp
        browserOrigin = attempt.browserOrigin
        self.silent = silent
    }
}
