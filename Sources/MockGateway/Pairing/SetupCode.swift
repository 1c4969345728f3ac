import Foundation
import GatewayProtocol

/// Why a text is not a setup code.
public struct SetupCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
}

/// A setup code: base64url of a JSON object `{url, urls?, bootstrapToken, ...}`, shown as a QR
/// code or as the node host's `oc-pair://<code>` link (gateway-protocol.md §6.7).
public struct SetupCode: Sendable, Hashable {
    /// The link scheme of the node-host form.
    public static let linkScheme = "oc-pair://"

    /// The Gateway URL the client should connect to.
    public var url: String
    /// Alternative URLs, if any.
    public var urls: [String]?
    /// The single-use bootstrap token.
    public var bootstrapToken: String
    /// Any other members, kept so a decoded code re-encodes unchanged.
    public var extra: [String: JSONValue]

    /// Creates a setup code.
    public init(url: String, urls: [String]? = nil, bootstrapToken: String, extra: [String: JSONValue] = [:]) {
        self.url = url
        self.urls = urls
        self.bootstrapToken = bootstrapToken
        self.extra = extra
    }

    /// The JSON object behind the code.
    public var json: JSONValue {
        var object = extra
        object["url"] = .string(url)
        object["bootstrapToken"] = .string(bootstrapToken)
        if let urls { object["urls"] = .array(urls.map(JSONValue.string)) }
        return .object(object)
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
        self.init(url: url, urls: urls, bootstrapToken: token, extra: object)
    }
}
