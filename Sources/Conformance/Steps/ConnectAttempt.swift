import GatewayProtocol
import MockGateway

/// A `connect` request as the Gateway received it: what a scenario reads to judge how a client
/// connects.
public struct ConnectAttempt: Sendable, Hashable {
    /// The connection it arrived on.
    public let connectionId: String
    /// Its `params`, as sent.
    public let params: JSONValue

    /// The `connect` request in `event`, if it is one.
    public init?(_ event: GatewayEvent) {
        guard case .frameIn(let connectionId, let frame?, _) = event, case .request(let request) = frame,
              request.method == GatewayMethod.connect.rawValue else { return nil }
        self.connectionId = connectionId
        self.params = request.params ?? .object([:])
    }

    /// `role` (the protocol's default is `operator`).
    public var role: String { params["role"]?.stringValue ?? GatewayRole.operator.rawValue }
    /// Whether it asks for the node role.
    public var isNode: Bool { role == GatewayRole.node.rawValue }
    /// `device.id`.
    public var deviceId: String? { params["device"]?["id"]?.stringValue }
    /// `device.publicKey`.
    public var publicKey: String? { params["device"]?["publicKey"]?.stringValue }
    /// `scopes`.
    public var scopes: [String] { params["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    /// `commands` (a node's declared commands).
    public var commands: [String] { params["commands"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    /// `client.id`.
    public var clientId: String? { params["client"]?["id"]?.stringValue }
    /// `client.mode`.
    public var clientMode: String? { params["client"]?["mode"]?.stringValue }
    /// `auth.bootstrapToken`.
    public var bootstrapToken: String? { params["auth"]?["bootstrapToken"]?.stringValue }
    /// Every token in `auth` (`token`, `deviceToken`, `bootstrapToken`).
    public var presentedTokens: [String] {
        ["token", "deviceToken", "bootstrapToken"].compactMap { params["auth"]?[$0]?.stringValue }
    }

    /// Whether `auth` carries `token` in any of its token fields.
    public func presents(_ token: String) -> Bool { presentedTokens.contains(token) }
}

/// How a connection's handshake ended.
public enum HandshakeOutcome: Sendable, Hashable {
    /// `hello-ok`: a session.
    case admitted(SessionInfo)
    /// The connect was refused with this error; the Gateway closed with `closeCode`.
    case refused(ErrorShape, closeCode: Int)
    /// The connection closed before a decision (the client gave up, or never sent `connect`).
    case closed(code: Int, reason: String)

    /// The refusal's error, if refused.
    public var refusal: ErrorShape? {
        if case .refused(let error, _) = self { error } else { nil }
    }

    /// The session, if admitted.
    public var session: SessionInfo? {
        if case .admitted(let info) = self { info } else { nil }
    }

    /// A short description for messages: `hello-ok`, `refused NOT_PAIRED (PAIRING_REQUIRED)`, `closed 1006`.
    public var summary: String {
        switch self {
        case .admitted: "hello-ok"
        case .refused(let error, _): "refused \(error.code)\(error.detailCode.map { " (\($0))" } ?? "")"
        case .closed(let code, let reason): "closed \(code)\(reason.isEmpty ? "" : " \(reason)")"
        }
    }
}
