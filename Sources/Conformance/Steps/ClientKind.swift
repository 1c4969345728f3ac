import GatewayProtocol

/// What sort of client sent a `connect`, judged from its `client.id` and `client.mode`: some
/// rules of the protocol were written for the apps and are applied to them only.
///
/// Upstream's apps (iOS, Android and macOS, all built on OpenClawKit or its Android twin) treat
/// some refusals as final; upstream's own TypeScript Gateway client
/// (packages/gateway-client, which the CLI and `openclaw node run` use) keeps reconnecting with
/// backoff after them instead (packages/gateway-client/src/client.ts@009f87da
/// `shouldPauseReconnectAfterAuthFailure` does not list `PROTOCOL_MISMATCH`; only the Control UI
/// passes `protocolMismatchIsTerminal`).
public enum ClientKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// One of the apps: `openclaw-ios`, `openclaw-android`, `openclaw-macos`.
    case app
    /// Any other client: node hosts, the CLI, backends, third-party nodes, unknown ids.
    case other

    /// The `client.id`s of the apps.
    public static let appClientIds: Set<ClientID> = [.iOS, .android, .macOS]

    /// The kind of the client that sent `attempt`.
    public init(_ attempt: ConnectAttempt) {
        self.init(clientId: attempt.clientId, mode: attempt.clientMode)
    }

    /// The kind of a client with this `client.id` and `client.mode`: an app when the id is one
    /// of ``appClientIds`` (the mode does not matter: an app's node and operator connections
    /// use `node` and `ui`).
    public init(clientId: String?, mode: String?) {
        self = clientId.map { Self.appClientIds.contains(ClientID(rawValue: $0)) } == true ? .app : .other
    }

    /// `app` or `other client`, for reports.
    public var description: String { self == .app ? "app" : "other client" }
}
