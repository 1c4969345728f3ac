import Foundation

/// The payload of a successful `connect` response (docs/protocol.md §4, §4.5).
///
/// Every member the newest Swift client requires is non-optional here, so a value of this type
/// always encodes into a hello that client can decode (in particular `auth`).
public struct HelloOK: Sendable, Hashable, Codable {
    /// Always `hello-ok`.
    public var type: String
    /// The Gateway's `PROTOCOL_VERSION`.
    public var `protocol`: Int
    /// Server identification.
    public var server: HelloServerInfo
    /// Method and event discovery.
    public var features: HelloFeatures
    /// Initial state.
    public var snapshot: HelloSnapshot
    /// The granted role and scopes, and the device token (required by the newest Swift client).
    public var auth: HelloAuth
    /// Limits and the tick interval.
    public var policy: HelloPolicy
    /// Scoped plugin surface URLs, e.g. `{"canvas": "..."}` (newest).
    public var pluginSurfaceUrls: [String: String]?
    /// The protocol-3-era canvas host URL, replaced by `pluginSurfaceUrls`.
    public var canvasHostUrl: String?
    /// Control UI tabs (newest; UI only, kept opaque).
    public var controlUiTabs: JSONValue?

    /// The value of `type`.
    public static let typeValue = "hello-ok"

    /// Creates a hello.
    public init(
        protocol: Int = ProtocolVersion.current, server: HelloServerInfo, features: HelloFeatures, snapshot: HelloSnapshot,
        auth: HelloAuth, policy: HelloPolicy = HelloPolicy(), pluginSurfaceUrls: [String: String]? = nil,
        canvasHostUrl: String? = nil, controlUiTabs: JSONValue? = nil
    ) {
        self.type = Self.typeValue
        self.protocol = `protocol`
        self.server = server
        self.features = features
        self.snapshot = snapshot
        self.auth = auth
        self.policy = policy
        self.pluginSurfaceUrls = pluginSurfaceUrls
        self.canvasHostUrl = canvasHostUrl
        self.controlUiTabs = controlUiTabs
    }
}

/// `hello-ok.server`.
public struct HelloServerInfo: Sendable, Hashable, Codable {
    /// Gateway version, e.g. `2026.8.1`.
    public var version: String
    /// This connection's id.
    public var connId: String

    /// Creates server information.
    public init(version: String, connId: String) {
        self.version = version
        self.connId = connId
    }
}

/// `hello-ok.features`: discovery only; clients must ignore unknown names.
public struct HelloFeatures: Sendable, Hashable, Codable {
    /// Method names the connection may call.
    public var methods: [String]
    /// Event names the connection may receive.
    public var events: [String]
    /// Optional capability names.
    public var capabilities: [String]?

    /// Creates features.
    public init(methods: [String], events: [String], capabilities: [String]? = nil) {
        self.methods = methods
        self.events = events
        self.capabilities = capabilities
    }
}

/// `hello-ok.snapshot`.
public struct HelloSnapshot: Sendable, Hashable, Codable {
    /// Current presence list.
    public var presence: [PresenceEntry]
    /// Health summary (any JSON; `{}` is fine).
    public var health: JSONValue
    /// State counters.
    public var stateVersion: StateVersion
    /// Gateway uptime in milliseconds.
    public var uptimeMs: Int
    /// Config file path.
    public var configPath: String?
    /// State directory.
    public var stateDir: String?
    /// Session defaults.
    public var sessionDefaults: SessionDefaults?
    /// The Gateway auth mode, e.g. `token`.
    public var authMode: String?
    /// Update information (opaque).
    public var updateAvailable: JSONValue?
    /// Hash of the applied config (newest).
    public var appliedConfigHash: String?

    /// Creates a snapshot.
    public init(
        presence: [PresenceEntry] = [], health: JSONValue = .object([:]), stateVersion: StateVersion = StateVersion(presence: 1, health: 1),
        uptimeMs: Int, configPath: String? = nil, stateDir: String? = nil, sessionDefaults: SessionDefaults? = nil,
        authMode: String? = nil, updateAvailable: JSONValue? = nil, appliedConfigHash: String? = nil
    ) {
        self.presence = presence
        self.health = health
        self.stateVersion = stateVersion
        self.uptimeMs = uptimeMs
        self.configPath = configPath
        self.stateDir = stateDir
        self.sessionDefaults = sessionDefaults
        self.authMode = authMode
        self.updateAvailable = updateAvailable
        self.appliedConfigHash = appliedConfigHash
    }

    private enum CodingKeys: String, CodingKey {
        case presence, health, stateVersion, uptimeMs, configPath, stateDir, sessionDefaults, authMode,
            updateAvailable, appliedConfigHash
    }

    /// Decodes tolerantly: `uptimeMs` may be an integral floating-point number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        presence = try container.decode([PresenceEntry].self, forKey: .presence)
        // `health` is required but may legitimately be `null`.
        health = try container.decodeIfPresent(JSONValue.self, forKey: .health) ?? .null
        stateVersion = try container.decode(StateVersion.self, forKey: .stateVersion)
        uptimeMs = try container.decodeLenientInt(forKey: .uptimeMs)
        configPath = try container.decodeIfPresent(String.self, forKey: .configPath)
        stateDir = try container.decodeIfPresent(String.self, forKey: .stateDir)
        sessionDefaults = try container.decodeIfPresent(SessionDefaults.self, forKey: .sessionDefaults)
        authMode = try container.decodeIfPresent(String.self, forKey: .authMode)
        updateAvailable = try container.decodeIfPresent(JSONValue.self, forKey: .updateAvailable)
        appliedConfigHash = try container.decodeIfPresent(String.self, forKey: .appliedConfigHash)
    }
}

/// `snapshot.sessionDefaults`.
public struct SessionDefaults: Sendable, Hashable, Codable {
    /// Default agent id, e.g. `main`.
    public var defaultAgentId: String
    /// Main session key, e.g. `main`.
    public var mainKey: String
    /// Fully qualified main session key, e.g. `agent:main:main`.
    public var mainSessionKey: String
    /// Session scope.
    public var scope: String?

    /// Creates session defaults.
    public init(defaultAgentId: String = "main", mainKey: String = "main", mainSessionKey: String = "agent:main:main", scope: String? = nil) {
        self.defaultAgentId = defaultAgentId
        self.mainKey = mainKey
        self.mainSessionKey = mainSessionKey
        self.scope = scope
    }
}

/// One presence entry (Swift `PresenceEntry`): only `ts` is required.
public struct PresenceEntry: Sendable, Hashable, Codable {
    /// Timestamp in milliseconds; always an integer on the wire.
    public var ts: Int
    /// Host name.
    public var host: String?
    /// Remote IP.
    public var ip: String?
    /// Client version.
    public var version: String?
    /// Platform.
    public var platform: String?
    /// Device family.
    public var deviceFamily: String?
    /// Hardware model.
    public var modelIdentifier: String?
    /// Mode, e.g. `gateway` or `node`.
    public var mode: String?
    /// Seconds since the last user input.
    public var lastInputSeconds: Int?
    /// Why the entry changed, e.g. `connect` or `disconnect`.
    public var reason: String?
    /// Free-form tags.
    public var tags: [String]?
    /// Free-form text.
    public var text: String?
    /// Device id.
    public var deviceId: String?
    /// Roles of the device's connections.
    public var roles: [String]?
    /// Scopes of the device's connections.
    public var scopes: [String]?
    /// Client instance id.
    public var instanceId: String?

    /// Creates a presence entry.
    public init(
        ts: Int, host: String? = nil, ip: String? = nil, version: String? = nil, platform: String? = nil,
        deviceFamily: String? = nil, modelIdentifier: String? = nil, mode: String? = nil, lastInputSeconds: Int? = nil,
        reason: String? = nil, tags: [String]? = nil, text: String? = nil, deviceId: String? = nil,
        roles: [String]? = nil, scopes: [String]? = nil, instanceId: String? = nil
    ) {
        self.ts = ts
        self.host = host
        self.ip = ip
        self.version = version
        self.platform = platform
        self.deviceFamily = deviceFamily
        self.modelIdentifier = modelIdentifier
        self.mode = mode
        self.lastInputSeconds = lastInputSeconds
        self.reason = reason
        self.tags = tags
        self.text = text
        self.deviceId = deviceId
        self.roles = roles
        self.scopes = scopes
        self.instanceId = instanceId
    }

    private enum CodingKeys: String, CodingKey {
        case ts, host, ip, version, platform, deviceFamily, modelIdentifier, mode, lastInputSeconds, reason, tags,
            text, deviceId, roles, scopes, instanceId
    }

    /// Decodes tolerantly: `ts` and `lastInputSeconds` may be integral floating-point numbers.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        ts = try container.decodeLenientInt(forKey: .ts)
        host = try container.decodeIfPresent(String.self, forKey: .host)
        ip = try container.decodeIfPresent(String.self, forKey: .ip)
        version = try container.decodeIfPresent(String.self, forKey: .version)
        platform = try container.decodeIfPresent(String.self, forKey: .platform)
        deviceFamily = try container.decodeIfPresent(String.self, forKey: .deviceFamily)
        modelIdentifier = try container.decodeIfPresent(String.self, forKey: .modelIdentifier)
        mode = try container.decodeIfPresent(String.self, forKey: .mode)
        lastInputSeconds = try container.decodeLenientIntIfPresent(forKey: .lastInputSeconds)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        tags = try container.decodeIfPresent([String].self, forKey: .tags)
        text = try container.decodeIfPresent(String.self, forKey: .text)
        deviceId = try container.decodeIfPresent(String.self, forKey: .deviceId)
        roles = try container.decodeIfPresent([String].self, forKey: .roles)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes)
        instanceId = try container.decodeIfPresent(String.self, forKey: .instanceId)
    }
}

/// `hello-ok.auth`: what the connection was granted.
public struct HelloAuth: Sendable, Hashable, Codable {
    /// The granted role.
    public var role: GatewayRole
    /// The granted scopes; `[]` for nodes.
    public var scopes: [String]
    /// The device token for (deviceId, role), when one was issued or reused.
    public var deviceToken: String?
    /// When `deviceToken` was issued, in milliseconds.
    public var issuedAtMs: Int?
    /// Extra tokens handed off after a bootstrap connect (the bounded operator token).
    public var deviceTokens: [IssuedDeviceToken]?

    /// Creates hello auth.
    public init(role: GatewayRole, scopes: [String], deviceToken: String? = nil, issuedAtMs: Int? = nil, deviceTokens: [IssuedDeviceToken]? = nil) {
        self.role = role
        self.scopes = scopes
        self.deviceToken = deviceToken
        self.issuedAtMs = issuedAtMs
        self.deviceTokens = deviceTokens
    }
}

/// One entry of `hello-ok.auth.deviceTokens`.
public struct IssuedDeviceToken: Sendable, Hashable, Codable {
    /// The bearer token.
    public var deviceToken: String
    /// The role it authenticates.
    public var role: GatewayRole
    /// Its scopes.
    public var scopes: [String]
    /// Issue time in milliseconds.
    public var issuedAtMs: Int?

    /// Creates an issued token.
    public init(deviceToken: String, role: GatewayRole, scopes: [String], issuedAtMs: Int? = nil) {
        self.deviceToken = deviceToken
        self.role = role
        self.scopes = scopes
        self.issuedAtMs = issuedAtMs
    }
}

/// `hello-ok.policy` (docs/protocol.md §4.3).
public struct HelloPolicy: Sendable, Hashable, Codable {
    /// `MAX_PAYLOAD_BYTES`: 25 MiB.
    public static let defaultMaxPayload = 26_214_400
    /// `MAX_BUFFERED_BYTES`: 50 MiB.
    public static let defaultMaxBufferedBytes = 52_428_800
    /// `TICK_INTERVAL_MS`: 30 s.
    public static let defaultTickIntervalMs = 30_000

    /// Largest inbound frame after hello, in bytes.
    public var maxPayload: Int
    /// Per-socket outbound buffer, in bytes.
    public var maxBufferedBytes: Int
    /// Tick interval in milliseconds; Swift's watchdog fires after twice this.
    public var tickIntervalMs: Int
    /// Attachment limits (newest).
    public var attachments: AttachmentPolicy?

    /// Creates a policy; the defaults are the real Gateway's constants.
    public init(
        maxPayload: Int = HelloPolicy.defaultMaxPayload, maxBufferedBytes: Int = HelloPolicy.defaultMaxBufferedBytes,
        tickIntervalMs: Int = HelloPolicy.defaultTickIntervalMs, attachments: AttachmentPolicy? = nil
    ) {
        self.maxPayload = maxPayload
        self.maxBufferedBytes = maxBufferedBytes
        self.tickIntervalMs = tickIntervalMs
        self.attachments = attachments
    }
}

/// `hello-ok.policy.attachments`.
public struct AttachmentPolicy: Sendable, Hashable, Codable {
    /// Largest attachment in bytes.
    public var maxBytes: Int
    /// Largest image attachment in bytes.
    public var maxImageBytes: Int

    /// Creates attachment limits.
    public init(maxBytes: Int, maxImageBytes: Int) {
        self.maxBytes = maxBytes
        self.maxImageBytes = maxImageBytes
    }
}
