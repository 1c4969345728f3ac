import GatewayProtocol

/// The Gateway's shared-secret mode, `gateway.auth.mode` (gateway-protocol.md §5.1).
public enum GatewayAuthMode: Sendable, Hashable {
    /// No shared secret: every connect passes this step (device identity and pairing still apply).
    case none
    /// Clients must send the shared token in `auth.token`. An empty secret is "not configured"
    /// (`AUTH_TOKEN_NOT_CONFIGURED`).
    case token(String)
    /// Clients must send the shared password in `auth.password`. An empty secret is "not
    /// configured" (`AUTH_PASSWORD_NOT_CONFIGURED`).
    case password(String)

    /// The name of the mode as `hello-ok.snapshot.authMode` reports it.
    public var name: String {
        switch self {
        case .none: "none"
        case .token: "token"
        case .password: "password"
        }
    }

    /// Whether a non-empty shared secret is configured (what a network-facing Gateway needs).
    public var hasSecret: Bool {
        switch self {
        case .none: false
        case .token(let secret), .password(let secret): !secret.isEmpty
        }
    }
}
