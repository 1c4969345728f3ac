import Foundation
import GatewayProtocol
import WebSocketTransport

/// Why a text is not a setup code.
public struct SetupCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
}

/// A setup code: unpadded base64url of a JSON object
/// `{url, urls?, bootstrapToken, expiresAtMs?, tlsFingerprint?}`, shown as a QR code or as the
/// node host's `oc-pair://<code>` link (docs/protocol.md §5.13; upstream `PairingSetupPayload`
/// and `encodePairingSetupCode` in `src/pairing/setup-code.ts`, the current shape from its test
/// `src/pairing/setup-code.test.ts`). Older Gateways issue codes without `expiresAtMs`
/// and `tlsFingerprint`; decoders accept both shapes.
public struct SetupCode: Sendable, Hashable {
    /// The link scheme of the node-host form.
    public static let linkScheme = "oc-pair://"

    /// The Gateway URL the client should connect to.
    public var url: String
    /// Alternative URLs, if any.
    public var urls: [String]?
    /// The single-use bootstrap token.
    public var bootstrapToken: String
    /// When the bootstrap token stops being accepted (current Gateways); decoders refuse an
    /// expired code.
    public var expiresAtMs: Int64?
    /// The SHA-256 fingerprint of the Gateway's TLS certificate, for `wss://` Gateways with a
    /// certificate the client should pin: 64 lower-case hexadecimal digits, as upstream issues it
    /// (this Gateway writes ``Gateway/tlsFingerprint``). Decoding canonicalises other spellings
    /// (`SHA256:AB:CD:…`) to that form and refuses a value that is not a SHA-256 fingerprint, as
    /// upstream's `decodePairingSetupCode` does (`src/pairing/setup-code.test.ts`: "round-trips setup codes while canonicalizing their TLS
    /// fingerprint", "rejects an invalid TLS fingerprint in a setup code").
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
    /// base64 characters are tolerated (upstream's decoder insists on the base64url alphabet).
    /// - Parameter nowMs: when given, a code whose `expiresAtMs` is not after it is refused
    ///   (upstream `decodePairingSetupCode(..., {nowMs})`).
    /// - Throws: `SetupCodeError` when the text is not base64 of a JSON object with string
    ///   `url` and `bootstrapToken`, an integer `expiresAtMs` and a SHA-256 `tlsFingerprint` when
    ///   present, or when it expired.
    public init(decoding text: String, nowMs: Int64? = nil) throws(SetupCodeError) {
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
            guard let value = raw.int64Value else { throw SetupCodeError(description: "setup code expiresAtMs is not an integer") }
            expiresAtMs = value
        }
        var tlsFingerprint: String?
        if let raw = object.removeValue(forKey: "tlsFingerprint") {
            guard let value = raw.stringValue else { throw SetupCodeError(description: "setup code tlsFingerprint is not a string") }
            guard let canonical = WebSocketTLSClientConfiguration.normalizedFingerprint(value) else {
                throw SetupCodeError(description: "setup code tlsFingerprint is not a SHA-256 fingerprint (64 hexadecimal digits)")
            }
            tlsFingerprint = canonical
        }
        if let nowMs, let expiresAtMs, expiresAtMs <= nowMs {
            throw SetupCodeError(description: "setup code expired at \(expiresAtMs)")
        }
        self.init(url: url, urls: urls, bootstrapToken: token, expiresAtMs: expiresAtMs, tlsFingerprint: tlsFingerprint,
                  extra: object)
    }
}
