import GatewayProtocol

/// What `hello-ok.auth` grants a connection (docs/protocol.md §4, §5.4, §5.13).
public struct HelloAuthGrant: Sendable, Hashable {
    /// The connection's role.
    public var role: GatewayRole
    /// The connection's scopes (operator scopes for an operator, none for a node): what it may call.
    public var scopes: [String]
    /// `hello-ok.auth.scopes`: the issued token's scopes on the current Gateway (which may be
    /// broader than the connection's when an existing token is reused), else ``scopes``.
    public var reportedScopes: [String]
    /// The device token of (device, role), when the connection has a paired device identity.
    public var deviceToken: DeviceToken?
    /// The bounded hand-off of a setup-code connect: tokens for the profile's other roles
    /// (the operator token of a node bootstrap), sent as `auth.deviceTokens`.
    public var handOffTokens: [DeviceToken]

    /// Creates a grant.
    public init(role: GatewayRole, scopes: [String], reportedScopes: [String]? = nil, deviceToken: DeviceToken? = nil,
                handOffTokens: [DeviceToken] = []) {
        self.role = role
        self.scopes = scopes
        self.reportedScopes = reportedScopes ?? scopes
        self.deviceToken = deviceToken
        self.handOffTokens = handOffTokens
    }

    /// The `hello-ok.auth` object: `{role, scopes, deviceToken?, issuedAtMs?, deviceTokens?}`;
    /// `issuedAtMs` is the token's rotation time if it was rotated, else its creation time.
    /// Always send it: the newest Swift client cannot decode a hello without `auth`.
    public var helloAuth: HelloAuth {
        HelloAuth(
            role: role, scopes: reportedScopes, deviceToken: deviceToken?.token, issuedAtMs: deviceToken.map { Int($0.issuedAtMs) },
            deviceTokens: handOffTokens.isEmpty ? nil : handOffTokens.map { token in
                IssuedDeviceToken(deviceToken: token.token, role: token.role, scopes: token.scopes, issuedAtMs: Int(token.issuedAtMs))
            })
    }
}
