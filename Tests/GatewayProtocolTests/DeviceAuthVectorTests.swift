import Foundation
import TestSupport
import Testing

@testable import GatewayProtocol

extension DeviceAuthVector {
    /// The params as the proof verifier sees them: read with the legacy rules, which let a
    /// missing nonce through to the proof check.
    func params() throws -> ConnectParams {
        try ConnectParams.validate(connectParams, rules: .legacy).get()
    }

    /// The params and what the proof verifier decides on them at the challenge's time.
    func verified() throws -> (params: ConnectParams, outcome: DeviceProofOutcome) {
        let params = try params()
        return (params, DeviceProofVerifier().verify(params, expectedNonce: challengeNonce, nowMs: challengeTs))
    }
}

@Suite("Shared device-auth vectors")
struct DeviceAuthVectorTests {
    @Test func vectorFileLoadsWithValidAndInvalidCases() throws {
        let vectors = try DeviceAuthVector.loadAll()
        #expect(vectors.count >= 17)
        #expect(vectors.contains { $0.valid })
        #expect(vectors.contains { !$0.valid })
        #expect(vectors.allSatisfy { $0.valid || $0.expectDetailsCode != nil })
    }

    @Test(arguments: DeviceAuthVector.validCases)
    func validVectorVerifiesWithItsPayloadVersion(_ vector: DeviceAuthVector) throws {
        let (params, outcome) = try vector.verified()
        let verified = try #require(outcome.verifiedDevice, "\(vector.name): \(String(describing: outcome.failure))")
        #expect(verified.payloadVersion.rawValue == vector.payloadVersion)
        #expect(verified.deviceId == params.device?.id)
    }

    @Test(arguments: DeviceAuthVector.validCases)
    func validVectorPayloadIsRebuiltFromTheParams(_ vector: DeviceAuthVector) throws {
        let params = try vector.params()
        let version = try #require(DeviceAuthPayload.Version(rawValue: vector.payloadVersion))
        #expect(DeviceAuthPayload.build(version, for: params) == vector.payload)
    }

    @Test(arguments: DeviceAuthVector.all)
    func seedReproducesPublicKeyAndDeviceIdAndItsSignaturesVerify(_ vector: DeviceAuthVector) throws {
        let seed = try #require(Hex.decode(vector.seedHex))
        let identity = try DeviceIdentity(seed: seed)
        #expect(Hex.encode(identity.publicKey) == vector.publicKeyHex)
        let params = try vector.params()
        let device = try #require(params.device)
        if vector.valid {
            #expect(identity.publicKeyBase64URL == device.publicKey)
            #expect(identity.deviceId == device.id)
            // The vector's signature is one of this seed's signatures over the payload.
            #expect(DeviceIdentity.verify(signature: device.signature, payload: vector.payload, publicKey: identity.publicKeyBase64URL))
        }
        // Every vector's payload is signed by its seed, even where the params were then tampered with.
        #expect(DeviceIdentity.verify(signature: identity.sign(vector.payload), payload: vector.payload, publicKey: identity.publicKeyBase64URL))
    }

    /// Byte-for-byte only where signing is deterministic (OpenSSL); CryptoKit randomizes.
    @Test(.enabled(if: DeviceIdentity.signaturesAreDeterministic, "CryptoKit randomizes Ed25519 signatures"),
          arguments: DeviceAuthVector.validCases)
    func seedReproducesTheVectorSignatureByteForByte(_ vector: DeviceAuthVector) throws {
        let identity = try DeviceIdentity(seed: #require(Hex.decode(vector.seedHex)))
        let params = try vector.params()
        #expect(identity.sign(vector.payload) == params.device?.signature)
    }

    @Test(arguments: DeviceAuthVector.all)
    func theCurrentSchemaAcceptsEveryVectorButThoseItNames(_ vector: DeviceAuthVector) {
        switch ConnectParams.validate(vector.connectParams) {
        case .success: #expect(vector.currentSchemaError == nil, "\(vector.name) should fail the current schema")
        case .failure(let error): #expect(error.message == vector.currentSchemaError, "\(vector.name)")
        }
    }

    @Test func theSignatureTokenIsTheFirstPresentTokenUntrimmed() {
        #expect(DeviceAuthPayload.signatureToken(token: "", deviceToken: "d", bootstrapToken: "b") == "")
        #expect(DeviceAuthPayload.signatureToken(token: " t ", deviceToken: "d", bootstrapToken: "b") == " t ")
        #expect(DeviceAuthPayload.signatureToken(token: nil, deviceToken: "d", bootstrapToken: "b") == "d")
        #expect(DeviceAuthPayload.signatureToken(token: nil, deviceToken: "", bootstrapToken: "b") == "")
        #expect(DeviceAuthPayload.signatureToken(token: nil, deviceToken: nil, bootstrapToken: "b") == "b")
        #expect(DeviceAuthPayload.signatureToken(token: nil, deviceToken: nil, bootstrapToken: nil) == "")
    }

    @Test(arguments: DeviceAuthVector.invalidCases)
    func invalidVectorFailsWithTheExpectedDetailCode(_ vector: DeviceAuthVector) throws {
        let outcome = try vector.verified().outcome
        let failure = try #require(outcome.failure, "\(vector.name) unexpectedly verified")
        #expect(failure.detailCode.rawValue == vector.expectDetailsCode)
        #expect(failure.errorShape.detailCode == vector.expectDetailsCode)
        #expect(failure.errorShape.code == "INVALID_REQUEST")
    }
}
