import GatewayProtocol

/// A device token: the bearer credential a paired device presents on reconnect, one per
/// (deviceId, role) (docs/protocol.md §5.4).
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The secret: 32 random bytes as base64url (43 characters). Never listed, never logged.
    public var token: String
    /// The role it authenticates.
    public var role: GatewayRole
    /// Its operator scopes; a node token holds none.
    public var scopes: [String]
    /// When the first token for this (device, role) was issued.
    public var createdAtMs: Int64
    /// When it was last replaced (rotation, or a re-issue after revocation or a wider ask).
    public var rotatedAtMs: Int64?
    /// When it was revoked; a revoked token never verifies.
    public var revokedAtMs: Int64?
    /// When it last verified.
    public var lastUsedAtMs: Int64?
    /// The shared-secret generation the token is bound to, if it was issued to a session that
    /// authenticated with the shared secret (upstream issuer `shared-gateway-auth`): it stops
    /// verifying when the secret changes.
    public var sharedAuthGeneration: Int?

    /// Creates a token record.
    public init(token: String, role: GatewayRole, scopes: [String], createdAtMs: Int64, rotatedAtMs: Int64? = nil,
                revokedAtMs: Int64? = nil, lastUsedAtMs: Int64? = nil, sharedAuthGeneration: Int? = nil) {
        self.token = token
        self.role = role
        self.scopes = scopes
        self.createdAtMs = createdAtMs
        self.rotatedAtMs = rotatedAtMs
        self.revokedAtMs = revokedAtMs
        self.lastUsedAtMs = lastUsedAtMs
        self.sharedAuthGeneration = sharedAuthGeneration
    }

    /// `issuedAtMs` in `hello-ok.auth`: when this token value was minted.
    public var issuedAtMs: Int64 { rotatedAtMs ?? createdAtMs }

    /// Whether the token was revoked.
    public var isRevoked: Bool { revokedAtMs != nil }

    /// The listing form (`device.pair.list`): lifecycle metadata, never the secret.
    public var summaryJSON: JSONValue {
        var object: [String: JSONValue] = [
            "role": .string(role.rawValue), "scopes": .array(scopes.map(JSONValue.string)), "createdAtMs": .int(createdAtMs),
        ]
        if let rotatedAtMs { object["rotatedAtMs"] = .int(rotatedAtMs) }
        if let revokedAtMs { object["revokedAtMs"] = .int(revokedAtMs) }
        if let lastUsedAtMs { object["lastUsedAtMs"] = .int(lastUsedAtMs) }
        return .object(object)
    }

    /// A redacted description, safe for logs and transcripts.
    public var description: String {
        "DeviceToken(role: \(role), scopes: \(scopes), issuedAtMs: \(issuedAtMs)\(isRevoked ? ", revoked" : ""))"
    }
}

/// Where the device-token candidate of a connect came from (docs/protocol.md §5.3 step 4).
public enum DeviceTokenCandidateSource: Sendable, Hashable {
    /// `auth.deviceToken`: an explicit device token; a failure is `device_token_mismatch`.
    case deviceTokenField
    /// `auth.token`: possibly the shared secret; a failure leaves the shared-secret failure standing.
    case tokenField
}

/// The device-token candidate of a connect: `auth.deviceToken` if present, else `auth.token`.
public struct DeviceTokenCandidate: Sendable, Hashable {
    /// The presented value.
    public var value: String
    /// Which field it came from.
    public var source: DeviceTokenCandidateSource
    /// Picks the candidate of a connect's `auth` object; `nil` when neither field is a non-empty string.
    public static func select(deviceToken: String?, token: String?) -> DeviceTokenCandidate? {
        if let deviceToken, !deviceToken.isEmpty { return DeviceTokenCandidate(value: deviceToken, source: .deviceTokenField) }
        if let token, !token.isEmpty { return DeviceTokenCandidate(value: token, source: .tokenField) }
        return nil
    }
}

/// Why a device token did not verify (the real Gateway's internal reasons).
public enum DeviceTokenFailure: String, Error, Sendable, Hashable, CaseIterable {
    /// No paired record for the device.
    case notPaired = "device-not-paired"
    /// No token was ever issued for this role.
    case missing = "token-missing"
    /// The token was revoked.
    case revoked = "token-revoked"
    /// The presented value differs.
    case mismatch = "token-mismatch"
    /// The token's scopes do not cover the requested scopes.
    case scopeMismatch = "scope-mismatch"
    /// The token is bound to a shared-secret generation that is no longer current.
    case issuerGenerationStale = "issuer-generation-stale"

    /// The auth failure reason the connect reports when the device token was its last chance
    /// (upstream `mapDeviceTokenAuthFailureReason`, `auth-context.ts`): `scope_mismatch`
    /// (→ `AUTH_SCOPE_MISMATCH`) for a recognised token that does not cover the scopes, whatever
    /// field it came in; `device_token_mismatch` (→ `AUTH_DEVICE_TOKEN_MISMATCH`) for an explicit
    /// `auth.deviceToken`; `nil` for a value from `auth.token`, meaning the shared-secret failure
    /// (typically `token_mismatch` → `AUTH_TOKEN_MISMATCH`) stands.
    public func authFailureReason(for source: DeviceTokenCandidateSource) -> AuthFailureReason? {
        if self == .scopeMismatch { return .scopeMismatch }
        return source == .deviceTokenField ? .deviceTokenMismatch : nil
    }
}

/// The device tokens of every paired device, keyed by (deviceId, role).
///
/// Value type: the owner mutates it under its actor; randomness comes from the held `SeededRandom`.
public struct DeviceTokenStore: Sendable {
    // Internal, not private: the durable-state extension (PairingStore.swift) reads and restores it.
    var tokens: [String: [GatewayRole: DeviceToken]] = [:]
    private var random: SeededRandom
    private let systemSecrets: Bool

    /// Creates an empty store drawing token bytes from `random`, or from the system's secure
    /// generator when `systemSecrets` is set.
    public init(random: SeededRandom, systemSecrets: Bool = false) {
        self.random = random
        self.systemSecrets = systemSecrets
    }

    /// The token of (deviceId, role), revoked or not.
    public func token(deviceId: String, role: GatewayRole) -> DeviceToken? {
        tokens[deviceId]?[role]
    }

    /// Every token of `deviceId`, sorted by role.
    public func tokens(deviceId: String) -> [DeviceToken] {
        (tokens[deviceId] ?? [:]).values.sorted { $0.role.rawValue < $1.role.rawValue }
    }

    /// Makes sure a usable token exists for (deviceId, role) covering `scopes`, as `hello-ok`
    /// does (docs/protocol.md §5.4; upstream `ensureDeviceToken`, `src/infra/device-pairing.ts`): an unrevoked token whose scopes cover the ask and whose
    /// shared-secret binding matches is reused across reconnects, with its (possibly broader)
    /// scopes; otherwise a new value is minted (recorded as a rotation when one existed).
    /// - Parameters:
    ///   - scopes: the connection's scopes; only operator scopes of an operator role are kept.
    ///   - sharedAuthGeneration: the shared-secret generation to bind a new token to, if any.
    public mutating func ensure(deviceId: String, role: GatewayRole, scopes: [String], sharedAuthGeneration: Int? = nil,
                                nowMs: Int64) -> DeviceToken {
        let wanted = PairingScopes.grantable(for: role, from: scopes)
        if let existing = token(deviceId: deviceId, role: role), !existing.isRevoked,
           existing.sharedAuthGeneration == sharedAuthGeneration,
           PairingScopes.firstMissing(wanted, granted: existing.scopes) == nil {
            return existing
        }
        return mint(deviceId: deviceId, role: role, scopes: wanted, sharedAuthGeneration: sharedAuthGeneration, nowMs: nowMs)
    }

    /// Replaces the token of (deviceId, role) with a new value, unconditionally.
    @discardableResult
    mutating func mint(deviceId: String, role: GatewayRole, scopes: [String], sharedAuthGeneration: Int? = nil,
                       nowMs: Int64) -> DeviceToken {
        let existing = token(deviceId: deviceId, role: role)
        let fresh = DeviceToken(
            token: random.pairingToken(system: systemSecrets), role: role, scopes: PairingScopes.grantable(for: role, from: scopes),
            createdAtMs: existing?.createdAtMs ?? nowMs, rotatedAtMs: existing == nil ? nil : nowMs,
            lastUsedAtMs: existing?.lastUsedAtMs, sharedAuthGeneration: sharedAuthGeneration)
        tokens[deviceId, default: [:]][role] = fresh
        return fresh
    }

    /// Marks the token of (deviceId, role) revoked; `nil` when there is none.
    mutating func revoke(deviceId: String, role: GatewayRole, nowMs: Int64) -> DeviceToken? {
        guard var entry = token(deviceId: deviceId, role: role) else { return nil }
        entry.revokedAtMs = nowMs
        tokens[deviceId]?[role] = entry
        return entry
    }

    /// Deletes every token of `deviceId`.
    mutating func removeAll(deviceId: String) {
        tokens[deviceId] = nil
    }

    /// Checks `candidate` against the token of (deviceId, role) in constant time, and records
    /// the use on success. A token bound to a shared-secret generation verifies only while
    /// `sharedAuthGeneration` is that generation (upstream `issuer-generation-stale`). Does not
    /// know about paired records: `PairingStore.verifyDeviceToken` adds the not-paired check.
    mutating func verify(_ candidate: String, deviceId: String, role: GatewayRole, scopes: [String],
                         sharedAuthGeneration: Int = 0, nowMs: Int64) -> Result<DeviceToken, DeviceTokenFailure> {
        guard var entry = token(deviceId: deviceId, role: role) else { return .failure(.missing) }
        if entry.isRevoked { return .failure(.revoked) }
        guard ConstantTime.equals(candidate, entry.token) else { return .failure(.mismatch) }
        if let bound = entry.sharedAuthGeneration, bound != sharedAuthGeneration { return .failure(.issuerGenerationStale) }
        guard PairingScopes.firstMissing(PairingScopes.grantable(for: role, from: scopes), granted: entry.scopes) == nil
        else { return .failure(.scopeMismatch) }
        entry.lastUsedAtMs = nowMs
        tokens[deviceId]?[role] = entry
        return .success(entry)
    }
}
