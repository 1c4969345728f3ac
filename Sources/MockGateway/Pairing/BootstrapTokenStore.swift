import GatewayProtocol

/// The closed purpose a bootstrap profile may carry (upstream `DeviceBootstrapPurpose`).
public enum BootstrapPurpose: String, Sendable, Hashable {
    /// The full native-mobile setup profile.
    case mobileFull = "mobile-full"
    /// The room/embedded voice profile.
    case voiceNode = "voice-node"
}

/// The `access` label of a setup code (`device.pair.setupCode` result,
/// `device.pair.setup.completed`): `full`, `limited` or `node`.
public enum SetupAccess: String, Sendable, Hashable, CaseIterable {
    /// Node plus an operator token with `operator.admin`.
    case full
    /// Node plus a bounded operator token (also the voice-node profile).
    case limited
    /// Node only.
    case node
}

/// The roles and scopes a bootstrap token may grant (docs/protocol.md §5.13), as upstream
/// `DeviceBootstrapProfile` (`src/shared/device-bootstrap-profile.ts`
/// @06b1341d8682d9e0c3d4c52d55164f524d991279; voice-node from a newer built bundle,
/// documented as `openclaw qr --voice-node` since 2026-07-29).
public struct BootstrapProfile: Sendable, Hashable {
    /// The roles a device redeeming the token is approved for.
    public var roles: [GatewayRole]
    /// The operator scopes handed to its operator token.
    public var scopes: [String]
    /// The closed purpose, if any.
    public var purpose: BootstrapPurpose?

    /// Creates a profile; only operator scopes are kept.
    public init(roles: [GatewayRole], scopes: [String], purpose: BootstrapPurpose? = nil) {
        self.roles = uniqued(roles)
        self.scopes = PairingScopes.normalized(scopes)
        self.purpose = purpose
    }

    /// The operator scopes that may cross the bootstrap hand-off (`BOOTSTRAP_HANDOFF_OPERATOR_SCOPES`):
    /// never `operator.pairing`, never `operator.admin`.
    public static let handOffOperatorScopes = [OperatorScope.approvals, .read, .talkSecrets, .write].map(\.rawValue)

    /// `full` (`openclaw qr`'s default for `wss://` and loopback): node plus an operator token with
    /// `operator.admin, operator.approvals, operator.read, operator.talk.secrets, operator.write`
    /// (`docs/cli/qr.md` @06b1341d; ⚠️ one newer upstream test also hands off `operator.questions`,
    /// undated against the docs, so it is left out).
    public static let full = BootstrapProfile(
        roles: [.node, .operator], scopes: [OperatorScope.admin.rawValue] + handOffOperatorScopes, purpose: .mobileFull)

    /// `limited` (`openclaw qr --limited`, and what plaintext LAN `ws://` is downgraded to): the
    /// same node token and an operator token without `operator.admin`.
    public static let limited = BootstrapProfile(roles: [.node, .operator], scopes: handOffOperatorScopes)

    /// `voice-node` (`openclaw qr --voice-node`): node plus an operator token with only
    /// `operator.read` and `operator.talk`.
    public static let voiceNode = BootstrapProfile(
        roles: [.node, .operator], scopes: [OperatorScope.read, .talk].map(\.rawValue), purpose: .voiceNode)

    /// `node` (companions such as the Apple Watch): the node role only.
    public static let nodeOnly = BootstrapProfile(roles: [.node], scopes: [])

    /// The profile a setup-code name stands for: `full`, `limited`, `voice-node` or `node`.
    public static func named(_ name: String) -> BootstrapProfile? {
        switch name {
        case "full": .full
        case "limited": .limited
        case "voice-node": .voiceNode
        case "node": .nodeOnly
        default: nil
        }
    }

    /// The names ``named(_:)`` accepts, in documentation order.
    public static let names = ["full", "limited", "voice-node", "node"]

    /// Whether this is one of the two native-mobile setup profiles (`full` or `limited`), the
    /// only ones an official mobile app is approved with silently
    /// (`isMobilePairingSetupBootstrapProfile`).
    public var isMobileSetupProfile: Bool { self == .full || self == .limited }

    /// The `access` label: `node` without an operator role, `full` with `operator.admin`,
    /// `limited` otherwise (voice-node included, as upstream's `setup-code.test.ts`).
    public var access: SetupAccess {
        if !roles.contains(.operator) { return .node }
        return scopes.contains(OperatorScope.admin.rawValue) ? .full : .limited
    }

    /// Whether a connect with `role` and `scopes` stays inside the profile.
    public func allows(role: GatewayRole, scopes: [String]) -> Bool {
        guard roles.contains(role) else { return false }
        if role != GatewayRole.operator { return true }
        return PairingScopes.firstMissing(PairingScopes.normalized(scopes), granted: self.scopes) == nil
    }
}

/// A bootstrap token as issued, for building a setup code.
public struct IssuedBootstrapToken: Sendable, Hashable {
    /// The bearer value (43 characters of base64url).
    public var token: String
    /// What it grants.
    public var profile: BootstrapProfile
    /// When it was issued.
    public var issuedAtMs: Int64
    /// The opaque, non-secret id of the setup (not derived from the token, never in the code).
    public var setupId: String

    /// Creates an issued token.
    public init(token: String, profile: BootstrapProfile, issuedAtMs: Int64, setupId: String) {
        self.token = token
        self.profile = profile
        self.issuedAtMs = issuedAtMs
        self.setupId = setupId
    }
    /// The last instant at which it is still accepted (10 minutes after issue).
    public var expiresAtMs: Int64 { issuedAtMs + BootstrapTokenStore.lifetimeMs }
}

/// How a setup code's credential-bearing response went (`device.pair.setupStatus`).
public enum SetupDelivery: String, Sendable, Hashable {
    /// `hello-ok` with the hand-off was sent: `device.pair.setup.completed`.
    case completed
    /// The token was used up but the response may not have arrived:
    /// `device.pair.setup.deliveryUncertain`.
    case deliveryUncertain
}

/// The recorded outcome of one setup code: the payload of `device.pair.setup.completed` /
/// `device.pair.setup.deliveryUncertain` and of `device.pair.setupStatus`.
public struct SetupOutcome: Sendable, Hashable {
    /// The setup.
    public var setupId: String
    /// The device that used the code.
    public var deviceId: String
    /// Its `client.displayName`, if it sent one.
    public var deviceName: String?
    /// The code's access label.
    public var access: SetupAccess
    /// When the token was used up (Gateway clock).
    public var ts: Int64
    /// How the response went.
    public var delivery: SetupDelivery

    /// Creates an outcome.
    public init(setupId: String, deviceId: String, deviceName: String? = nil, access: SetupAccess, ts: Int64,
                delivery: SetupDelivery) {
        self.setupId = setupId
        self.deviceId = deviceId
        self.deviceName = deviceName
        self.access = access
        self.ts = ts
        self.delivery = delivery
    }

    /// `{setupId, deviceId, deviceName?, access, ts}`.
    public var payload: JSONValue {
        var object: [String: JSONValue] = [
            "setupId": .string(setupId), "deviceId": .string(deviceId), "access": .string(access.rawValue), "ts": .int(ts),
        ]
        if let deviceName { object["deviceName"] = .string(deviceName) }
        return .object(object)
    }

    /// The event this outcome is announced with.
    public var eventName: GatewayEventName {
        delivery == .completed ? .devicePairSetupCompleted : .devicePairSetupDeliveryUncertain
    }
}

/// A bootstrap token that verified for a device: auth succeeded with method `bootstrap-token`.
public struct BootstrapGrant: Sendable, Hashable {
    /// The presented token (needed to consume it after `hello-ok`).
    public var token: String
    /// What it grants.
    public var profile: BootstrapProfile
    /// The device it is bound to.
    public var deviceId: String
    /// The public key it is bound to.
    public var publicKey: String
}

/// Why a bootstrap token was refused. On the wire every case is the auth failure reason
/// `bootstrap_token_invalid` (→ `AUTH_BOOTSTRAP_TOKEN_INVALID`, non-recoverable for Swift); the
/// cases only help diagnosis in transcripts.
public enum BootstrapTokenFailure: String, Error, Sendable, Hashable, CaseIterable {
    /// Empty, never issued, or revoked.
    case unknown
    /// Presented more than 10 minutes after issue.
    case expired
    /// Already used by a successful connect.
    case consumed
    /// Bound to another device id or public key.
    case boundToAnotherDevice = "bound-to-another-device"
    /// The role or scopes lie outside the token's profile.
    case outsideProfile = "outside-profile"

    /// The auth failure reason: always `bootstrap_token_invalid`.
    public var authFailureReason: AuthFailureReason { .bootstrapTokenInvalid }
    /// The connect error `details.code`: always `AUTH_BOOTSTRAP_TOKEN_INVALID`.
    public var detailCode: ConnectErrorDetailCode { authFailureReason.detailCode }
}

/// The bootstrap tokens behind setup codes (docs/protocol.md §5.13, §5.3 step 3).
///
/// Life of a token: `issue` → the first `verify` binds it to that device (id + public key) →
/// the Gateway sends `hello-ok` and calls `consume`. "Single use" means exactly that: the first
/// connect that reaches `hello-ok` uses it up, and any later presentation, even by the same
/// device, is refused. A connect that verified the token but failed before `hello-ok` (for
/// example an operator connect that still needs pairing) does not use it up, so the bound
/// device may present it again until it expires; no other device ever can.
public struct BootstrapTokenStore: Sendable {
    /// How long a token is accepted after issue: 10 minutes.
    public static let lifetimeMs: Int64 = 10 * 60 * 1000

    /// One token and what happened to it: the durable form of the store.
    public struct Record: Sendable, Hashable {
        /// The token as issued.
        public var issued: IssuedBootstrapToken
        /// The device it was bound to on first presentation.
        public var boundDeviceId: String?
        /// The public key it was bound to.
        public var boundPublicKey: String?
        /// When a connect that presented it reached `hello-ok`.
        public var consumedAtMs: Int64?

        /// Creates a record.
        public init(issued: IssuedBootstrapToken, boundDeviceId: String? = nil, boundPublicKey: String? = nil,
                    consumedAtMs: Int64? = nil) {
            self.issued = issued
            self.boundDeviceId = boundDeviceId
            self.boundPublicKey = boundPublicKey
            self.consumedAtMs = consumedAtMs
        }
    }

    /// Every token ever issued and not revoked, for saving.
    public private(set) var records: [Record] = []
    private var outcomes: [String: SetupOutcome] = [:]
    private var random: SeededRandom
    private let systemSecrets: Bool

    /// Creates an empty store drawing token bytes from `random`, or from the system's secure
    /// generator when `systemSecrets` is set.
    public init(random: SeededRandom, systemSecrets: Bool = false) {
        self.random = random
        self.systemSecrets = systemSecrets
    }

    /// A store holding saved `records` and the saved outcomes of their setups.
    public init(restoring records: [Record], outcomes: [SetupOutcome] = [], random: SeededRandom, systemSecrets: Bool = false) {
        self.init(random: random, systemSecrets: systemSecrets)
        self.records = records
        for outcome in outcomes { self.outcomes[outcome.setupId] = outcome }
    }

    /// Every recorded setup outcome, oldest first (by `ts`, then setup id), for saving.
    public var setupOutcomes: [SetupOutcome] {
        outcomes.values.sorted { ($0.ts, $0.setupId) < ($1.ts, $1.setupId) }
    }

    /// Issues a token.
    public mutating func issue(profile: BootstrapProfile = .full, nowMs: Int64) -> IssuedBootstrapToken {
        let token = random.pairingToken(system: systemSecrets)
        let issued = IssuedBootstrapToken(token: token, profile: profile, issuedAtMs: nowMs, setupId: random.uuidString())
        records.append(Record(issued: issued))
        return issued
    }

    /// Verifies `token` for a connect, binding it to the device on its first presentation. The
    /// admission calls this only after the device proof verified, so only a proven device
    /// identity can claim a token.
    /// - Returns: the grant, or why the token is refused (every reason is `bootstrap_token_invalid` on the wire).
    public mutating func verify(
        _ token: String, deviceId: String, publicKey: String, role: GatewayRole, scopes: [String], nowMs: Int64
    ) -> Result<BootstrapGrant, BootstrapTokenFailure> {
        let token = token.trimmingASCIIWhitespace()
        guard !token.isEmpty, !deviceId.isEmpty, !publicKey.isEmpty,
              let index = records.firstIndex(where: { ConstantTime.equals(token, $0.issued.token) })
        else { return .failure(.unknown) }
        var record = records[index]
        if record.consumedAtMs != nil { return .failure(.consumed) }
        // The same strict comparison as pending requests: valid up to and including 10:00.
        if nowMs - record.issued.issuedAtMs > Self.lifetimeMs { return .failure(.expired) }
        // Checked before binding, so a request outside the profile cannot claim the token.
        guard record.issued.profile.allows(role: role, scopes: scopes) else { return .failure(.outsideProfile) }
        if record.boundDeviceId != nil || record.boundPublicKey != nil {
            guard record.boundDeviceId == deviceId, record.boundPublicKey == publicKey else {
                return .failure(.boundToAnotherDevice)
            }
        } else {
            record.boundDeviceId = deviceId
            record.boundPublicKey = publicKey
            records[index] = record
        }
        return .success(BootstrapGrant(token: record.issued.token, profile: record.issued.profile, deviceId: deviceId, publicKey: publicKey))
    }

    /// Uses the token up after the connect that presented it received `hello-ok`.
    /// - Returns: `false` when the token is unknown or already consumed.
    @discardableResult
    public mutating func consume(_ token: String, nowMs: Int64) -> Bool {
        guard let index = records.firstIndex(where: { ConstantTime.equals(token, $0.issued.token) }),
              records[index].consumedAtMs == nil else { return false }
        records[index].consumedAtMs = nowMs
        return true
    }

    /// The token as issued, unless it is unknown.
    public func issued(_ token: String) -> IssuedBootstrapToken? {
        records.first { ConstantTime.equals(token, $0.issued.token) }?.issued
    }

    /// Records how the setup of `token` ended (the response carrying its hand-off went out, or
    /// might not have), so that `device.pair.setupStatus` can answer after the event.
    /// - Returns: the outcome, or `nil` for an unknown token.
    public mutating func recordOutcome(_ token: String, deviceId: String, deviceName: String?, delivery: SetupDelivery,
                                       nowMs: Int64) -> SetupOutcome? {
        guard let issued = issued(token) else { return nil }
        let outcome = SetupOutcome(setupId: issued.setupId, deviceId: deviceId, deviceName: deviceName,
                                   access: issued.profile.access, ts: nowMs, delivery: delivery)
        outcomes[issued.setupId] = outcome
        return outcome
    }

    /// The recorded outcome of the setup `setupId`; `nil` while it is outstanding, expired or unknown.
    public func outcome(setupId: String) -> SetupOutcome? {
        outcomes[setupId]
    }

    /// Revokes every token bound to `deviceId` with `publicKey` (upstream
    /// `revokeDeviceBootstrapTokensForDeviceInDatabase`, called when a pairing request of the
    /// device is rejected).
    /// - Returns: how many tokens were revoked.
    @discardableResult
    public mutating func revokeAll(deviceId: String, publicKey: String) -> Int {
        let before = records.count
        records.removeAll { $0.boundDeviceId == deviceId && $0.boundPublicKey == publicKey }
        return before - records.count
    }

    /// Withdraws a token before use (an operator cancelling a setup code).
    /// - Returns: `false` when the token is unknown.
    @discardableResult
    public mutating func revoke(_ token: String) -> Bool {
        let before = records.count
        records.removeAll { ConstantTime.equals(token, $0.issued.token) }
        return records.count != before
    }

    /// The tokens that can still be redeemed at `nowMs` (neither consumed nor expired).
    public func outstanding(nowMs: Int64) -> [IssuedBootstrapToken] {
        records.filter { $0.consumedAtMs == nil && nowMs - $0.issued.issuedAtMs <= Self.lifetimeMs }.map(\.issued)
    }
}
