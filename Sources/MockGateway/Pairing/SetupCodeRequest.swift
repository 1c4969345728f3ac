import Foundation
import GatewayProtocol

/// The `params` of `device.pair.setupCode` (upstream `DevicePairSetupCodeParamsSchema`,
/// `packages/gateway-protocol/src/schema/devices.ts`): a closed object with `publicUrl?`, `preferRemoteUrl?`, `includeQr?`,
/// `bootstrapProfile?` (`limited`, `node` or `voice-node`; the default is full access) and
/// `joinUrl?: true`.
public struct SetupCodeRequest: Sendable, Hashable {
    /// A URL to put in the code instead of the Gateway's own.
    public var publicUrl: String?
    /// Whether the caller asked for a QR image (the fake never renders one; `qrDataUrl` is optional).
    public var includeQr: Bool
    /// The requested profile name, if any.
    public var profileName: String?
    /// Whether a join URL was asked for.
    public var joinUrl: Bool

    /// Creates a request.
    public init(publicUrl: String? = nil, includeQr: Bool = true, profileName: String? = nil, joinUrl: Bool = false) {
        self.publicUrl = publicUrl
        self.includeQr = includeQr
        self.profileName = profileName
        self.joinUrl = joinUrl
    }

    /// The profile names `bootstrapProfile` accepts.
    public static let profileNames = ["limited", "node", "voice-node"]

    /// Validates `params`.
    /// - Returns: the request, or the `INVALID_REQUEST` error naming the offending member.
    public static func parse(_ params: JSONValue?) -> Result<SetupCodeRequest, GatewayError> {
        func invalid(_ detail: String) -> Result<SetupCodeRequest, GatewayError> {
            .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                             message: "invalid \(GatewayMethod.devicePairSetupCode) params: \(detail)")))
        }
        let object = params?.objectValue ?? [:]
        if let params, params.objectValue == nil { return invalid("at root: must be object") }
        let known: Set<String> = ["publicUrl", "preferRemoteUrl", "includeQr", "bootstrapProfile", "joinUrl"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            return invalid("at root: unexpected property '\(unknown)'")
        }
        var request = SetupCodeRequest()
        if let value = object["publicUrl"] {
            guard let text = value.stringValue, !text.isEmpty else { return invalid("at /publicUrl: must be a non-empty string") }
            request.publicUrl = text
        }
        for flag in ["preferRemoteUrl", "includeQr"] {
            if let value = object[flag], value.boolValue == nil { return invalid("at /\(flag): must be boolean") }
        }
        request.includeQr = object["includeQr"]?.boolValue ?? true
        if let value = object["bootstrapProfile"] {
            guard let name = value.stringValue, profileNames.contains(name) else {
                return invalid("at /bootstrapProfile: must be equal to one of the allowed values")
            }
            request.profileName = name
        }
        if let value = object["joinUrl"] {
            guard value.boolValue == true else { return invalid("at /joinUrl: must be equal to constant") }
            request.joinUrl = true
        }
        return .success(request)
    }
}

/// Where a setup code points and what it grants, before its token is issued: the pure part of
/// `device.pair.setupCode` (upstream `device-pair-setup.ts`, and `resolvePairingSetupFromConfig`
/// in `src/pairing/setup-code.ts`).
public struct SetupCodePlan: Sendable, Hashable {
    /// The URL in the code (`gatewayUrl` of the result).
    public var url: String
    /// Where it came from (`urlSource`).
    public var urlSource: String
    /// The profile of the token.
    public var profile: BootstrapProfile
    /// Whether full access was lowered to limited because the URL is plaintext `ws://` to a
    /// private-network host (`accessDowngraded`).
    public var accessDowngraded: Bool
    /// `auth`: `token` or `password` (a label, never the secret).
    public var authLabel: String

    /// Plans a setup code for a Gateway at `gatewayURL` with shared-secret mode `auth`.
    /// - Returns: the plan, or the error upstream answers: setup codes need a shared secret
    ///   (mode `none` is refused), a join URL needs the `node` profile, this Gateway serves no
    ///   join URLs, and plain `ws://` to a host that is neither loopback nor on a private network
    ///   gets no code at all (``SetupURLExposure/publicPlaintext``).
    public static func plan(_ request: SetupCodeRequest, gatewayURL: String, auth: GatewayAuthMode) -> Result<SetupCodePlan, GatewayError> {
        let authLabel: String
        switch auth {
        case .none:
            return .failure(GatewayError(ErrorShape(
                code: ErrorCode.invalidRequest.rawValue,
                message: #"Pairing setup requires gateway.auth.mode "token" or "password"; current mode is "none"."#)))
        case .token: authLabel = "token"
        case .password: authLabel = "password"
        }
        if request.joinUrl {
            guard request.profileName == nil || request.profileName == "node" else {
                return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                        message: "Join URLs require bootstrapProfile=node.")))
            }
            return .failure(GatewayError(ErrorShape(code: ErrorCode.unavailable.rawValue,
                                                    message: "join URLs are not served by this Gateway")))
        }
        let url = request.publicUrl ?? gatewayURL
        if SetupURLExposure(url: url) == .publicPlaintext {
            return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                    message: SetupURLExposure.publicPlaintextRefusal)))
        }
        return .success(planned(profile: request.profileName.flatMap(BootstrapProfile.named), url: url,
                                urlSource: request.publicUrl == nil ? "gateway.bind=custom" : "request.publicUrl",
                                authLabel: authLabel))
    }

    /// The plan for `profile` (`nil`: `full`) at `url`, without the refusals of
    /// ``plan(_:gatewayURL:auth:)``: `full`, also when asked for by name, is lowered to
    /// `limited` for plain `ws://` to a private network ("Plaintext LAN `ws://` setup remains
    /// available, but OpenClaw automatically uses the limited profile", upstream `docs/cli/qr.md`,
    /// and `device.pair.setupCode` "reports when plaintext transport limits a requested
    /// full-access code", its handler's test).
    public static func planned(profile: BootstrapProfile?, url: String, urlSource: String, authLabel: String) -> SetupCodePlan {
        var profile = profile ?? .full
        var downgraded = false
        if profile == .full, SetupURLExposure(url: url) == .privatePlaintext {
            profile = .limited
            downgraded = true
        }
        return SetupCodePlan(url: url, urlSource: urlSource, profile: profile, accessDowngraded: downgraded, authLabel: authLabel)
    }

    /// The `device.pair.setupCode` result: `{setupId, expiresAtMs, setupCode, gatewayUrl, auth,
    /// urlSource, access, accessDowngraded?}` (no `qrDataUrl`: the fake renders no QR image, and
    /// the member is optional).
    public func result(setupId: String, expiresAtMs: Int64, code: SetupCode) -> JSONValue {
        var object: [String: JSONValue] = [
            "setupId": .string(setupId), "expiresAtMs": .int(expiresAtMs), "setupCode": .string(code.encoded),
            "gatewayUrl": .string(url), "auth": .string(authLabel), "urlSource": .string(urlSource),
            "access": .string(profile.access.rawValue),
        ]
        if accessDowngraded { object["accessDowngraded"] = true }
        return .object(object)
    }
}

/// How exposed the bootstrap token of a setup code for a URL is on its way to the Gateway, which
/// decides what upstream issues for it (`validateMobilePairingUrl`,
/// `isMobilePairingCleartextAllowedHost` and `isPrivateLanHost` in
/// `src/pairing/setup-code.ts@096dc99c0abdc6ee608b727fdb09b8a5d70d9b56`; the `limited` fallback
/// from `src/pairing/setup-code.test.ts`: `10.0.2.2` and
/// `gateway.local` over `ws://` are `limited`, a public host and a Tailscale address refused).
public enum SetupURLExposure: Sendable, Hashable {
    /// `wss://` (or `https://`): encrypted; every profile.
    case encrypted
    /// `ws://` to `localhost` or a loopback address: nothing crosses a network; every profile.
    case loopback
    /// `ws://` to a private network: an RFC 1918 or link-local (`169.254.0.0/16`) IPv4 address,
    /// `fe80::` or `fc00::/7` IPv6, or a `.local` host. Codes are issued, but `full` is lowered
    /// to `limited`, since anyone on the network can read (and race) the bootstrap token.
    case privatePlaintext
    /// `ws://` to any other host (public, Tailscale's `100.64.0.0/10`, a plain host name): no
    /// setup code at all.
    case publicPlaintext
    /// Not a URL with a `ws`, `wss`, `http` or `https` scheme and a host: left alone.
    case unrecognized

    /// What upstream answers (`INVALID_REQUEST`) for ``publicPlaintext``.
    public static let publicPlaintextRefusal = """
        Tailscale and public mobile pairing require a secure gateway URL (wss://) or Tailscale Serve/Funnel. \
        Plain ws:// is only accepted for loopback, private LAN addresses and .local hosts.
        """

    /// Classifies `url`.
    public init(url: String) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), var host = parsed.host?.lowercased(),
              !host.isEmpty else {
            self = .unrecognized
            return
        }
        switch scheme {
        case "wss", "https":
            self = .encrypted
            return
        case "ws", "http":
            break
        default:
            self = .unrecognized
            return
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        if let zone = host.firstIndex(of: "%") { host = String(host[..<zone]) }
        if host == "localhost" {
            self = .loopback
            return
        }
        if host.hasSuffix(".local") {
            self = .privatePlaintext
            return
        }
        guard let parsedAddress = try? IPAddress(parsing: host) else {
            self = .publicPlaintext
            return
        }
        if parsedAddress.isLoopback {
            self = .loopback
            return
        }
        self = Self.isPrivate(parsedAddress.mappedIPv4 ?? parsedAddress) ? .privatePlaintext : .publicPlaintext
    }

    private static func isPrivate(_ address: IPAddress) -> Bool {
        let bytes = address.bytes
        if address.isIPv4 {
            return bytes[0] == 10 || (bytes[0] == 172 && (16...31).contains(bytes[1])) || (bytes[0] == 192 && bytes[1] == 168)
                || (bytes[0] == 169 && bytes[1] == 254)
        }
        return (bytes[0] == 0xFE && bytes[1] == 0x80) || bytes[0] == 0xFC || bytes[0] == 0xFD
    }
}
