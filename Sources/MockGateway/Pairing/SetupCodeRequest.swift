import Foundation
import GatewayProtocol

/// The `params` of `device.pair.setupCode` (upstream `DevicePairSetupCodeParamsSchema`,
/// `packages/gateway-protocol/src/schema/devices.ts`, the version found by `find_string` as id
/// 57418678073): a closed object with `publicUrl?`, `preferRemoteUrl?`, `includeQr?`,
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
/// `device.pair.setupCode` (upstream `device-pair-setup.ts`, found by `find_string` as id
/// 57614798175, and `resolvePairingSetupFromConfig` in `src/pairing/setup-code.ts`).
public struct SetupCodePlan: Sendable, Hashable {
    /// The URL in the code (`gatewayUrl` of the result).
    public var url: String
    /// Where it came from (`urlSource`).
    public var urlSource: String
    /// The profile of the token.
    public var profile: BootstrapProfile
    /// Whether full access was lowered to limited because the URL is plaintext `ws://` to a
    /// host that is not loopback (`accessDowngraded`).
    public var accessDowngraded: Bool
    /// `auth`: `token` or `password` (a label, never the secret).
    public var authLabel: String

    /// Plans a setup code for a Gateway at `gatewayURL` with shared-secret mode `auth`.
    /// - Returns: the plan, or the error upstream answers: setup codes need a shared secret
    ///   (mode `none` is refused), a join URL needs the `node` profile, and this Gateway serves
    ///   no join URLs.
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
        var profile = request.profileName.flatMap(BootstrapProfile.named) ?? .full
        var downgraded = false
        if profile == .full, isPlaintextNonLoopback(url) {
            // "limited (no admin; forced for LAN ws://)": full access never crosses plaintext LAN.
            profile = .limited
            downgraded = true
        }
        return .success(SetupCodePlan(
            url: url, urlSource: request.publicUrl == nil ? "gateway.bind=custom" : "request.publicUrl", profile: profile,
            accessDowngraded: downgraded, authLabel: authLabel))
    }

    /// Whether `url` is `ws://` to a host that is not a loopback address or `localhost`.
    static func isPlaintextNonLoopback(_ url: String) -> Bool {
        guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "ws", let host = parsed.host?.lowercased() else {
            return false
        }
        if host == "localhost" { return false }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return !((try? IPAddress(parsing: bare))?.isLoopback ?? false)
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
