import Foundation

/// The strings a device signs in `connect` (docs/protocol.md §3.9-3.10).
///
/// Fields are joined with `|` without escaping; `scopes` is the comma-joined list exactly as sent.
public enum DeviceAuthPayload {
    /// A payload layout.
    public enum Version: String, Sendable, Hashable, Codable, CaseIterable {
        /// `v1|deviceId|clientId|clientMode|role|scopes|signedAtMs|token`: legacy, no nonce; no
        /// longer accepted by Gateways.
        case v1
        /// `v2|…|token|nonce`: what Swift (iOS/macOS) signs.
        case v2
        /// `v3|…|token|nonce|platform|deviceFamily`: what the TypeScript client and Android sign.
        case v3
    }

    /// The legacy v1 payload.
    public static func v1(
        deviceId: String, clientId: String, clientMode: String, role: String, scopes: [String], signedAtMs: Int,
        token: String
    ) -> String {
        ["v1", deviceId, clientId, clientMode, role, scopes.joined(separator: ","), String(signedAtMs), token]
            .joined(separator: "|")
    }

    /// The v2 payload.
    public static func v2(
        deviceId: String, clientId: String, clientMode: String, role: String, scopes: [String], signedAtMs: Int,
        token: String, nonce: String
    ) -> String {
        ["v2", deviceId, clientId, clientMode, role, scopes.joined(separator: ","), String(signedAtMs), token, nonce]
            .joined(separator: "|")
    }

    /// The v3 payload; `platform` and `deviceFamily` are normalised with `normalizeMetadataField`.
    public static func v3(
        deviceId: String, clientId: String, clientMode: String, role: String, scopes: [String], signedAtMs: Int,
        token: String, nonce: String, platform: String?, deviceFamily: String?
    ) -> String {
        [
            "v3", deviceId, clientId, clientMode, role, scopes.joined(separator: ","), String(signedAtMs), token, nonce,
            normalizeMetadataField(platform), normalizeMetadataField(deviceFamily),
        ].joined(separator: "|")
    }

    /// The v3 normalisation of `platform`/`deviceFamily`: trimmed, ASCII `A`–`Z` lower-cased, every
    /// other character untouched (so `İOS` becomes `İos`); `nil` gives the empty string.
    public static func normalizeMetadataField(_ value: String?) -> String {
        guard let value else { return "" }
        var result = String.UnicodeScalarView()
        for scalar in value.trimmingWhitespacesAndNewlines().unicodeScalars {
            if (0x41...0x5A).contains(scalar.value), let lower = Unicode.Scalar(scalar.value + 0x20) {
                result.append(lower)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// The token that goes into the payload (docs/protocol.md §3.10): `token ?? deviceToken ?? bootstrapToken`,
    /// the first one present, as sent: no trimming, and a present empty `token` wins over the
    /// others (so `{token:"", bootstrapToken:"B"}` is signed over `""`); `""` when none is present.
    ///
    /// Upstream: `resolveSignatureToken` in `src/gateway/server/ws-connection/handshake-auth-helpers.ts`
    /// @66072549fda8e4fc85bb954ff4880471fe9657ee (`auth.token ?? auth.deviceToken ?? auth.bootstrapToken ?? null`).
    public static func signatureToken(token: String?, deviceToken: String?, bootstrapToken: String?) -> String {
        token ?? deviceToken ?? bootstrapToken ?? ""
    }

    /// Rebuilds the payload a client should have signed for `params`, as the Gateway does.
    ///
    /// The role is the effective role (`operator` when absent), `scopes` the list as sent (empty
    /// when absent), the token per docs/protocol.md §3.10.
    /// - Parameters:
    ///   - version: the layout.
    ///   - params: the connect params; they must hold a `device` block.
    ///   - nonce: the nonce to embed; defaults to `device.nonce` (the empty string when absent).
    /// - Returns: the payload, or `nil` when `params` has no `device`.
    public static func build(_ version: Version, for params: ConnectParams, nonce: String? = nil) -> String? {
        guard let device = params.device else { return nil }
        let role = params.resolvedRole.rawValue
        let scopes = params.scopes ?? []
        let token = params.signatureToken
        let nonce = nonce ?? device.nonce ?? ""
        switch version {
        case .v1:
            return v1(
                deviceId: device.id, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
                role: role, scopes: scopes, signedAtMs: device.signedAt, token: token)
        case .v2:
            return v2(
                deviceId: device.id, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
                role: role, scopes: scopes, signedAtMs: device.signedAt, token: token, nonce: nonce)
        case .v3:
            return v3(
                deviceId: device.id, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
                role: role, scopes: scopes, signedAtMs: device.signedAt, token: token, nonce: nonce,
                platform: params.client.platform, deviceFamily: params.client.deviceFamily)
        }
    }
}
