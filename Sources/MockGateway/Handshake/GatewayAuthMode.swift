import GatewayProtocol

/// The Gateway's shared-secret mode, `gateway.auth.mode` (docs/protocol.md §5.1).
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

    /// Parses `none`, `token:SECRET` or `password:SECRET` (the syntax of `harness serve --auth`
    /// and the console's `change-auth`); `nil` for anything else. `token:` with nothing after it
    /// is a token mode without a secret ("not configured").
    public init?(specification text: String) {
        if text == "none" {
            self = .none
        } else if text.hasPrefix("token:") {
            self = .token(String(text.dropFirst("token:".count)))
        } else if text.hasPrefix("password:") {
            self = .password(String(text.dropFirst("password:".count)))
        } else {
            return nil
        }
    }

    /// The secret of `token` and `password` modes (`nil` for `none`).
    public var secret: String? {
        switch self {
        case .none: nil
        case .token(let secret), .password(let secret): secret
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
