import GatewayProtocol

/// The roles and scopes a bootstrap token may grant (gateway-protocol.md §6.7).
public struct BootstrapProfile: Sendable, Hashable {
    /// The roles a device redeeming the token is approved for.
    public var roles: [GatewayRole]
    /// The operator scopes handed to its operator token.
    public var scopes: [String]

    /// Creates a profile; only operator scopes are kept.
    public init(roles: [GatewayRole], scopes: [String]) {
        self.roles = uniqued(roles)
        self.scopes = PairingScopes.normalized(scopes)
    }

    /// The setup-code profile: `node` + `operator`, operator scopes
    /// `operator.approvals, operator.read, operator.talk.secrets, operator.write` (no
    /// `operator.pairing`, no `operator.admin`): the limited profile plaintext LAN `ws://` gets.
    public static let setupCode = BootstrapProfile(
        roles: [GatewayRole.node, GatewayRole.operator],
        scopes: [OperatorScope.approvals, .read, .talkSecrets, .write].map(\.rawValue))

    /// The full-access profile (`wss://` or loopback codes): the setup-code profile plus `operator.admin`.
    public static let fullAccess = BootstrapProfile(
        roles: setupCode.roles, scopes: setupCode.scopes + [OperatorScope.admin.rawValue])

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

    /// Creates an issued token.
    public init(token: String, profile: BootstrapProfile, issuedAtMs: Int64) {
        self.token = token
        self.profile = profile
        self.issuedAtMs = issuedAtMs
    }
    /// The last instant at which it is still accepted (10 minutes after issue).
    public var expiresAtMs: Int64 { issuedAtMs + BootstrapTokenStore.lifetimeMs }
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

/// The bootstrap tokens behind setup codes (gateway-protocol.md §5.3 step 2, §6.7).
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
    private var random: SeededRandom
    private let systemSecrets: Bool

    /// Creates an empty store drawing token bytes from `random`, or from the system's secure
    /// generator when `systemSecrets` is set.
    public init(random: SeededRandom, systemSecrets: Bool = false) {
        self.random = random
        self.systemSecrets = systemSecrets
    }

    /// A store holding saved `records`.
    public init(restoring records: [Record], random: SeededRandom, systemSecrets: Bool = false) {
        self.init(random: random, systemSecrets: systemSecrets)
        self.records = records
    }

    /// Issues a token.
    public mutating func issue(profile: BootstrapProfile = .setupCode, nowMs: Int64) -> IssuedBootstrapToken {
        let issued = IssuedBootstrapToken(token: random.pairingToken(system: systemSecrets), profile: profile, issuedAtMs: nowMs)
        records.append(Record(issued: issued))
        return issued
    }

    /// Verifies `token` for a connect, binding it to the device on its first presentation.
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
