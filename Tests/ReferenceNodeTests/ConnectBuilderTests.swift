import Foundation
import GatewayProtocol
import Testing
@testable import ReferenceNode

struct ConnectBuilderTests {
    private let challenge = ConnectChallenge(nonce: "3f0c6c1e-8f0e-4a8b-9d57-1c2b7e9a4d11", ts: 1_767_225_600_000)

    private func params(_ configuration: ReferenceConfiguration, role: GatewayRole = .node, auth: ConnectAuth? = nil,
                        scopes: [String] = [], challenge: ConnectChallenge?) throws -> ConnectParams {
        ConnectBuilder.params(role: role, identity: try TestSupport.vectorIdentity(), challenge: challenge, auth: auth,
                              scopes: scopes, commands: NodeCommands.declared, configuration: configuration,
                              fallbackNowMs: 1_767_225_000_000)
    }

    private func verify(_ params: ConnectParams) -> DeviceProofOutcome {
        DeviceProofVerifier().verify(params, expectedNonce: challenge.nonce, nowMs: challenge.ts)
    }

    @Test(arguments: [DeviceAuthPayload.Version.v3, .v2])
    func theProofVerifiesEchoesTheNonceAndSignsAtTheChallengeTime(version: DeviceAuthPayload.Version) throws {
        let configuration = TestSupport.configuration(signatureVersion: version)
        let connect = try params(configuration, auth: ConnectAuth(token: "tok-example-123"), challenge: challenge)
        let device = try #require(connect.device)
        #expect(device.nonce == challenge.nonce)
        #expect(device.signedAt == challenge.ts)
        #expect(device.id == "56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c")
        #expect(device.publicKey == "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg")
        #expect(verify(connect).verifiedDevice?.payloadVersion == version)
    }

    /// Byte-for-byte only where signing is deterministic (OpenSSL); CryptoKit randomizes, and
    /// the test above verifies the proof on every platform.
    @Test(.enabled(if: DeviceIdentity.signaturesAreDeterministic, "CryptoKit randomizes Ed25519 signatures"))
    func theV2ProofMatchesTheProtocolVector() throws {
        var configuration = TestSupport.configuration(signatureVersion: .v2)
        configuration.persona = .iPhone
        let connect = try params(configuration, auth: ConnectAuth(token: "tok-example-123"), challenge: challenge)
        #expect(connect.device?.signature
            == "2p5pZis7YrWR3lqTHp8ibgAlxvYc8-PU1t93cYmiryLArWJ6NCiEIrI8_Q3B0xh783200pp3ovxbeQ4Gu_v7AA")
    }

    @Test func aNodeOffersProtocolsThreeToFourWithNoScopes() throws {
        let connect = try params(TestSupport.configuration(), challenge: challenge)
        #expect(connect.minProtocol == 3 && connect.maxProtocol == 4)
        #expect(connect.role == .node && connect.client.mode == .node && connect.scopes == [])
        #expect(connect.commands?.contains("camera.snap") == true)
        #expect(connect.client.id == .iOS && connect.client.platform == "iOS 18.4.0" && connect.client.deviceFamily == "iPhone")
    }

    @Test func anOperatorUsesUiModeAndItsScopes() throws {
        let scopes = ["operator.read", "operator.write"]
        let connect = try params(TestSupport.configuration(), role: .operator, scopes: scopes, challenge: challenge)
        #expect(connect.client.mode == .ui && connect.scopes == scopes && connect.commands == nil)
        #expect(verify(connect).verifiedDevice != nil)
    }

    @Test func authPrefersSharedThenBootstrapThenStoredToken() {
        let stored = StoredDeviceToken(token: "device", scopes: [])
        #expect(ConnectBuilder.auth(for: ConnectCredentials(sharedToken: "shared", storedToken: stored, bootstrapToken: "boot")).auth
            == ConnectAuth(token: "shared"))
        #expect(ConnectBuilder.auth(for: ConnectCredentials(sharedToken: nil, storedToken: stored, bootstrapToken: "boot")).auth
            == ConnectAuth(bootstrapToken: "boot"))
        #expect(ConnectBuilder.auth(for: ConnectCredentials(sharedToken: nil, storedToken: stored, bootstrapToken: nil)).auth
            == ConnectAuth(token: "device"))
        #expect(ConnectBuilder.auth(for: ConnectCredentials(sharedToken: nil, storedToken: nil, bootstrapToken: nil)).source == .none)
        let retry = ConnectCredentials(sharedToken: "shared", storedToken: stored, bootstrapToken: nil, deviceTokenRetry: true)
        #expect(ConnectBuilder.auth(for: retry).auth == ConnectAuth(token: "shared", deviceToken: "device"))
    }

    @Test func operatorScopesReuseTheStoredTokenScopesPlusAdditions() {
        let configuration = TestSupport.configuration()
        let stored = StoredDeviceToken(token: "t", scopes: ["operator.read"])
        #expect(ConnectBuilder.scopes(role: .operator, stored: stored, defaults: ["operator.admin"], added: ["operator.questions"],
                                      configuration: configuration) == ["operator.read", "operator.questions"])
        #expect(ConnectBuilder.scopes(role: .operator, stored: nil, defaults: ["operator.read"], added: [],
                                      configuration: configuration) == ["operator.read"])
        #expect(ConnectBuilder.scopes(role: .node, stored: nil, defaults: ["operator.read"], added: [],
                                      configuration: configuration) == [])
    }

    @Test func signWithoutNonceSignsV1AndOmitsTheNonce() throws {
        let connect = try params(TestSupport.configuration([.signWithoutNonce]), challenge: challenge)
        #expect(connect.device?.nonce == nil)
        #expect(verify(connect).failure == .nonceRequired)
    }

    @Test func connectBeforeChallengeHasNoNonce() throws {
        let connect = try params(TestSupport.configuration([.connectBeforeChallenge]), challenge: nil)
        #expect(connect.device?.nonce == nil)
        #expect(verify(connect).failure != nil)
    }

    @Test func staleSignedAtIsRejected() throws {
        let connect = try params(TestSupport.configuration([.staleSignedAt]), challenge: challenge)
        #expect(verify(connect).failure == .signatureExpired)
    }

    @Test func wrongDeviceIdIsRejected() throws {
        let connect = try params(TestSupport.configuration([.wrongDeviceId]), challenge: challenge)
        #expect(verify(connect).failure == .deviceIdMismatch)
    }

    @Test func wrongProtocolRangeContainsNeitherThreeNorFour() throws {
        let connect = try params(TestSupport.configuration([.wrongProtocolRange]), challenge: challenge)
        #expect(!(connect.minProtocol...connect.maxProtocol).contains(4))
        #expect(!(connect.minProtocol...connect.maxProtocol).contains(3))
    }

    @Test func nodeSendsScopesMutantAddsOperatorScopes() {
        #expect(ConnectBuilder.scopes(role: .node, stored: nil, defaults: [], added: [],
                                      configuration: TestSupport.configuration([.nodeSendsScopes])) == ["operator.read"])
    }

    @Test func helloIsReadTolerantlyAndIssuedTokensAreFiltered() throws {
        let payload: JSONValue = [
            "type": "hello-ok", "protocol": 4, "futureMember": ["x": 1],
            "features": ["methods": ["approval.get"], "events": ["tick"], "capabilities": ["new"]],
            "policy": ["tickIntervalMs": 15_000, "maxPayload": 1, "maxBufferedBytes": 1],
            "auth": ["role": "node", "scopes": [], "deviceToken": "node-token",
                     "deviceTokens": [["deviceToken": "op-token", "role": "operator",
                                       "scopes": ["operator.read", "operator.pairing", "operator.write"]]]],
        ]
        let hello = try #require(HelloSummary(payload: payload))
        #expect(hello.tickIntervalMs == 15_000 && hello.methods == ["approval.get"])
        let tokens = IssuedTokens.tokens(in: hello, role: .node, usedBootstrap: true)
        #expect(tokens.count == 2)
        #expect(tokens.first { $0.0 == .operator }?.1.scopes == ["operator.read", "operator.write"])
        #expect(IssuedTokens.tokens(in: hello, role: .node, usedBootstrap: false).count == 1)
        #expect(HelloSummary(payload: ["type": "hello"]) == nil)
    }
}
