import GatewayProtocol

/// Who approves a request, for the authority check of `device.pair.approve`
/// (docs/protocol.md §7.10).
///
/// The approver must hold every requested operator scope (with the usual implications:
/// `operator.admin` covers all, `operator.write` covers `operator.read`, ...), so granting
/// `operator.admin` needs admin; approving a non-operator role such as `node` needs admin.
/// The newest Gateway also limits a non-admin device-bound caller to its own device's requests;
/// the fake leaves that out, since its approvals come mostly from scripts and the console.
public struct ApproverContext: Sendable, Hashable {
    /// The approver's operator scopes.
    public var scopes: [String]
    /// Whether the approver may grant roles other than `operator`.
    public var mayApproveNonOperatorRoles: Bool

    /// An operator session holding `scopes`; non-operator roles need `operator.admin` among them.
    public init(scopes: [String]) {
        self.init(scopes: scopes, mayApproveNonOperatorRoles: scopes.contains(OperatorScope.admin.rawValue))
    }

    /// The connecting client itself, for silent approvals: the real Gateway approves with the
    /// client's own scopes as the caller's, so a silent path never grants more operator scopes
    /// than the connect asked for, while it may grant the node role.
    init(scopes: [String], mayApproveNonOperatorRoles: Bool) {
        self.scopes = scopes
        self.mayApproveNonOperatorRoles = mayApproveNonOperatorRoles
    }

    /// Throws when this approver may not grant `request`.
    func authorize(_ request: PairingRequest) throws(PairingError) {
        if !mayApproveNonOperatorRoles, let role = request.roles.first(where: { $0 != GatewayRole.operator }) {
            throw .approvalDenied(role: role)
        }
        if let missing = PairingScopes.firstMissing(request.scopes, granted: scopes) { throw .missingScope(missing) }
    }
}

/// The result of recording a connect's ask as a pending request (docs/protocol.md §5.9).
public struct PendingRequestOutcome: Sendable, Hashable {
    /// The request the device should wait for.
    public var request: PairingRequest
    /// `true` for a new request id (first ask, or a supersede); `false` for a refresh in place.
    public var created: Bool
    /// What to announce, in order.
    public var effects: [PairingEffect]
}

/// A successful approval.
public struct PairingApproval: Sendable, Hashable {
    /// The approved request.
    public var requestId: String
    /// The device record after the approval.
    public var device: PairedDevice
    /// What to announce: `.resolved(approved)` (after any `.expired`).
    public var effects: [PairingEffect]
}

/// A successful rejection.
public struct PairingRejection: Sendable, Hashable {
    /// The rejected request.
    public var requestId: String
    /// Its device.
    public var deviceId: String
    /// The public key the rejected request was for (the bootstrap tokens bound to it are revoked).
    public var publicKey: String
    /// What to announce: `.resolved(rejected)` (after any `.expired`).
    public var effects: [PairingEffect]

    /// The `device.pair.reject` result: `{requestId, deviceId}`.
    public var responsePayload: JSONValue { ["requestId": .string(requestId), "deviceId": .string(deviceId)] }
}

/// A rotated or revoked device token.
public struct DeviceTokenChange: Sendable, Hashable {
    /// The device.
    public var deviceId: String
    /// The token record after the change.
    public var token: DeviceToken
    /// `.disconnect` of the device's sessions in that role.
    public var effects: [PairingEffect]
}

/// Paired devices, pending pairing requests and device tokens: every pairing rule of
/// docs/protocol.md §5 in one value type, without sockets or clocks.
///
/// The owner (the Gateway actor) passes its clock's `nowMs` into every time-dependent method,
/// and applies or broadcasts the returned `PairingEffect`s. Because the owner serialises all
/// calls, "concurrent" approvals of one request are two calls in some order: the first applies,
/// the second throws `PairingError.unknownRequest`.
public struct PairingStore: Sendable {
    // Internal, not private: the durable-state extension restores it.
    var devices: [String: PairedDevice] = [:]
    // Internal, not private: the admission extension (another file) re-marks a failed silent request.
    var pendingById: [String: PairingRequest] = [:]
    /// The device tokens of the paired devices.
    public internal(set) var tokens: DeviceTokenStore
    private var random: SeededRandom
    /// Whether an in-place refresh also needs the same primary role and browser origin (see
    /// `GatewayProfile.supersessionComparesRole`).
    public var supersessionComparesRole: Bool
    /// Whether a setup code is approved silently only for an official mobile app (see
    /// `GatewayProfile.setupCodeApprovalRequiresMobileClient`).
    public var setupCodeApprovalRequiresMobileClient: Bool

    /// Creates an empty store; request ids and token bytes come from `random`, token bytes from
    /// the system's secure generator instead when `systemSecrets` is set.
    /// - Parameters:
    ///   - supersessionComparesRole: the current Gateway's refresh rule (default) or the
    ///     protocol-3-era one.
    ///   - setupCodeApprovalRequiresMobileClient: the current Gateway's setup-code rule (default)
    ///     or the protocol-3-era one.
    public init(random: SeededRandom, systemSecrets: Bool = false, supersessionComparesRole: Bool = true,
                setupCodeApprovalRequiresMobileClient: Bool = true) {
        var random = random
        tokens = DeviceTokenStore(random: SeededRandom(seed: random.next()), systemSecrets: systemSecrets)
        self.random = random
        self.supersessionComparesRole = supersessionComparesRole
        self.setupCodeApprovalRequiresMobileClient = setupCodeApprovalRequiresMobileClient
    }

    // MARK: Reading

    /// The paired record of `deviceId`.
    public func pairedDevice(_ deviceId: String) -> PairedDevice? { devices[deviceId] }

    /// Every paired record, most recently approved first.
    public var pairedDevices: [PairedDevice] {
        devices.values.sorted { ($0.approvedAtMs, $0.deviceId) > ($1.approvedAtMs, $1.deviceId) }
    }

    /// The pending request `requestId`, unless it is unknown or expired at `nowMs`.
    public func pendingRequest(_ requestId: String, nowMs: Int64) -> PairingRequest? {
        guard let request = pendingById[requestId], !request.isExpired(atMs: nowMs) else { return nil }
        return request
    }

    /// The pending requests alive at `nowMs`, newest first (optionally only those of `deviceId`).
    public func pendingRequests(nowMs: Int64, deviceId: String? = nil) -> [PairingRequest] {
        pendingById.values
            .filter { !$0.isExpired(atMs: nowMs) && (deviceId == nil || $0.deviceId == deviceId) }
            .sorted { ($0.ts, $0.requestId) > ($1.ts, $1.requestId) }
    }

    /// Whether `deviceId` is paired with `role` approved (for example `node.presence.alive`'s
    /// `pairing_changed` check).
    public func isPaired(deviceId: String, role: GatewayRole) -> Bool {
        devices[deviceId]?.hasRole(role) ?? false
    }

    /// The earliest Gateway-clock instant at which a pending request expires (one millisecond
    /// after its `expiresAtMs`), for the owner's timer; `nil` when nothing is pending.
    public var nextExpiryMs: Int64? {
        // Read in place (the Gateway's timer asks after every frame).
        pendingById.values.lazy.map { $0.expiresAtMs + 1 }.min()
    }

    // MARK: Requirement (docs/protocol.md §5.7)

    /// Whether `attempt` may proceed, or which approval it needs. Pinned metadata is checked
    /// first, then the role, then the scopes, as the real Gateway does; the first failing check
    /// names the requirement.
    public func evaluate(_ attempt: PairingAttempt) -> PairingEvaluation {
        guard let record = devices[attempt.deviceId], record.publicKey == attempt.publicKey else {
            return .required(.notPaired, existing: devices[attempt.deviceId])
        }
        if DeviceMetadataPin.requiresReapproval(record: record, client: attempt.client) {
            return .required(.metadataUpgrade, existing: record)
        }
        if !record.hasRole(attempt.role) { return .required(.roleUpgrade, existing: record) }
        if !record.allowsScopes(attempt.scopes, for: attempt.role) { return .required(.scopeUpgrade, existing: record) }
        return .paired(record)
    }

    // MARK: Pending requests (docs/protocol.md §5.9)

    /// Records the ask of a connect that needs manual approval: refreshes the device's pending
    /// request in place for an identical retry, or supersedes every pending request of the
    /// device with one merged request.
    public mutating func requestPairing(for attempt: PairingAttempt, nowMs: Int64) -> PendingRequestOutcome {
        var outcome = upsert(PairingAsk(attempt, silent: false), nowMs: nowMs)
        if outcome.created { outcome.effects.append(.requested(outcome.request)) }
        return outcome
    }

    /// The refresh-or-supersede rule; announces everything but `.requested`, which depends on
    /// whether a silent approval follows.
    mutating func upsert(_ ask: PairingAsk, nowMs: Int64) -> PendingRequestOutcome {
        var effects = expire(nowMs: nowMs).map(PairingEffect.expired)
        let isRepair = devices[ask.deviceId] != nil
        let pending = pendingRequests(nowMs: nowMs, deviceId: ask.deviceId)
        if pending.count == 1, var request = pending.first, request.isRefreshed(by: ask, comparesRole: supersessionComparesRole) {
            request.refresh(with: ask, isRepair: isRepair, nowMs: nowMs)
            pendingById[request.requestId] = request
            effects.append(.refreshed(request))
            return PendingRequestOutcome(request: request, created: false, effects: effects)
        }
        let request = PairingRequest.supersede(pending, with: ask, requestId: random.uuidString(), isRepair: isRepair, nowMs: nowMs)
        for old in pending { pendingById[old.requestId] = nil }
        pendingById[request.requestId] = request
        if !pending.isEmpty {
            effects.append(.superseded(old: pending.map(\.requestId), by: request.requestId))
            effects += pending.map { .resolved(PairingResolution(requestId: $0.requestId, deviceId: $0.deviceId, decision: .rejected, ts: nowMs)) }
        }
        return PendingRequestOutcome(request: request, created: true, effects: effects)
    }

    /// Deletes the requests that expired at `nowMs` (5 minutes after their last retry) and
    /// returns them. An expired request is gone for good: the device's next retry creates a new
    /// request id. Every mutating method calls this first, so expiry holds even if the owner
    /// never calls it.
    public mutating func expire(nowMs: Int64) -> [PairingRequest] {
        // Ties by id: requests of one millisecond would otherwise come out in the dictionary's
        // order, which changes from process to process (Swift seeds its hashing per process).
        let expired = pendingById.values.filter { $0.isExpired(atMs: nowMs) }.sorted { ($0.ts, $0.requestId) < ($1.ts, $1.requestId) }
        for request in expired { pendingById[request.requestId] = nil }
        return expired
    }

    // MARK: Resolution (docs/protocol.md §5.10, §5.12)

    /// Approves a pending request: merges its roles, scopes and metadata into the device's
    /// record (a new record for a new device or a new key) and deletes the request.
    /// - Parameters:
    ///   - approver: the approving operator, or `nil` for the scripting API and console, which
    ///     may approve anything.
    ///   - via: the approval path recorded as `approvedVia`.
    /// - Throws: `PairingError.unknownRequest` when the request does not exist (already
    ///   approved or rejected, superseded, expired, never issued): the loser of an approval
    ///   race gets this; `.missingScope` / `.approvalDenied` when the approver lacks authority.
    public mutating func approve(
        requestId: String, nowMs: Int64, approver: ApproverContext? = nil, via: ApprovalMethod = .manual
    ) throws(PairingError) -> PairingApproval {
        var effects = expire(nowMs: nowMs).map(PairingEffect.expired)
        guard let request = pendingById[requestId] else { throw .unknownRequest(requestId) }
        try approver?.authorize(request)
        let existing = devices[request.deviceId].flatMap { $0.publicKey == request.publicKey ? $0 : nil }
        if existing == nil { tokens.removeAll(deviceId: request.deviceId) }
        let device = PairedDevice(
            deviceId: request.deviceId, publicKey: request.publicKey,
            displayName: request.displayName ?? existing?.displayName, platform: request.platform ?? existing?.platform,
            deviceFamily: request.deviceFamily ?? existing?.deviceFamily, clientId: request.clientId ?? existing?.clientId,
            clientMode: request.clientMode ?? existing?.clientMode,
            roles: uniqued((existing?.roles ?? []) + request.roles),
            scopes: uniqued((existing?.scopes ?? []) + request.scopes),
            createdAtMs: existing?.createdAtMs ?? nowMs, approvedAtMs: nowMs, approvedVia: via,
            remoteIp: request.remoteIp ?? existing?.remoteIp, lastSeenAtMs: existing?.lastSeenAtMs,
            lastSeenReason: existing?.lastSeenReason, label: existing?.label,
            nodeSurface: request.roles.contains(.node)
                ? NodeSurfaceApproval(createdAtMs: existing?.nodeSurface?.createdAtMs ?? nowMs, approvedAtMs: nowMs)
                : existing?.nodeSurface)
        devices[device.deviceId] = device
        pendingById[requestId] = nil
        effects.append(.resolved(PairingResolution(requestId: requestId, deviceId: device.deviceId, decision: .approved, ts: nowMs)))
        return PairingApproval(requestId: requestId, device: device, effects: effects)
    }

    /// Rejects a pending request. Nothing reaches the device (its socket is already closed);
    /// its next connect creates a new request.
    /// - Throws: `PairingError.unknownRequest` as for `approve`.
    public mutating func reject(requestId: String, nowMs: Int64) throws(PairingError) -> PairingRejection {
        var effects = expire(nowMs: nowMs).map(PairingEffect.expired)
        guard let request = pendingById.removeValue(forKey: requestId) else { throw .unknownRequest(requestId) }
        effects.append(.resolved(PairingResolution(requestId: requestId, deviceId: request.deviceId, decision: .rejected, ts: nowMs)))
        return PairingRejection(requestId: requestId, deviceId: request.deviceId, publicKey: request.publicKey, effects: effects)
    }

    /// Removes a paired device, its tokens and its pending requests; its live sessions must be
    /// disconnected, and its next connect is `not-paired` (docs/protocol.md §5.6).
    /// - Returns: `.withdrawn` for each deleted request, then `.disconnect` of every session.
    /// - Throws: `PairingError.unknownDevice` when the device is not paired.
    public mutating func remove(deviceId: String, nowMs: Int64) throws(PairingError) -> [PairingEffect] {
        var effects = expire(nowMs: nowMs).map(PairingEffect.expired)
        guard devices.removeValue(forKey: deviceId) != nil else { throw .unknownDevice(deviceId) }
        tokens.removeAll(deviceId: deviceId)
        let swept = pendingRequests(nowMs: nowMs, deviceId: deviceId)
        for request in swept { pendingById[request.requestId] = nil }
        effects += swept.reversed().map(PairingEffect.withdrawn)
        effects.append(.disconnect(deviceId: deviceId, role: nil, reason: .deviceRemoved))
        return effects
    }

    /// Sets the operator's label of a paired device (`device.pair.rename`).
    /// - Throws: `.labelRequired` for a blank label, `.unknownDevice` for an unpaired device.
    public mutating func rename(deviceId: String, label: String) throws(PairingError) -> PairedDevice {
        let trimmed = label.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty else { throw .labelRequired(deviceId) }
        guard var device = devices[deviceId] else { throw .unknownDevice(deviceId) }
        device.label = trimmed
        devices[deviceId] = device
        return device
    }

    /// Records that the device was seen: `node.presence.alive` persists its normalised trigger
    /// here as `lastSeenReason` (docs/protocol.md §6.6).
    /// - Returns: `false` when the device is not paired (the beacon's `pairing_changed`).
    @discardableResult
    public mutating func recordLastSeen(deviceId: String, atMs nowMs: Int64, reason: String) -> Bool {
        guard var device = devices[deviceId] else { return false }
        device.markSeen(atMs: nowMs, reason: reason)
        devices[deviceId] = device
        return true
    }

    /// Refreshes a paired record for a successful connect: display name, remote IP,
    /// `lastSeenAtMs`/`lastSeenReason:"connect"`, and an OS-version change within the pinned
    /// platform family (docs/protocol.md §5.7).
    @discardableResult
    public mutating func recordConnect(_ attempt: PairingAttempt, nowMs: Int64) -> PairedDevice? {
        guard var device = devices[attempt.deviceId], device.publicKey == attempt.publicKey else { return nil }
        device.displayName = attempt.client.displayName ?? device.displayName
        device.remoteIp = attempt.remoteIp ?? device.remoteIp
        device.platform = DeviceMetadataPin.refreshedPlatform(record: device, client: attempt.client)
        device.markSeen(atMs: nowMs, reason: "connect")
        devices[device.deviceId] = device
        return device
    }

    // MARK: Device tokens (docs/protocol.md §5.3-5.5)

    /// The `hello-ok.auth` of an admitted connect: makes sure a token exists for
    /// (deviceId, role) covering the connection's scopes and reuses it across reconnects. With
    /// `handOff` (a bootstrap connect), also issues the tokens of the profile's other approved
    /// roles for `auth.deviceTokens`, with the profile's operator scopes (upstream
    /// `issueGatewayConnectDeviceTokens`, connect-device-tokens.ts
    /// @0186e586da6c81740c4d9b4d05d100ffd3bc1858).
    /// - Parameters:
    ///   - sharedAuthGeneration: bind a newly issued primary token to this shared-secret
    ///     generation (a browser surface that authenticated with the shared secret).
    ///   - reportTokenScopes: report the token's scopes in `auth.scopes` (the current Gateway,
    ///     `deviceToken ? deviceToken.scopes : scopes` in connect-hello.ts
    ///     @6eec7e0ec17433b40821fac09f7808d1d8e0345e) instead of the connection's.
    public mutating func grantHelloAuth(
        deviceId: String, role: GatewayRole, scopes: [String], handOff: BootstrapProfile? = nil,
        sharedAuthGeneration: Int? = nil, reportTokenScopes: Bool = true, nowMs: Int64
    ) -> HelloAuthGrant {
        let granted = PairingScopes.grantable(for: role, from: scopes)
        guard let device = devices[deviceId], device.hasRole(role) else { return HelloAuthGrant(role: role, scopes: granted) }
        let token = tokens.ensure(deviceId: deviceId, role: role, scopes: granted, sharedAuthGeneration: sharedAuthGeneration,
                                  nowMs: nowMs)
        let handOffTokens = (handOff?.roles ?? []).filter { $0 != role && device.hasRole($0) }.map { other in
            tokens.ensure(deviceId: deviceId, role: other, scopes: handOff?.scopes ?? [], nowMs: nowMs)
        }
        return HelloAuthGrant(role: role, scopes: granted, reportedScopes: reportTokenScopes ? token.scopes : granted,
                              deviceToken: token, handOffTokens: handOffTokens)
    }

    /// Verifies a device-token candidate for (deviceId, role) (docs/protocol.md §5.3 step 4), in constant time;
    /// records the use on success. The caller maps a failure with
    /// `DeviceTokenFailure.authFailureReason(for:)`.
    /// - Parameter sharedAuthGeneration: the current shared-secret generation (a token bound to
    ///   another one is refused as `issuer-generation-stale`).
    public mutating func verifyDeviceToken(
        _ candidate: String, deviceId: String, role: GatewayRole, scopes: [String], sharedAuthGeneration: Int = 0,
        nowMs: Int64
    ) -> Result<DeviceToken, DeviceTokenFailure> {
        guard devices[deviceId] != nil else { return .failure(.notPaired) }
        return tokens.verify(candidate, deviceId: deviceId, role: role, scopes: scopes,
                             sharedAuthGeneration: sharedAuthGeneration, nowMs: nowMs)
    }

    /// `device.token.rotate`: a new token value for (deviceId, role); the device's sessions in
    /// that role must reconnect. Scopes default to the current token's (or the approved ones);
    /// a node token never carries scopes.
    /// - Throws: `PairingError.tokenRotationDenied` for an unpaired device, an unapproved role,
    ///   or scopes beyond the approved ones.
    public mutating func rotateToken(deviceId: String, role: GatewayRole, scopes: [String]? = nil, nowMs: Int64) throws(PairingError) -> DeviceTokenChange {
        guard let device = devices[deviceId], device.hasRole(role) else { throw .tokenRotationDenied(deviceId) }
        let wanted = PairingScopes.grantable(for: role, from: scopes ?? tokens.token(deviceId: deviceId, role: role)?.scopes ?? device.scopes)
        guard PairingScopes.firstMissing(wanted, granted: device.scopes) == nil else { throw .tokenRotationDenied(deviceId) }
        // The binding to a shared-secret generation survives the rotation (`preserveExistingIssuer`).
        let bound = tokens.token(deviceId: deviceId, role: role)?.sharedAuthGeneration
        let token = tokens.mint(deviceId: deviceId, role: role, scopes: wanted, sharedAuthGeneration: bound, nowMs: nowMs)
        return DeviceTokenChange(deviceId: deviceId, token: token, effects: [.disconnect(deviceId: deviceId, role: role, reason: .tokenRotated)])
    }

    /// `device.token.revoke`: the token of (deviceId, role) stops verifying; the device's
    /// sessions in that role are disconnected. The device stays paired: a later connect that
    /// passes pairing without the token (auth mode `none`) is issued a new one.
    /// - Throws: `PairingError.tokenRevocationDenied` when there is no such token.
    public mutating func revokeToken(deviceId: String, role: GatewayRole, nowMs: Int64) throws(PairingError) -> DeviceTokenChange {
        guard devices[deviceId] != nil, let token = tokens.revoke(deviceId: deviceId, role: role, nowMs: nowMs) else {
            throw .tokenRevocationDenied(deviceId)
        }
        return DeviceTokenChange(deviceId: deviceId, token: token, effects: [.disconnect(deviceId: deviceId, role: role, reason: .tokenRevoked)])
    }
}

/// The durable part of a ``PairingStore``: what a real Gateway keeps on disk across restarts.
public struct PairingStoreState: Sendable, Hashable {
    /// The paired devices.
    public var devices: [PairedDevice]
    /// The pending requests (expired ones included; they expire on the next call).
    public var pendingRequests: [PairingRequest]
    /// The device tokens, revoked ones included.
    public var tokens: [(deviceId: String, token: DeviceToken)] {
        get { tokenList }
        set { tokenList = newValue }
    }
    private var tokenList: [(deviceId: String, token: DeviceToken)]

    /// Creates a state.
    public init(devices: [PairedDevice], pendingRequests: [PairingRequest], tokens: [(deviceId: String, token: DeviceToken)]) {
        self.devices = devices
        self.pendingRequests = pendingRequests
        self.tokenList = tokens
    }

    /// Equality of every member.
    public static func == (lhs: PairingStoreState, rhs: PairingStoreState) -> Bool {
        lhs.devices == rhs.devices && lhs.pendingRequests == rhs.pendingRequests
            && lhs.tokenList.map(\.deviceId) == rhs.tokenList.map(\.deviceId) && lhs.tokenList.map(\.token) == rhs.tokenList.map(\.token)
    }

    /// Hashes every member.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(devices)
        hasher.combine(pendingRequests)
        for entry in tokenList {
            hasher.combine(entry.deviceId)
            hasher.combine(entry.token)
        }
    }
}

extension PairingStore {
    /// Devices, pending requests and tokens, in a stable order, for saving.
    public var durableState: PairingStoreState {
        PairingStoreState(
            devices: devices.values.sorted { $0.deviceId < $1.deviceId },
            pendingRequests: pendingById.values.sorted { ($0.ts, $0.requestId) < ($1.ts, $1.requestId) },
            tokens: tokens.allTokens)
    }

    /// A store holding `state`, drawing new request ids and token bytes as
    /// ``init(random:systemSecrets:supersessionComparesRole:setupCodeApprovalRequiresMobileClient:)`` does.
    public init(restoring state: PairingStoreState, random: SeededRandom, systemSecrets: Bool = false,
                supersessionComparesRole: Bool = true, setupCodeApprovalRequiresMobileClient: Bool = true) {
        self.init(random: random, systemSecrets: systemSecrets, supersessionComparesRole: supersessionComparesRole,
                  setupCodeApprovalRequiresMobileClient: setupCodeApprovalRequiresMobileClient)
        for device in state.devices { devices[device.deviceId] = device }
        for request in state.pendingRequests { pendingById[request.requestId] = request }
        tokens.restore(state.tokens)
    }
}

extension DeviceTokenStore {
    /// Every token with its device, ordered by device and role.
    var allTokens: [(deviceId: String, token: DeviceToken)] {
        tokens.keys.sorted().flatMap { deviceId in
            (tokens[deviceId] ?? [:]).values.sorted { $0.role.rawValue < $1.role.rawValue }.map { (deviceId, $0) }
        }
    }

    /// Puts saved tokens back.
    mutating func restore(_ entries: [(deviceId: String, token: DeviceToken)]) {
        for entry in entries { tokens[entry.deviceId, default: [:]][entry.token.role] = entry.token }
    }
}
