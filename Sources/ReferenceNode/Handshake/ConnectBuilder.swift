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

/// The pure parts of building a `connect` request: which credential goes where (§5.2), which
/// scopes to ask for, and the signed device proof (§4).
enum ConnectBuilder {
    /// The protocol range the client offers: 3...4 (a node may be served on the N-1 window,
    /// §3.4; 4 is inside the range for operators).
    static let minProtocol = 3
    /// See ``minProtocol``.
    static let maxProtocol = 4

    /// Fills `auth` as Swift does (gateway-protocol.md §5.2): the shared token; otherwise the
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
            // Node connects carry no scopes (§3.3 "nodes send []"; trusted-CIDR needs it, §6.4).
            if configuration.has(.nodeSendsScopes) { return ["operator.read"] }
            return []
        }
        var result = stored?.scopes ?? defaults
        for scope in added where !result.contains(scope) { result.append(scope) }
        return result
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
            permissions: role == .node ? ["camera.capture": true, "location": true] : nil,
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

    /// The signed device block (§4.2-4.4): `signedAt` is the challenge `ts` (the Gateway's clock,
    /// so device clock skew cannot break it), the nonce is echoed, the token is the §4.3 token.
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
