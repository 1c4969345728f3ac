import GatewayProtocol

/// The client metadata of a connect that pairing pins or shows to approvers
/// (`connect.params.client`, docs/protocol.md §3.3).
public struct PairingClientInfo: Sendable, Hashable {
    /// `client.id`, for example `openclaw-ios` or `node-host`.
    public var clientId: ClientID
    /// `client.mode`, for example `node` or `ui`.
    public var clientMode: ClientMode
    /// `client.displayName`, shown in pairing UIs.
    public var displayName: String?
    /// `client.platform`, for example `iOS 18.4.0` or `darwin`.
    public var platform: String?
    /// `client.deviceFamily`, for example `iPhone`.
    public var deviceFamily: String?

    /// Creates client metadata.
    public init(clientId: ClientID, clientMode: ClientMode, displayName: String? = nil, platform: String? = nil, deviceFamily: String? = nil) {
        self.clientId = clientId
        self.clientMode = clientMode
        self.displayName = displayName
        self.platform = platform
        self.deviceFamily = deviceFamily
    }

    /// The pairing-relevant part of `connect.params.client`.
    public init(_ client: ClientInfo) {
        self.init(clientId: client.id, clientMode: client.mode, displayName: client.displayName, platform: client.platform,
                  deviceFamily: client.deviceFamily)
    }

    /// Whether this is a browser surface (Control UI or WebChat): such clients never get silent
    /// local or trusted-CIDR approval (docs/protocol.md §5.10).
    public var isBrowserClient: Bool {
        [ClientID.controlUI, .webchatUI, .webchat].contains(clientId) || clientMode == .webchat
    }

    /// Whether this is a first-party native app (iOS, Android, macOS, watchOS), the only clients
    /// whose local metadata upgrade may be approved silently (docs/protocol.md §5.10).
    public var isNativeApp: Bool {
        [ClientID.iOS, .android, .macOS, .watchOS].contains(clientId)
    }

    /// Whether this is an official mobile app whose metadata agree with its client id, the only
    /// clients a setup code pairs without an approver (upstream `isSetupCodeMobileBootstrapClient`,
    /// `src/gateway/server/ws-connection/mobile-bootstrap-pairing.ts`
    /// @2a14eb222dfda34af5885708aa25088a2e8c0007): `openclaw-ios` with a platform starting with
    /// `ios` or `ipados` (as a word) and device family `iphone`, `ipad` or `ios`, or
    /// `openclaw-android` with a platform starting with `android` and device family `android`;
    /// platform and family trimmed and ASCII lower-cased.
    public var isSetupCodeMobileClient: Bool {
        let platform = DeviceMetadataPin.normalize(self.platform)
        let family = DeviceMetadataPin.normalize(deviceFamily)
        let firstWord = platform.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        switch clientId {
        case .android: return firstWord == "android" && family == "android"
        case .iOS: return (firstWord == "ios" || firstWord == "ipados") && ["iphone", "ipad", "ios"].contains(family)
        default: return false
        }
    }
}

/// What pairing needs to know about one connect attempt that passed authentication and the
/// device proof (docs/protocol.md §3.7 steps 6-10).
public struct PairingAttempt: Sendable, Hashable {
    /// `device.id`: the lower-case hex SHA-256 of the raw public key.
    public var deviceId: String
    /// `device.publicKey`, raw base64url (already normalised from PEM by the handshake).
    public var publicKey: String
    /// The requested role (`operator` when the connect had none).
    public var role: GatewayRole
    /// `params.scopes` exactly as sent.
    public var scopes: [String]
    /// The client metadata.
    public var client: PairingClientInfo
    /// The client IP address (from the socket, or from a trusted non-loopback proxy), without a port.
    public var remoteIp: String?
    /// Whether the connection is local for pairing purposes: a loopback socket without
    /// forwarded headers (the owner decides; forwarded headers on loopback disqualify locality).
    public var isLoopback: Bool
    /// Whether the WebSocket upgrade carried a browser `Origin` header.
    public var hasBrowserOrigin: Bool
    /// The extension origin of a browser copilot (`openclaw-browser-copilot` with a
    /// `chrome-extension://` `Origin`), which pending requests are keyed by as well; `nil` for
    /// every other client (upstream `browserCopilotOrigin`, connect-device-pairing.ts @e7f3d12c).
    public var browserOrigin: String?

    /// Creates an attempt.
    public init(
        deviceId: String, publicKey: String, role: GatewayRole, scopes: [String], client: PairingClientInfo,
        remoteIp: String? = nil, isLoopback: Bool = false, hasBrowserOrigin: Bool = false, browserOrigin: String? = nil
    ) {
        self.deviceId = deviceId
        self.publicKey = publicKey
        self.role = role
        self.scopes = scopes
        self.client = client
        self.remoteIp = remoteIp
        self.isLoopback = isLoopback
        self.hasBrowserOrigin = hasBrowserOrigin
        self.browserOrigin = browserOrigin
    }

    /// The attempt of a schema-valid connect whose device proof verified.
    /// - Parameters:
    ///   - publicKey: the normalised raw base64url key (the proof verifier's output).
    ///   - origin: the upgrade's `Origin` header, if any.
    public init(params: ConnectParams, deviceId: String, publicKey: String, remoteIp: String?, isLoopback: Bool,
                hasBrowserOrigin: Bool, origin: String? = nil) {
        let copilotOrigin = params.client.id == .browserCopilot
            ? origin.map { $0.trimmingASCIIWhitespace().asciiLowercased() }.flatMap { $0.hasPrefix("chrome-extension://") ? $0 : nil }
            : nil
        self.init(deviceId: deviceId, publicKey: publicKey, role: params.resolvedRole, scopes: params.scopes ?? [],
                  client: PairingClientInfo(params.client), remoteIp: remoteIp, isLoopback: isLoopback,
                  hasBrowserOrigin: hasBrowserOrigin, browserOrigin: copilotOrigin)
    }

    /// The scopes the attempt can be granted: its operator scopes for an operator, none for a node.
    ///
    /// ⚠️ UNCONFIRMED what the real Gateway does with operator scopes on a node connect; the
    /// tolerant choice (docs/protocol.md §12 item 8) ignores them for pairing and tokens,
    /// while trusted-CIDR approval still treats such a node as not scopeless.
    public var grantableScopes: [String] {
        PairingScopes.grantable(for: role, from: scopes)
    }

    /// The scopes as sent, trimmed and without duplicates: what `details.requestedScopes` reports.
    var reportedScopes: [String] { uniqued(scopes.map { $0.trimmingASCIIWhitespace() }) }
}

/// The pinned-metadata rule of metadata upgrades (docs/protocol.md §5.7).
enum DeviceMetadataPin {
    /// Trimmed, ASCII lower-cased: the same normalisation as the v3 signature payload.
    static func normalize(_ value: String?) -> String {
        (value ?? "").trimmingASCIIWhitespace().asciiLowercased()
    }

    /// The platform family: the first word of the normalised platform, with the aliases the real
    /// Gateway tolerates folded together (`ipados` is iOS; `darwin`, the node host's
    /// `process.platform`, is macOS; `win32` is Windows).
    ///
    /// The real rule is a set of per-client patterns (`^(ios|ipados) `, `^macos \d`, ...); the
    /// first word is the tolerant reading of it: `iOS 18.4.0` → `ios`, `macOS 15.3.0` → `macos`,
    /// `Android 14` → `android`, `linux` → `linux`.
    static func family(of platform: String?) -> String {
        let word = normalize(platform).split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        switch word {
        case "ipados": return "ios"
        case "darwin", "mac", "osx": return "macos"
        case "win32": return "windows"
        default: return word
        }
    }

    /// Whether `client` changed the metadata pinned on `record` so that re-approval is needed:
    /// another platform family, or another device family. An empty pin is not enforced.
    static func requiresReapproval(record: PairedDevice, client: PairingClientInfo) -> Bool {
        let pinnedPlatform = normalize(record.platform)
        if !pinnedPlatform.isEmpty, family(of: record.platform) != family(of: client.platform) { return true }
        let pinnedFamily = normalize(record.deviceFamily)
        if !pinnedFamily.isEmpty, pinnedFamily != normalize(client.deviceFamily) { return true }
        return false
    }

    /// The platform to store after a connect that needed no re-approval: an OS-version change
    /// within the same family is refreshed silently; otherwise the pin stays.
    static func refreshedPlatform(record: PairedDevice, client: PairingClientInfo) -> String? {
        guard let claimed = client.platform, !normalize(claimed).isEmpty, !normalize(record.platform).isEmpty,
              normalize(claimed) != normalize(record.platform),
              family(of: claimed) == family(of: record.platform) else { return record.platform }
        return claimed
    }
}
