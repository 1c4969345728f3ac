import GatewayProtocol

/// What a bootstrap-token or device-token check is about: the device and role of the connect.
///
/// At this point of the handshake the device proof has not been verified yet (the real
/// Gateway authenticates first, gateway-protocol.md §3.5 steps 5-7): `deviceId` and `publicKey`
/// are as claimed. A decision only stands if the proof verifies afterwards, so a verifier that
/// binds a bootstrap token on first use should do so only once the admission was `admitted`
/// (or accept that a failed proof leaves the token bound to the claimed identity, as upstream).
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
    /// The credential does not. `reason` overrides the default failure reason only for
    /// `rate_limited` (with `retryAfterMs`) or, for a bootstrap token, any specific reason; by
    /// default a bootstrap failure is `bootstrap_token_invalid` and a device-token failure follows
    /// §5.3 step 3.
    case invalid(AuthFailureReason? = nil, retryAfterMs: Int? = nil)
}

/// The Gateway's bootstrap-token and device-token stores, as the admission sees them
/// (gateway-protocol.md §5.3 steps 2-3).
///
/// Methods are `mutating` so a store can record what it verified (for example bind a bootstrap
/// token to the device on first use, or remember the grant for the pairing step); the admission
/// calls each at most once per connect, synchronously.
public protocol ConnectCredentialVerifier {
    /// Checks `auth.bootstrapToken`; called only when the connect carries a device block.
    mutating func verifyBootstrapToken(_ token: String, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict

    /// Checks the device-token candidate (`auth.deviceToken`, else `auth.token`) against the
    /// paired device's token for the requested role; called only when the connect carries a
    /// device block and no other method authenticated it.
    mutating func verifyDeviceToken(_ candidate: DeviceTokenCandidate, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict
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
