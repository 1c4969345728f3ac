import Foundation
import GatewayProtocol

/// Why a text is not a setup code.
public struct SetupCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
}

/// A setup code: base64url of a JSON object `{url, urls?, bootstrapToken, expiresAtMs,
/// tlsFingerprint?}`, shown as a QR code or as the node host's `oc-pair://<code>` link
/// (gateway-protocol.md §6.7; drift-2026-12.md §3 "Setup-code format").
public struct SetupCode: Sendable, Hashable {
    /// The link scheme of the node-host form.
    public static let linkScheme = "oc-pair://"

    /// The Gateway URL the client should connect to.
    public var url: String
    /// Alternative URLs, if any.
    public var urls: [String]?
    /// The single-use bootstrap token.
    public var bootstrapToken: String
    /// When the bootstrap token stops being accepted (Gateway clock, milliseconds); upstream
    /// decoders refuse a code past it.
    public var expiresAtMs: Int64?
    /// The SHA-256 fingerprint of the Gateway's TLS certificate, for a `wss://` URL: the client
    /// pins it instead of asking a CA.
    public var tlsFingerprint: String?
    /// Any other members, kept so a decoded code re-encodes unchanged.
    public var extra: [String: JSONValue]

    /// Creates a setup code.
    public init(url: String, urls: [String]? = nil, bootstrapToken: String, expiresAtMs: Int64? = nil,
                tlsFingerprint: String? = nil, extra: [String: JSONValue] = [:]) {
        self.url = url
        self.urls = urls
        self.bootstrapToken = bootstrapToken
        self.expiresAtMs = expiresAtMs
        self.tlsFingerprint = tlsFingerprint
        self.extra = extra
    }

    /// The JSON object behind the code.
    public var json: JSONValue {
        var object = extra
        object["url"] = .string(url)
        object["bootstrapToken"] = .string(bootstrapToken)
        if let urls { object["urls"] = .array(urls.map(JSONValue.string)) }
        if let expiresAtMs { object["expiresAtMs"] = .int(expiresAtMs) }
        if let tlsFingerprint { object["tlsFingerprint"] = .string(tlsFingerprint) }
        return .object(object)
    }

    /// Whether the code has expired at `nowMs` (a code without `expiresAtMs` never does).
    public func isExpired(atMs nowMs: Int64) -> Bool {
        guard let expiresAtMs else { return false }
        return nowMs > expiresAtMs
    }

    /// The code: unpadded base64url of the compact JSON (`<redacted>` once
    /// ``redactSecrets()`` was called).
    public var encoded: String { isRedacted ? Self.redactedText : Base64URL.encode(json.encoded()) }

    /// The `oc-pair://<code>` link (`<redacted>` once ``redactSecrets()`` was called).
    public var link: String { isRedacted ? Self.redactedText : Self.linkScheme + encoded }

    /// What a redacted secret reads as.
    public static let redactedText = "<redacted>"

    /// Whether the secrets were replaced by `<redacted>`.
    public private(set) var isRedacted = false

    /// Replaces the bootstrap token, and with it the code and the link, by `<redacted>`, for
    /// output that must not carry secrets.
    public mutating func redactSecrets() {
        bootstrapToken = Self.redactedText
        isRedacted = true
    }

    /// Decodes a code or an `oc-pair://` link. Surrounding whitespace, padding and standard
    /// base64 characters are tolerated.
    /// - Throws: `SetupCodeError` when the text is not base64 of a JSON object with string
    ///   `url` and `bootstrapToken`.
    public init(decoding text: String) throws(SetupCodeError) {
        var body = text.trimmingASCIIWhitespace()
        if body.lowercased().hasPrefix(Self.linkScheme) { body = String(body.dropFirst(Self.linkScheme.count)) }
        while body.hasSuffix("/") { body.removeLast() }
        guard let bytes = Base64URL.decode(body) else { throw SetupCodeError(description: "setup code is not base64url") }
        guard let value = try? JSONValue(parsing: bytes), var object = value.objectValue else {
            throw SetupCodeError(description: "setup code does not hold a JSON object")
        }
        guard let url = object.removeValue(forKey: "url")?.stringValue, !url.isEmpty else {
            throw SetupCodeError(description: "setup code has no url")
        }
        guard let token = object.removeValue(forKey: "bootstrapToken")?.stringValue, !token.isEmpty else {
            throw SetupCodeError(description: "setup code has no bootstrapToken")
        }
        var urls: [String]?
        if let raw = object.removeValue(forKey: "urls") {
            guard let list = raw.arrayValue?.compactMap(\.stringValue) else {
                throw SetupCodeError(description: "setup code urls is not a list of strings")
            }
            urls = list
        }
        var expiresAtMs: Int64?
        if let raw = object.removeValue(forKey: "expiresAtMs") {
            guard let value = raw.int64Value else { throw SetupCodeError(description: "setup code expiresAtMs is not a number") }
            expiresAtMs = value
        }
        var tlsFingerprint: String?
        if let raw = object.removeValue(forKey: "tlsFingerprint") {
            guard let value = raw.stringValue else { throw SetupCodeError(description: "setup code tlsFingerprint is not a string") }
            tlsFingerprint = value
        }
        self.init(url: url, urls: urls, bootstrapToken: token, expiresAtMs: expiresAtMs, tlsFingerprint: tlsFingerprint,
                  extra: object)
    }
}

/// The access a setup code hands off, as upstream's `openclaw qr` issues them (drift-2026-12.md
/// §3; `openclaw/openclaw docs/cli/qr.md@06b1341d`): every profile pairs the `node` role; the
/// operator hand-off differs. No profile ever hands off `operator.pairing`.
public enum SetupCodeProfile: String, Sendable, Hashable, CaseIterable {
    /// Node + operator `admin, approvals, read, talk.secrets, write`: upstream's default for
    /// `wss://` and loopback URLs.
    case full
    /// Node + operator `approvals, read, talk.secrets, write` (no `operator.admin`): what a plain
    /// `ws://` URL on the LAN is limited to.
    case limited
    /// Node + operator `read, talk` (for voice-only surfaces).
    case voiceNode = "voice-node"
    /// The node role alone (the Watch's direct setup).
    case node

    /// The roles and scopes the bootstrap token grants.
    public var bootstrapProfile: BootstrapProfile {
        switch self {
        case .full: .fullAccess
        case .limited: .setupCode
        case .voiceNode:
            BootstrapProfile(roles: [GatewayRole.node, GatewayRole.operator], scopes: [OperatorScope.read, .talk].map(\.rawValue))
        case .node: BootstrapProfile(roles: [GatewayRole.node], scopes: [])
        }
    }

    /// Upstream's default for a URL: `full` for `wss://` and loopback hosts, `limited` otherwise.
    public static func defaultProfile(forURL url: String) -> SetupCodeProfile {
        isFullAccessAllowed(forURL: url) ? .full : .limited
    }

    /// Whether `full` may be issued for `url`: upstream forces `limited` on a plain `ws://` URL
    /// that is not loopback.
    public static func isFullAccessAllowed(forURL url: String) -> Bool {
        let lower = url.lowercased()
        if lower.hasPrefix("wss://") { return true }
        guard lower.hasPrefix("ws://") else { return false }
        var host = lower.dropFirst("ws://".count).prefix { $0 != "/" && $0 != "?" }
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        if host == "localhost" { return true }
        return (try? IPAddress(parsing: String(host)))?.isLoopback == true
    }
}
