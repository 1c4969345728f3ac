import Foundation
import Simulation
import Testing

@testable import GatewayProtocol

@Suite("Device identity")
struct DeviceIdentityTests {
    static let specSeed = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

    func specIdentity() throws -> DeviceIdentity {
        try DeviceIdentity(seed: #require(Hex.decode(Self.specSeed)), createdAtMs: 1_767_225_600_000)
    }

    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("gp-identity-\(UUID().uuidString)")
    }

    @Test func seedGivesTheDocumentedKeyAndDeviceId() throws {
        let identity = try specIdentity()
        #expect(Hex.encode(identity.publicKey) == "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
        #expect(identity.publicKeyBase64URL == "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg")
        #expect(identity.deviceId == "56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c")
    }

    static let documentedV3Payload = "v3|56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c|openclaw-ios|ui|operator|operator.read,operator.write|1767225600000||3f0c6c1e-8f0e-4a8b-9d57-1c2b7e9a4d11|ios 18.4.0|iphone"
    static let documentedV3Signature = "Wz0KawCSMIMX6H5AumTurev83d7tu5TPs88EhZF4xP7cfZ7mBO2_LHY-7Klo6TEtQjFidxZTNH3d_x_dmRYMBw"

    @Test func theDocumentedV3OperatorSignatureVerifiesAndOursDoesToo() throws {
        let identity = try specIdentity()
        #expect(DeviceIdentity.verify(signature: Self.documentedV3Signature, payload: Self.documentedV3Payload, publicKey: identity.publicKeyBase64URL))
        let signature = identity.sign(Self.documentedV3Payload)
        #expect(signature.count == 86)
        #expect(DeviceIdentity.verify(signature: signature, payload: Self.documentedV3Payload, publicKey: identity.publicKeyBase64URL))
    }

    /// Byte-for-byte only where signing is deterministic (OpenSSL); CryptoKit randomizes.
    @Test(.enabled(if: DeviceIdentity.signaturesAreDeterministic, "CryptoKit randomizes Ed25519 signatures"))
    func signingTheDocumentedV3OperatorPayloadGivesTheDocumentedSignature() throws {
        #expect(try specIdentity().sign(Self.documentedV3Payload) == Self.documentedV3Signature)
    }

    @Test func generatedIdentitiesAreDistinctAndSignVerifiably() throws {
        let first = try DeviceIdentity.generate(createdAtMs: 1)
        let second = try DeviceIdentity.generate(createdAtMs: 1)
        #expect(first.deviceId != second.deviceId)
        #expect(first.privateKeySeed.count == 32)
        #expect(first.deviceId.count == 64)
        let signature = first.sign("hello")
        #expect(DeviceIdentity.verify(signature: signature, payload: "hello", publicKey: first.publicKeyBase64URL))
        #expect(!DeviceIdentity.verify(signature: signature, payload: "hello!", publicKey: first.publicKeyBase64URL))
        #expect(!DeviceIdentity.verify(signature: signature, payload: "hello", publicKey: second.publicKeyBase64URL))
    }

    @Test func emptyPayloadSignsAndVerifies() throws {
        let identity = try specIdentity()
        let signature = identity.sign("")
        #expect(DeviceIdentity.verify(signature: signature, payload: "", publicKey: identity.publicKeyBase64URL))
    }

    @Test func verificationAcceptsStandardBase64AndPaddedSignatures() throws {
        let identity = try specIdentity()
        let raw = try #require(identity.signature(for: Data("payload".utf8)))
        let standard = raw.base64EncodedString()
        #expect(standard.hasSuffix("=="))
        #expect(DeviceIdentity.verify(signature: standard, payload: "payload", publicKey: identity.publicKey.base64EncodedString()))
    }

    @Test(arguments: ["", "not base64!", "AAAA", String(repeating: "A", count: 86), "💥💥", "====", "A"])
    func garbageSignaturesNeverVerifyAndNeverCrash(_ signature: String) throws {
        let identity = try specIdentity()
        #expect(!DeviceIdentity.verify(signature: signature, payload: "x", publicKey: identity.publicKeyBase64URL))
    }

    @Test(arguments: ["", "not-a-key", "AAAA", String(repeating: "A", count: 44), "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"])
    func garbagePublicKeysNeverVerifyAndNeverCrash(_ key: String) throws {
        let identity = try specIdentity()
        #expect(!DeviceIdentity.verify(signature: identity.sign("x"), payload: "x", publicKey: key))
    }

    @Test func publicKeyNormalisationAcceptsRawBase64URLStandardBase64AndPEM() throws {
        let identity = try specIdentity()
        let canonical = identity.publicKeyBase64URL
        #expect(DevicePublicKey.normalizedBase64URL(canonical) == canonical)
        #expect(DevicePublicKey.normalizedBase64URL(identity.publicKey.base64EncodedString()) == canonical)
        let pem = DevicePublicKey.pem(forRawKey: identity.publicKey)
        #expect(pem.hasPrefix("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA"))
        #expect(DevicePublicKey.normalizedBase64URL(pem) == canonical)
        #expect(DevicePublicKey.normalizedBase64URL((DevicePublicKey.spkiPrefix + identity.publicKey).base64EncodedString()) == canonical)
        #expect(DevicePublicKey.normalizedBase64URL("not-a-key") == nil)
        #expect(DevicePublicKey.normalizedBase64URL(Base64URL.encode(Data(count: 31))) == nil)
        // A PEM key verifies signatures like the raw key.
        #expect(DeviceIdentity.verify(signature: identity.sign("p"), payload: "p", publicKey: pem))
    }

    @Test func seedsOfTheWrongLengthAreRejected() {
        #expect(throws: DeviceIdentityError.self) { try DeviceIdentity(seed: Data(count: 31)) }
        #expect(throws: DeviceIdentityError.self) { try DeviceIdentity(seed: Data(count: 64)) }
    }

    @Test func saveAndLoadRoundTripWithOwnerOnlyPermissions() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("identity/device.json")
        let identity = try DeviceIdentity.generate(createdAtMs: 1_767_225_600_000)
        try identity.save(to: url)
        let loaded = try DeviceIdentity.load(from: url)
        #expect(loaded == identity)
        #expect(loaded.createdAtMs == 1_767_225_600_000)
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let json = try JSONValue(parsing: Data(contentsOf: url))
        #expect(json["version"] == 1)
        #expect(json["deviceId"]?.stringValue == identity.deviceId)
        #expect(json["publicKey"]?.stringValue == identity.publicKeyBase64URL)
        #expect(json["privateKeySeed"]?.stringValue == Base64URL.encode(identity.privateKeySeed))
        // Saving again replaces the file and leaves no temporary files behind.
        try identity.save(to: url)
        let entries = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
        #expect(entries == ["device.json"])
    }

    @Test func loadingRejectsMissingCorruptAndInconsistentFiles() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(throws: DeviceIdentityError.self) { try DeviceIdentity.load(from: directory.appendingPathComponent("missing.json")) }

        let corrupt = directory.appendingPathComponent("corrupt.json")
        try Data("{not json".utf8).write(to: corrupt)
        #expect(throws: DeviceIdentityError.self) { try DeviceIdentity.load(from: corrupt) }

        let identity = try specIdentity()
        let other = try DeviceIdentity.generate()
        let inconsistent = directory.appendingPathComponent("inconsistent.json")
        let body: JSONValue = [
            "version": 1, "deviceId": .string(identity.deviceId), "publicKey": .string(other.publicKeyBase64URL),
            "privateKeySeed": .string(Base64URL.encode(identity.privateKeySeed)), "createdAtMs": 0,
        ]
        try body.encoded().write(to: inconsistent)
        #expect(throws: DeviceIdentityError.self) { try DeviceIdentity.load(from: inconsistent) }

        let wrongVersion = directory.appendingPathComponent("version.json")
        let versioned: JSONValue = [
            "version": 2, "deviceId": .string(identity.deviceId), "publicKey": .string(identity.publicKeyBase64URL),
            "privateKeySeed": .string(Base64URL.encode(identity.privateKeySeed)), "createdAtMs": 0,
        ]
        try versioned.encoded().write(to: wrongVersion)
        #expect(throws: DeviceIdentityError.self) { try DeviceIdentity.load(from: wrongVersion) }
    }

    @Test func descriptionDoesNotRevealTheSeed() throws {
        let identity = try specIdentity()
        #expect(!identity.description.contains(Base64URL.encode(identity.privateKeySeed)))
        #expect(!identity.description.contains(Self.specSeed))
        #expect(identity.description.contains(identity.deviceId))
    }
}

@Suite("Base64url and hex")
struct EncodingTests {
    @Test func base64URLEncodingIsUnpaddedAndURLSafe() {
        #expect(Base64URL.encode([UInt8]()) == "")
        #expect(Base64URL.encode([0xFB]) == "-w")
        #expect(Base64URL.encode([0xFF, 0xFF]) == "__8")
        #expect(Base64URL.encode([0x00, 0x01, 0x02]) == "AAEC")
    }

    @Test func decodingAcceptsURLSafeStandardPaddedAndUnpadded() {
        #expect(Base64URL.decode("-w") == Data([0xFB]))
        #expect(Base64URL.decode("+w") == Data([0xFB]))
        #expect(Base64URL.decode("+w==") == Data([0xFB]))
        #expect(Base64URL.decode("__8") == Data([0xFF, 0xFF]))
        #expect(Base64URL.decode("//8=") == Data([0xFF, 0xFF]))
        #expect(Base64URL.decode("") == Data())
        #expect(Base64URL.decode("AAEC") == Data([0, 1, 2]))
    }

    @Test(arguments: ["A", "AAAAA", "a b", "ab!c", "+w=", "+w===", "=", "AA=A", "é"])
    func decodingRejectsMalformedInput(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test func roundTripsEveryLengthUpTo70() {
        for length in 0...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(Base64URL.decode(encoded) == Data(bytes))
        }
    }

    @Test func encodingAgreesWithFoundationsBase64() {
        // Foundation's standard base64 with the URL-safe substitutions and no padding is the
        // independent reference for the hand-written encoder.
        var random = SeededRandom(seed: 3)
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let reference = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference, "length \(length)")
        }
    }

    @Test func rawKeysAreReadWithAndWithoutPaddingOrPEM() throws {
        let identity = try DeviceIdentity(seed: Data(repeating: 7, count: 32))
        let raw = try #require(DevicePublicKey.rawKey(from: identity.publicKeyBase64URL))
        #expect(DevicePublicKey.rawKey(from: "  \(identity.publicKeyBase64URL)\n") == raw)
        let der = DevicePublicKey.spkiPrefix + raw
        let pem = "-----BEGIN PUBLIC KEY-----\n\(der.base64EncodedString())\n-----END PUBLIC KEY-----\n"
        #expect(DevicePublicKey.rawKey(from: pem) == raw)
        #expect(DevicePublicKey.rawKey(from: "\n" + pem) == raw)
    }

    @Test func hexIsLowerCaseAndDecodesBothCases() {
        #expect(Hex.encode([0x00, 0xAB, 0xFF]) == "00abff")
        #expect(Hex.decode("00ABff") == Data([0x00, 0xAB, 0xFF]))
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("") == Data())
    }

    @Test func sha256MatchesKnownDigests() {
        #expect(SHA256Digest.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
