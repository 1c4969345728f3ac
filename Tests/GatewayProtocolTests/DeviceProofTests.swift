import Foundation
import Testing

@testable import GatewayProtocol

/// Builds signed connect params for the verifier tests.
struct SignedConnectFixture {
    static let nonce = "3f0c6c1e-8f0e-4a8b-9d57-1c2b7e9a4d11"
    static let now = 1_767_225_600_000

    let identity: DeviceIdentity

    init() throws {
        identity = try DeviceIdentity(seed: Data((0..<32).map { UInt8($0) }))
    }

    func params(
        version: DeviceAuthPayload.Version = .v3, role: GatewayRole? = .node, mode: ClientMode = .node,
        scopes: [String]? = [], auth: ConnectAuth? = ConnectAuth(token: "tok"), signedAt: Int = SignedConnectFixture.now,
        nonce: String? = SignedConnectFixture.nonce, platform: String = "iOS 18.4.0", deviceFamily: String? = "iPhone"
    ) -> ConnectParams {
        var params = ConnectParams(
            minProtocol: 4, maxProtocol: 4,
            client: ClientInfo(id: .iOS, version: "2026.8.1", platform: platform, deviceFamily: deviceFamily, mode: mode),
            role: role, scopes: scopes, auth: auth)
        params.device = DeviceProof(id: identity.deviceId, publicKey: identity.publicKeyBase64URL, signature: "", signedAt: signedAt, nonce: nonce)
        let payload = DeviceAuthPayload.build(version, for: params, nonce: nonce ?? "") ?? ""
        params.device?.signature = identity.sign(payload)
        return params
    }
}

@Suite("Device proof verification")
struct DeviceProofTests {
    let fixture: SignedConnectFixture
    init() throws { fixture = try SignedConnectFixture() }

    func verify(_ params: ConnectParams, nonce: String = SignedConnectFixture.nonce, now: Int = SignedConnectFixture.now, verifier: DeviceProofVerifier = DeviceProofVerifier()) -> DeviceProofOutcome {
        verifier.verify(params, expectedNonce: nonce, nowMs: now)
    }

    @Test(arguments: [DeviceAuthPayload.Version.v2, .v3])
    func v2AndV3SignaturesAreAcceptedAndReported(_ version: DeviceAuthPayload.Version) throws {
        let device = try #require(verify(fixture.params(version: version)).verifiedDevice)
        #expect(device.payloadVersion == version)
        #expect(device.publicKey == fixture.identity.publicKeyBase64URL)
        #expect(device.rawPublicKey == fixture.identity.publicKey)
    }

    @Test func missingDeviceIsIdentityRequired() {
        var params = fixture.params()
        params.device = nil
        let failure = verify(params).failure
        #expect(failure == .identityRequired)
        #expect(failure?.errorShape == ErrorShape(code: "NOT_PAIRED", message: "device identity required", details: ["code": "DEVICE_IDENTITY_REQUIRED"]))
    }

    @Test func deviceIdMustBeTheKeyHash() {
        var params = fixture.params()
        params.device?.id = String(repeating: "0", count: 64)
        #expect(verify(params).failure == .deviceIdMismatch)
        params.device?.id = fixture.identity.deviceId.uppercased()
        #expect(verify(params).failure == .deviceIdMismatch)
    }

    @Test func idMismatchIsCheckedBeforeFreshnessAndNonce() {
        var params = fixture.params(signedAt: 0, nonce: nil)
        params.device?.id = String(repeating: "0", count: 64)
        #expect(verify(params).failure?.detailCode == .deviceAuthDeviceIdMismatch)
    }

    @Test func signedAtMayBeOffByExactlyTwoMinutesButNotMore() {
        let skew = DeviceProofVerifier.signatureSkewMs
        #expect(verify(fixture.params(signedAt: SignedConnectFixture.now - skew)).verifiedDevice != nil)
        #expect(verify(fixture.params(signedAt: SignedConnectFixture.now + skew)).verifiedDevice != nil)
        #expect(verify(fixture.params(signedAt: SignedConnectFixture.now - skew - 1)).failure == .signatureExpired)
        #expect(verify(fixture.params(signedAt: SignedConnectFixture.now + skew + 1)).failure == .signatureExpired)
        #expect(verify(fixture.params(signedAt: Int.min)).failure == .signatureExpired)
    }

    @Test func freshnessIsCheckedBeforeTheNonce() {
        #expect(verify(fixture.params(signedAt: 0, nonce: nil)).failure == .signatureExpired)
    }

    @Test(arguments: [nil, "", "   "])
    func missingOrBlankNonceIsRequired(_ nonce: String?) {
        #expect(verify(fixture.params(nonce: nonce)).failure == .nonceRequired)
    }

    @Test func nonceOfAnotherConnectionIsAMismatch() {
        #expect(verify(fixture.params(), nonce: "another-nonce").failure == .nonceMismatch)
    }

    @Test func signatureOverOtherFieldsIsInvalid() {
        var params = fixture.params()
        params.scopes = ["operator.admin"]
        #expect(verify(params).failure == .signatureInvalid)
        var tokenSwapped = fixture.params()
        tokenSwapped.auth = ConnectAuth(token: "other")
        #expect(verify(tokenSwapped).failure == .signatureInvalid)
    }

    @Test func v1IsRejectedUnlessTheLegacySwitchIsOn() throws {
        let params = fixture.params(version: .v1, nonce: nil)
        #expect(verify(params).failure == .nonceRequired)
        let device = try #require(verify(params, verifier: DeviceProofVerifier(acceptsLegacyV1: true)).verifiedDevice)
        #expect(device.payloadVersion == .v1)
        // The switch does not make a wrong v1 signature acceptable.
        var tampered = params
        tampered.scopes = ["x"]
        #expect(verify(tampered, verifier: DeviceProofVerifier(acceptsLegacyV1: true)).failure == .nonceRequired)
    }

    @Test func undecodablePublicKeyIsPublicKeyInvalid() {
        var params = fixture.params()
        params.device?.publicKey = "not-a-key"
        let failure = verify(params).failure
        #expect(failure == .publicKeyInvalid)
        #expect(failure?.errorShape.details == ["code": "DEVICE_AUTH_PUBLIC_KEY_INVALID", "reason": "device-public-key"])
    }

    @Test func pemPublicKeyIsAcceptedAndCanonicalised() throws {
        var params = fixture.params()
        params.device?.publicKey = DevicePublicKey.pem(forRawKey: fixture.identity.publicKey)
        let device = try #require(verify(params).verifiedDevice)
        #expect(device.publicKey == fixture.identity.publicKeyBase64URL)
    }

    @Test func failureMessagesAndReasonsMatchTheCatalogue() {
        let table: [(DeviceProofFailure, String, String, String)] = [
            (.deviceIdMismatch, "device identity mismatch", "DEVICE_AUTH_DEVICE_ID_MISMATCH", "device-id-mismatch"),
            (.signatureExpired, "device signature expired", "DEVICE_AUTH_SIGNATURE_EXPIRED", "device-signature-stale"),
            (.nonceRequired, "device nonce required", "DEVICE_AUTH_NONCE_REQUIRED", "device-nonce-missing"),
            (.nonceMismatch, "device nonce mismatch", "DEVICE_AUTH_NONCE_MISMATCH", "device-nonce-mismatch"),
            (.signatureInvalid, "device signature invalid", "DEVICE_AUTH_SIGNATURE_INVALID", "device-signature"),
            (.publicKeyInvalid, "device public key invalid", "DEVICE_AUTH_PUBLIC_KEY_INVALID", "device-public-key"),
        ]
        for (failure, message, code, reason) in table {
            #expect(failure.errorShape == ErrorShape(code: "INVALID_REQUEST", message: message, details: ["code": .string(code), "reason": .string(reason)]))
        }
    }
}

@Suite("Signature payloads")
struct DeviceAuthPayloadTests {
    let deviceId = "56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c"
    let nonce = "3f0c6c1e-8f0e-4a8b-9d57-1c2b7e9a4d11"

    @Test func v2MatchesTheDocumentedIOSNodePayload() {
        let payload = DeviceAuthPayload.v2(
            deviceId: deviceId, clientId: "openclaw-ios", clientMode: "node", role: "node", scopes: [],
            signedAtMs: 1_767_225_600_000, token: "tok-example-123", nonce: nonce)
        #expect(payload == "v2|\(deviceId)|openclaw-ios|node|node||1767225600000|tok-example-123|\(nonce)")
    }

    @Test func v3JoinsScopesInOrderAndNormalisesMetadata() {
        let payload = DeviceAuthPayload.v3(
            deviceId: deviceId, clientId: "openclaw-ios", clientMode: "ui", role: "operator",
            scopes: ["operator.write", "operator.read"], signedAtMs: 1, token: "", nonce: nonce,
            platform: "  iOS 18.4.0 ", deviceFamily: nil)
        #expect(payload == "v3|\(deviceId)|openclaw-ios|ui|operator|operator.write,operator.read|1||\(nonce)|ios 18.4.0|")
    }

    @Test func v1HasNoNonce() {
        let payload = DeviceAuthPayload.v1(deviceId: "d", clientId: "c", clientMode: "m", role: "r", scopes: ["a", "b"], signedAtMs: 5, token: "t")
        #expect(payload == "v1|d|c|m|r|a,b|5|t")
    }

    @Test func metadataLowerCasingTouchesOnlyASCIILetters() {
        #expect(DeviceAuthPayload.normalizeMetadataField("İOS") == "İos")
        #expect(DeviceAuthPayload.normalizeMetadataField("ÄNDROID") == "Ändroid")
        #expect(DeviceAuthPayload.normalizeMetadataField("iPhone") == "iphone")
        #expect(DeviceAuthPayload.normalizeMetadataField(" Mac \n") == "mac")
        #expect(DeviceAuthPayload.normalizeMetadataField("ΣΑΜ") == "ΣΑΜ")
        #expect(DeviceAuthPayload.normalizeMetadataField(nil) == "")
        #expect(DeviceAuthPayload.normalizeMetadataField("   ") == "")
    }

    /// handshake-auth-helpers.ts @66072549 `resolveSignatureToken`: `??`, no trimming.
    @Test func signatureTokenIsTheFirstPresentOfTokenDeviceTokenBootstrapToken() {
        #expect(DeviceAuthPayload.signatureToken(token: "a", deviceToken: "b", bootstrapToken: "c") == "a")
        #expect(DeviceAuthPayload.signatureToken(token: "", deviceToken: "b", bootstrapToken: "c") == "")
        #expect(DeviceAuthPayload.signatureToken(token: nil, deviceToken: " ", bootstrapToken: "c") == " ")
        #expect(DeviceAuthPayload.signatureToken(token: nil, deviceToken: nil, bootstrapToken: nil) == "")
        #expect(ConnectAuth(password: "secret").signatureToken == "")
    }

    @Test func buildUsesTheDefaultOperatorRoleAndEmptyScopes() throws {
        var params = ConnectParams(client: ClientInfo(id: "cli", version: "1", platform: "linux", mode: "cli"))
        params.device = DeviceProof(id: "d", publicKey: "k", signature: "s", signedAt: 7, nonce: "n")
        #expect(DeviceAuthPayload.build(.v2, for: params) == "v2|d|cli|cli|operator||7||n")
        #expect(DeviceAuthPayload.build(.v3, for: params) == "v3|d|cli|cli|operator||7||n|linux|")
        params.device = nil
        #expect(DeviceAuthPayload.build(.v3, for: params) == nil)
    }
}
