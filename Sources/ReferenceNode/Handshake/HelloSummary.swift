import GatewayProtocol

/// What the reference client reads from `hello-ok` (docs/protocol.md §4). Parsing is
/// tolerant: unknown members are ignored and missing optional parts get defaults (docs/protocol.md §4.5).
public struct HelloSummary: Sendable, Hashable {
    /// `protocol`.
    public var protocolVersion: Int
    /// `features.methods`.
    public var methods: Set<String>
    /// `features.events`.
    public var events: Set<String>
    /// `policy.tickIntervalMs` (30 000 when absent).
    public var tickIntervalMs: Int64
    /// `auth.role`.
    public var role: String?
    /// `auth.scopes`.
    public var scopes: [String]
    /// `auth.deviceToken`.
    public var deviceToken: String?
    /// `auth.issuedAtMs`.
    public var issuedAtMs: Int?
    /// `auth.deviceTokens` (setup-code hand-off).
    public var deviceTokens: [IssuedDeviceToken]
    /// `server.connId`.
    public var connectionId: String?
    /// The canvas URL: `pluginSurfaceUrls.canvas`, or the protocol-3-era `canvasHostUrl`.
    public var canvasURL: String?

    /// Reads a `hello-ok` payload.
    /// - Returns: `nil` when the payload is not an object with `type:"hello-ok"` and an integer `protocol`.
    public init?(payload: JSONValue?) {
        guard let payload, payload["type"]?.stringValue == HelloOK.typeValue,
              let version = payload["protocol"]?.int64Value else { return nil }
        protocolVersion = Int(version)
        methods = Set(payload["features"]?["methods"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        events = Set(payload["features"]?["events"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let interval = payload["policy"]?["tickIntervalMs"]?.int64Value ?? Int64(HelloPolicy.defaultTickIntervalMs)
        tickIntervalMs = interval > 0 ? interval : Int64(HelloPolicy.defaultTickIntervalMs)
        let auth = payload["auth"]
        role = auth?["role"]?.stringValue
        scopes = auth?["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        deviceToken = auth?["deviceToken"]?.stringValue
        issuedAtMs = auth?["issuedAtMs"]?.int64Value.map { Int($0) }
        deviceTokens = (auth?["deviceTokens"]?.arrayValue ?? []).compactMap { entry in
            guard let token = entry["deviceToken"]?.stringValue, let role = entry["role"]?.stringValue else { return nil }
            return IssuedDeviceToken(deviceToken: token, role: GatewayRole(rawValue: role),
                                     scopes: entry["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                     issuedAtMs: entry["issuedAtMs"]?.int64Value.map { Int($0) })
        }
        connectionId = payload["server"]?["connId"]?.stringValue
        canvasURL = CanvasLoader.advertisedURL(in: payload)
    }

    /// The top-level `hello-ok` members this client knows (used only by the
    /// `reject-unknown-fields` mutant, which refuses anything else).
    static let knownMembers: Set<String> = [
        "type", "protocol", "server", "features", "snapshot", "auth", "policy", "pluginSurfaceUrls", "canvasHostUrl",
    ]

    /// The event names this client knows: every event of `GatewayEventName` (derived from
    /// `GatewayEventName.allKnown`, so a new event in `Names.swift` is known here too). Used only
    /// by the `reject-unknown-fields` mutant, which refuses any other event.
    static let knownEvents: Set<String> = Set(GatewayEventName.allKnown.map(\.rawValue))
}

/// The tokens a `hello-ok` issues to the device (docs/protocol.md §4, §5.4, §5.13).
enum IssuedTokens {
    /// Operator scopes a setup-code hand-off may carry (Swift filters to these).
    static let bootstrapOperatorScopes: Set<String> = [
        "operator.admin", "operator.approvals", "operator.read", "operator.talk.secrets", "operator.write",
    ]

    /// The tokens to store: `auth.deviceToken` for the session's role, plus, after a
    /// bootstrap connect, the hand-off tokens of `auth.deviceTokens` (operator scopes filtered,
    /// node scopes forced to `[]`).
    static func tokens(in hello: HelloSummary, role: GatewayRole, usedBootstrap: Bool) -> [(GatewayRole, StoredDeviceToken)] {
        var result: [(GatewayRole, StoredDeviceToken)] = []
        if let token = hello.deviceToken {
            let scopes = role == .node ? [] : hello.scopes
            result.append((role, StoredDeviceToken(token: token, scopes: scopes, issuedAtMs: hello.issuedAtMs)))
        }
        if usedBootstrap {
            for issued in hello.deviceTokens where issued.role != role || hello.deviceToken == nil {
                let scopes = issued.role == .node ? [] : issued.scopes.filter(bootstrapOperatorScopes.contains)
                result.append((issued.role, StoredDeviceToken(token: issued.deviceToken, scopes: scopes,
                                                              issuedAtMs: issued.issuedAtMs)))
            }
        }
        return result
    }
}
