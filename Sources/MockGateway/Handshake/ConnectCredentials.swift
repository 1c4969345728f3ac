import GatewayProtocol

/// What a bootstrap-token or device-token check is about: the device and role of the connect.
///
/// The device proof has been verified by the time a verifier sees this (upstream order,
/// `src/gateway/server/ws-connection/connect-auth.ts` @9b6c33a767926c508097bbd5a34b09a3be3465c0:
/// device proof, then `resolveConnectAuthDecision`), so `deviceId` and `publicKey` are proven:
/// a verifier may bind a bootstrap token to them on first use.
public struct ConnectCredentialRequest: Sendable, Hashable {
    /// `device.id` as sent.
    public var deviceId: String
    /// `device.publicKey` as sent.
    public var publicKey: String
    /// The effective role.
    public var role: GatewayRole
    /// The requested scopes, as sent (empty when absent).
    public var scopes: [String]
    /// The complete, schema-valid params.
    public var params: ConnectParams

    /// Creates a request.
    public init(deviceId: String, publicKey: String, role: GatewayRole, scopes: [String], params: ConnectParams) {
        self.deviceId = deviceId
        self.publicKey = publicKey
        self.role = role
        self.scopes = scopes
        self.params = params
    }
}

/// The answer of a credential check.
public enum ConnectCredentialVerdict: Sendable, Hashable {
    /// The credential authenticates this device for this role.
    case valid
    /// The credential does not. `reason` overrides the default failure reason: for a bootstrap
    /// token any specific reason (default `bootstrap_token_invalid`); for a device token
    /// `scope_mismatch` (the token is right but does not cover the scopes). By default a
    /// device-token failure is `device_token_mismatch` for `auth.deviceToken` and leaves the
    /// shared-secret failure standing for `auth.token` (docs/protocol.md §5.3 step 4).
    case invalid(AuthFailureReason? = nil)
}

/// The Gateway's bootstrap-token and device-token stores and its authentication rate limiter,
/// as the admission sees them (docs/protocol.md §5.3 steps 3-4).
///
/// Methods are `mutating` so a store can record what it verified (for example bind a bootstrap
/// token to the device on first use, or remember the grant for the pairing step); the admission
/// calls each at most once per connect, synchronously. The rate-limit hooks default to "never
/// limited".
public protocol ConnectCredentialVerifier {
    /// Checks `auth.bootstrapToken`; called only when the connect carries a verified device block.
    mutating func verifyBootstrapToken(_ token: String, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict

    /// Checks the device-token candidate (`auth.deviceToken`, else `auth.token`) against the
    /// paired device's token for the requested role; called only when the connect carries a
    /// verified device block and no other method authenticated it.
    mutating func verifyDeviceToken(_ candidate: DeviceTokenCandidate, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict

    /// How long the client is still locked out of `scope` (`nil`: not limited).
    mutating func rateLimitRetryAfterMs(_ scope: AuthRateLimitScope) -> Int?

    /// Counts a failed attempt in `scope`.
    mutating func recordAuthFailure(_ scope: AuthRateLimitScope)

    /// Forgets the failures in `scope` after a success.
    mutating func resetAuthFailures(_ scope: AuthRateLimitScope)
}

extension ConnectCredentialVerifier {
    /// Never limited.
    public mutating func rateLimitRetryAfterMs(_ scope: AuthRateLimitScope) -> Int? { nil }
    /// Nothing to count.
    public mutating func recordAuthFailure(_ scope: AuthRateLimitScope) {}
    /// Nothing to forget.
    public mutating func resetAuthFailures(_ scope: AuthRateLimitScope) {}
}

/// A verifier with no stores: every bootstrap and device token is refused.
public struct NoConnectCredentials: ConnectCredentialVerifier {
    /// Creates the verifier.
    public init() {}

    /// Refuses the token.
    public mutating func verifyBootstrapToken(_ token: String, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        .invalid()
    }

    /// Refuses the token.
    public mutating func verifyDeviceToken(_ candidate: DeviceTokenCandidate, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        .invalid()
    }
}

/// Adapts two closures to `ConnectCredentialVerifier` (see
/// `ConnectAdmission.evaluate(message:nonce:nowMs:configuration:verifyBootstrapToken:verifyDeviceToken:)`).
struct ClosureCredentials: ConnectCredentialVerifier {
    let bootstrap: (String, ConnectCredentialRequest) -> ConnectCredentialVerdict
    let deviceToken: (DeviceTokenCandidate, ConnectCredentialRequest) -> ConnectCredentialVerdict

    mutating func verifyBootstrapToken(_ token: String, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        bootstrap(token, request)
    }

    mutating func verifyDeviceToken(_ candidate: DeviceTokenCandidate, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        deviceToken(candidate, request)
    }
}
