import Foundation
import Testing

@testable import OpenClawCrypto

/// Bytes from lower-case or upper-case hex (test literals only).
private func bytes(_ hex: String) -> Data {
    var data = Data()
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        data.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return data
}

private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

/// An Ed25519 test vector of RFC 8032 section 7.1.
struct RFC8032Vector: Sendable, CustomTestStringConvertible {
    var name: String
    var seed: String
    var publicKey: String
    var message: String
    var signature: String

    var testDescription: String { name }

    static let all = [
        RFC8032Vector(
            name: "TEST 1 (empty message)",
            seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            message: "",
            signature: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        RFC8032Vector(
            name: "TEST 2 (one byte)",
            seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            message: "72",
            signature: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ]
}

@Suite("Crypto backend")
struct CryptoBackendTests {
    @Test func theBackendIsOpenSSLOnLinuxAndCryptoKitOnApplePlatforms() {
        #if canImport(Glibc)
        #expect(CryptoBackend.name == "OpenSSL")
        #expect(CryptoBackend.signaturesAreDeterministic)
        #else
        #expect(CryptoBackend.name == "CryptoKit")
        #expect(!CryptoBackend.signaturesAreDeterministic)
        #endif
    }

    // MARK: Ed25519

    @Test(arguments: RFC8032Vector.all)
    func theSeedGivesTheRFCPublicKeyAndTheRFCSignatureVerifies(_ vector: RFC8032Vector) throws {
        let publicKey = try #require(CryptoBackend.ed25519PublicKey(seed: bytes(vector.seed)))
        #expect(hex(publicKey) == vector.publicKey)
        #expect(CryptoBackend.ed25519Verify(
            signature: bytes(vector.signature), message: bytes(vector.message), publicKey: publicKey))
        // Our own signature verifies too, whether or not it equals the RFC's bytes.
        let signature = try #require(CryptoBackend.ed25519Sign(bytes(vector.message), seed: bytes(vector.seed)))
        #expect(signature.count == 64)
        #expect(CryptoBackend.ed25519Verify(signature: signature, message: bytes(vector.message), publicKey: publicKey))
    }

    /// RFC 8032 signing is deterministic, and OpenSSL follows it; CryptoKit randomizes.
    @Test(.enabled(if: CryptoBackend.signaturesAreDeterministic, "CryptoKit randomizes Ed25519 signatures"),
          arguments: RFC8032Vector.all)
    func aDeterministicBackendSignsTheRFCSignatureByteForByte(_ vector: RFC8032Vector) throws {
        let signature = try #require(CryptoBackend.ed25519Sign(bytes(vector.message), seed: bytes(vector.seed)))
        #expect(hex(signature) == vector.signature)
    }

    @Test func signingTwiceIsDeterministicExactlyWhenTheBackendSaysSo() throws {
        let seed = Data(CryptoBackend.randomBytes(32))
        let message = Data("the same message".utf8)
        let first = try #require(CryptoBackend.ed25519Sign(message, seed: seed))
        let second = try #require(CryptoBackend.ed25519Sign(message, seed: seed))
        #expect((first == second) == CryptoBackend.signaturesAreDeterministic)
    }

    @Test func signAndVerifyRoundTripAndRejectEveryAlteration() throws {
        let seed = Data(CryptoBackend.randomBytes(32))
        let otherSeed = Data(CryptoBackend.randomBytes(32))
        let publicKey = try #require(CryptoBackend.ed25519PublicKey(seed: seed))
        let otherKey = try #require(CryptoBackend.ed25519PublicKey(seed: otherSeed))
        #expect(publicKey != otherKey)
        let message = Data("v3|device|client|node|node||1767225600000|token|nonce|ios|iphone".utf8)
        let signature = try #require(CryptoBackend.ed25519Sign(message, seed: seed))
        #expect(CryptoBackend.ed25519Verify(signature: signature, message: message, publicKey: publicKey))

        #expect(!CryptoBackend.ed25519Verify(signature: signature, message: message + [0], publicKey: publicKey))
        #expect(!CryptoBackend.ed25519Verify(signature: signature, message: Data(), publicKey: publicKey))
        #expect(!CryptoBackend.ed25519Verify(signature: signature, message: message, publicKey: otherKey))
        for index in [0, 31, 32, 63] {
            var tampered = signature
            tampered[tampered.startIndex + index] ^= 0x01
            #expect(!CryptoBackend.ed25519Verify(signature: tampered, message: message, publicKey: publicKey), "byte \(index)")
        }
    }

    @Test func wrongLengthsAreRejectedWithoutTrapping() throws {
        let seed = Data(repeating: 7, count: 32)
        let publicKey = try #require(CryptoBackend.ed25519PublicKey(seed: seed))
        let signature = try #require(CryptoBackend.ed25519Sign(Data("m".utf8), seed: seed))
        for length in [0, 31, 33, 64] {
            #expect(CryptoBackend.ed25519PublicKey(seed: Data(repeating: 7, count: length)) == nil, "seed of \(length)")
            #expect(CryptoBackend.ed25519Sign(Data("m".utf8), seed: Data(repeating: 7, count: length)) == nil, "seed of \(length)")
        }
        #expect(!CryptoBackend.ed25519Verify(signature: signature.prefix(63), message: Data("m".utf8), publicKey: publicKey))
        #expect(!CryptoBackend.ed25519Verify(signature: signature + [0], message: Data("m".utf8), publicKey: publicKey))
        #expect(!CryptoBackend.ed25519Verify(signature: Data(), message: Data("m".utf8), publicKey: publicKey))
        #expect(!CryptoBackend.ed25519Verify(signature: signature, message: Data("m".utf8), publicKey: publicKey.prefix(31)))
        #expect(!CryptoBackend.ed25519Verify(signature: signature, message: Data("m".utf8), publicKey: Data()))
        // 64 zero bytes and a zero key are well-formed lengths but never a valid signature.
        #expect(!CryptoBackend.ed25519Verify(signature: Data(count: 64), message: Data("m".utf8), publicKey: publicKey))
        #expect(!CryptoBackend.ed25519Verify(signature: signature, message: Data("m".utf8), publicKey: Data(count: 32)))
    }

    // MARK: Digests

    static let digestVectors: [(input: Data, sha1: String, sha256: String)] = [
        (Data(), "da39a3ee5e6b4b0d3255bfef95601890afd80709",
         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (Data("abc".utf8), "a9993e364706816aba3e25717850c26c9cd0d89d",
         "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8), "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (Data(repeating: UInt8(ascii: "a"), count: 1_000_000), "34aa973cd4c4daa4f61eeb2bdbad27316534016f",
         "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
    ]

    @Test func digestsMatchTheFIPS180Vectors() {
        for (input, sha1, sha256) in Self.digestVectors {
            #expect(hex(CryptoBackend.sha1(input)) == sha1, "SHA-1 of \(input.count) bytes")
            #expect(hex(CryptoBackend.sha256(input)) == sha256, "SHA-256 of \(input.count) bytes")
        }
    }

    @Test func digestsOfASliceHashOnlyItsBytes() {
        // A Data slice has a non-zero start index; only its own bytes are hashed.
        let whole = Data("xxabcxx".utf8)
        let slice = whole[whole.startIndex + 2 ..< whole.startIndex + 5]
        #expect(hex(CryptoBackend.sha1(slice)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(CryptoBackend.sha256(slice)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    // MARK: Random bytes

    @Test func randomBytesHaveTheRequestedLength() {
        for count in [0, 1, 4, 16, 32, 1000] {
            #expect(CryptoBackend.randomBytes(count).count == count)
            #expect(CryptoBackend.systemRandomBytes(count).count == count)
        }
        #expect(CryptoBackend.randomBytes(-1).isEmpty)
        #expect(CryptoBackend.systemRandomBytes(-1).isEmpty)
    }

    /// Both sources: the backend's, and the system source (the Apple platforms' source, and
    /// OpenSSL's fallback), which therefore runs on Linux too.
    @Test(arguments: ["backend", "system"])
    func randomBytesVary(_ source: String) {
        let draw = source == "backend" ? CryptoBackend.randomBytes : CryptoBackend.systemRandomBytes
        let draws = (0..<8).map { _ in draw(32) }
        // Two equal 32-byte draws from a secure source would be a 2^-256 event.
        #expect(Set(draws).count == draws.count)
        // 4,096 bytes from a uniform source cover (nearly) every byte value.
        let many = draw(4096)
        #expect(Set(many).count > 200)
        #expect(many.contains { $0 != many[0] })
    }
}

/// The backend keeps the key objects of recently used seeds: signing again with a seed, after
/// others pushed it out of the cache, and from several threads at once gives the same
/// (deterministic, on OpenSSL) signatures and public keys as the first time.
struct CachedSigningKeyTests {
    @Test func signaturesAreTheSameFromTheCacheAfterEvictionAndAcrossThreads() async throws {
        // More seeds than the cache holds, so later rounds both hit and miss.
        let seeds = (0..<40).map { index in Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }) }
        let message = Data("cached key".utf8)
        let first = seeds.map { (CryptoBackend.ed25519PublicKey(seed: $0), CryptoBackend.ed25519Sign(message, seed: $0)) }
        #expect(first.allSatisfy { $0.0 != nil && $0.1 != nil })
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for round in 0..<4 {
                group.addTask {
                    var wrong = 0
                    for (index, seed) in (round % 2 == 0 ? Array(seeds.enumerated()) : seeds.enumerated().reversed()) {
                        let publicKey = CryptoBackend.ed25519PublicKey(seed: seed)
                        let signature = CryptoBackend.ed25519Sign(message, seed: seed)
                        if publicKey != first[index].0 { wrong += 1 }
                        if CryptoBackend.signaturesAreDeterministic, signature != first[index].1 { wrong += 1 }
                        if let signature, let publicKey,
                           !CryptoBackend.ed25519Verify(signature: signature, message: message, publicKey: publicKey) { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
