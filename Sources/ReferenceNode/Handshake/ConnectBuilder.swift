import Foundation
import GatewayProtocol

/// Where the credential in `connect.auth` came from.
public enum ConnectAuthSource: String, Sendable, Hashable {
    /// The configured shared Gateway token.
    case sharedToken
    /// A device token stored from an earlier `hello-ok`.
    case storedDeviceToken
    /// A setup-code bootstrap token.
    case bootstrapToken
    /// No credential.
    case none
}

/// The credentials available for one connect.
struct ConnectCredentials: Sendable, Hashable {
    var sharedToken: String?
    var storedToken: StoredDeviceToken?
    var bootstrapToken: String?
    /// The one-shot retry after `AUTH_TOKEN_MISMATCH`: shared token plus explicit device token.
    var deviceTokenRetry = false
}

/// The pure parts of building a `connect` request: which credential goes where (docs/protocol.md §5.2), which
/// scopes to ask for, and the signed device proof (docs/protocol.md §3.8-3.11).
enum ConnectBuilder {
    /// The protocol range the client offers: 3...4 (a node may be served on the N-1 window,
    /// docs/protocol.md §3.6; 4 is inside the range for operators).
    static let minProtocol = 3
    /// See ``minProtocol``.
    static let maxProtocol = 4

    /// Fills `auth` as Swift does (docs/protocol.md §5.2): the shared token; otherwise the
    /// stored device token as `auth.token` unless a fresh bootstrap token was supplied;
    /// otherwise the bootstrap token.
    static func auth(for credentials: ConnectCredentials) -> (auth: ConnectAuth?, source: ConnectAuthSource) {
        if let shared = credentials.sharedToken, !shared.isEmpty {
            let deviceToken = credentials.deviceTokenRetry ? credentials.storedToken?.token : nil
            return (ConnectAuth(token: shared, deviceToken: deviceToken), .sharedToken)
        }
        if let bootstrap = credentials.bootstrapToken, !bootstrap.isEmpty {
            return (ConnectAuth(bootstrapToken: bootstrap), .bootstrapToken)
        }
        if let stored = credentials.storedToken {
            return (ConnectAuth(token: stored.token), .storedDeviceToken)
        }
        return (nil, .none)
    }

    /// The scopes a session asks for. Nodes send `[]`. An operator with a stored token asks for
    /// the scopes stored with it (plus any it was told to add); without one, for `defaults`
    /// plus the additions. Order is kept stable because the list is signed as sent.
    static func scopes(role: GatewayRole, stored: StoredDeviceToken?, defaults: [String], added: [String],
                       configuration: ReferenceConfiguration) -> [String] {
        guard role == .operator else {
            // Node connects carry no scopes (docs/protocol.md §3.5; trusted-CIDR needs it, §5.10).
            if configuration.has(.nodeSendsScopes) { return ["operator.read"] }
            return []
        }
        // With a stored token, the scopes stored with it (`hello-ok.auth.scopes` of the hello that
        // issued it): docs gateway/protocol.md "Auth", `resolveGatewayConnectScopes` of the
        // TypeScript client.
        let storedScopes = configuration.has(.ignoreStoredScopes) ? nil : stored?.scopes
        var result = storedScopes ?? defaults
        for scope in added where !result.contains(scope) { result.append(scope) }
        return result
    }

    /// Whether the one-shot `AUTH_TOKEN_MISMATCH` retry may present the stored device token to
    /// `url`: a loopback host (`localhost`, `127.0.0.0/8`, `::1`) on `ws://` or `wss://`, or
    /// `wss://` with a pinned certificate fingerprint; a public or LAN `ws://` / unpinned `wss://`
    /// endpoint does not qualify (upstream `isTrustedDeviceRetryEndpoint`,
    /// packages/gateway-client/src/client.ts @166b22cac689bb426e034c2fa9428363ece3ec23).
    static func isTrustedDeviceRetryEndpoint(_ url: String, pinnedFingerprint: String? = nil) -> Bool {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host?.lowercased() else {
            return false
        }
        var bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        while bare.hasSuffix(".") { bare.removeLast() }
        if bare == "localhost" || isLoopbackAddress(bare) { return true }
        return (scheme == "wss" || scheme == "https") && !(pinnedFingerprint ?? "").trimmingCharacters(in: .whitespaces).isEmpty
    }

    /// `127.0.0.0/8` or `::1`.
    static func isLoopbackAddress(_ host: String) -> Bool {
        if host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }

    /// A usable `connect.challenge` payload: a non-empty nonce and an integer `ts` ≥ 0 (docs
    /// gateway/protocol.md "Handshake": "a received challenge with an absent or malformed `ts`
    /// is invalid"). The `accept-challenge-without-ts` mutant takes any challenge with a nonce
    /// and signs with its own clock.
    static func challenge(_ payload: JSONValue?, configuration: ReferenceConfiguration, fallbackNowMs: Int64) -> ConnectChallenge? {
        guard let nonce = payload?["nonce"]?.stringValue?.trimmingWhitespaces(), !nonce.isEmpty else { return nil }
        // An integral floating-point number (`1737264000000.0`) is the same integer in JSON.
        if let value = payload?["ts"]?.int64Value, value >= 0, let integer = Int(exactly: value) {
            return ConnectChallenge(nonce: nonce, ts: integer)
        }
        guard configuration.has(.acceptChallengeWithoutTs) else { return nil }
        return ConnectChallenge(nonce: nonce, ts: Int(fallbackNowMs))
    }

    /// The connect params as sent. The `connect-member-outside-schema` mutant adds
    /// `client.nickname`, a member the closed schema does not have.
    static func json(_ params: ConnectParams, configuration: ReferenceConfiguration) -> JSONValue {
        var json = params.json
        if configuration.has(.connectMemberOutsideSchema), case .object(var object) = json,
           case .object(var client)? = object["client"] {
            client["nickname"] = .string(params.client.displayName ?? "reference")
            object["client"] = .object(client)
            json = .object(object)
        }
        return json
    }

    /// The node capability surface the reference client declares.
    static let nodeCaps = ["canvas", "screen", "camera", "location", "device"]

    /// Builds the connect params, signing the device proof over the configured payload layout.
    /// - Parameters:
    ///   - challenge: the connection's challenge; `nil` only for the `connect-before-challenge` mutant.
    ///   - fallbackNowMs: the signing time when there is no challenge.
    static func params(role: GatewayRole, identity: DeviceIdentity, challenge: ConnectChallenge?, auth: ConnectAuth?,
                       scopes: [String], commands: [String], configuration: ReferenceConfiguration,
                       fallbackNowMs: Int64) -> ConnectParams {
        let persona = configuration.persona
        let mode: ClientMode = role == .node ? .node : .ui
        let client = ClientInfo(
            id: persona.clientId, displayName: persona.displayName, version: persona.version, platform: persona.platform,
            deviceFamily: persona.deviceFamily, modelIdentifier: persona.modelIdentifier, mode: mode,
            instanceId: String(identity.deviceId.prefix(16)))
        let protocolRange = protocolRange(configuration)
        var params = ConnectParams(
            minProtocol: protocolRange.lowerBound, maxProtocol: protocolRange.upperBound, client: client, role: role,
            scopes: scopes, caps: role == .node ? nodeCaps : [], commands: role == .node ? commands : nil,
            permissions: role == .node ? [NodePermissionKey.cameraCapture.rawValue: true, NodePermissionKey.location.rawValue: true] : nil,
            auth: auth, locale: persona.locale, userAgent: persona.userAgent)
        params.device = proof(for: params, identity: identity, challenge: challenge, configuration: configuration,
                              fallbackNowMs: fallbackNowMs)
        return params
    }

    /// 3...4, or a range without 3 and 4 for the `wrong-protocol-range` mutant.
    static func protocolRange(_ configuration: ReferenceConfiguration) -> ClosedRange<Int> {
        if configuration.has(.wrongProtocolRange) { return 5...5 }
        return minProtocol...maxProtocol
    }

    /// The signed device block (docs/protocol.md §3.9-3.11): `signedAt` is the challenge `ts` (the Gateway's clock,
    /// so device clock skew cannot break it), the nonce is echoed, the token is the docs/protocol.md §3.10 token.
    static func proof(for params: ConnectParams, identity: DeviceIdentity, challenge: ConnectChallenge?,
                      configuration: ReferenceConfiguration, fallbackNowMs: Int64) -> DeviceProof {
        var signedAt = challenge.map { $0.ts } ?? Int(fallbackNowMs)
        if configuration.has(.staleSignedAt) { signedAt -= 5 * 60 * 1000 }
        let deviceId = configuration.has(.wrongDeviceId)
            ? SHA256Digest.hex(Data(identity.publicKeyBase64URL.utf8))
            : identity.deviceId
        let nonce = challenge?.nonce
        let scopes = params.scopes ?? []
        let role = params.resolvedRole.rawValue
        let token = params.signatureToken
        if configuration.has(.signWithoutNonce) {
            let payload = DeviceAuthPayload.v1(
                deviceId: deviceId, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
                role: role, scopes: scopes, signedAtMs: signedAt, token: token)
            return DeviceProof(id: deviceId, publicKey: identity.publicKeyBase64URL, signature: identity.sign(payload),
                               signedAt: signedAt, nonce: nil)
        }
        let payload: String
        switch configuration.signatureVersion {
        case .v2, .v1:
            payload = DeviceAuthPayload.v2(
                deviceId: deviceId, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
                role: role, scopes: scopes, signedAtMs: signedAt, token: token, nonce: nonce ?? "")
        case .v3:
            payload = DeviceAuthPayload.v3(
                deviceId: deviceId, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
                role: role, scopes: scopes, signedAtMs: signedAt, token: token, nonce: nonce ?? "",
                platform: params.client.platform, deviceFamily: params.client.deviceFamily)
        }
        return DeviceProof(id: deviceId, publicKey: identity.publicKeyBase64URL, signature: identity.sign(payload),
                           signedAt: signedAt, nonce: nonce)
    }
}
