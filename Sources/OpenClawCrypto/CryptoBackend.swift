import Foundation

/// The package's one crypto interface: Ed25519 from a 32-byte seed, SHA-256, SHA-1 and random
/// bytes. `GatewayProtocol` (device identity, device ids) and `WebSocketTransport` (the
/// handshake's accept key, masking keys) use nothing else.
///
/// Two implementations sit behind it, chosen at compile time:
/// - Apple platforms: CryptoKit (`CryptoKitBackend.swift`) and the system random source.
/// - Linux: OpenSSL 3 through `COpenSSL` (`OpenSSLBackend.swift`), a Linux-only dependency.
///
/// This type checks lengths, so each implementation only wraps its library.
package enum CryptoBackend {
    /// The length of an Ed25519 seed (the private key) and of a raw public key.
    package static let ed25519KeyLength = 32
    /// The length of an Ed25519 signature.
    package static let ed25519SignatureLength = 64

    /// The implementation in use: `"CryptoKit"` or `"OpenSSL"`.
    package static var name: String { Implementation.name }

    /// Whether signing the same message with the same key twice gives the same bytes.
    ///
    /// `true` for OpenSSL (RFC 8032 signing is deterministic). `false` for CryptoKit, whose
    /// Ed25519 signatures are randomized on purpose ("employs randomization to generate a
    /// different signature on every call", `Curve25519.Signing.PrivateKey.signature(for:)`).
    /// Both verify the same way; compare signatures by verifying them, not by their bytes.
    package static var signaturesAreDeterministic: Bool { Implementation.signaturesAreDeterministic }

    /// The raw 32-byte Ed25519 public key of a 32-byte seed, or `nil` for a seed of another
    /// length (or a library failure).
    package static func ed25519PublicKey(seed: Data) -> Data? {
        guard seed.count == ed25519KeyLength,
              let key = Implementation.ed25519PublicKey(seed: seed), key.count == ed25519KeyLength else { return nil }
        return key
    }

    /// The 64-byte Ed25519 signature of `message` by the key of `seed`, or `nil` for a seed of
    /// another length (or a library failure).
    package static func ed25519Sign(_ message: Data, seed: Data) -> Data? {
        guard seed.count == ed25519KeyLength,
              let signature = Implementation.ed25519Sign(message, seed: seed),
              signature.count == ed25519SignatureLength else { return nil }
        return signature
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by the raw 32-byte
    /// `publicKey`. `false` for input of the wrong length; never traps.
    package static func ed25519Verify(signature: Data, message: Data, publicKey: Data) -> Bool {
        guard signature.count == ed25519SignatureLength, publicKey.count == ed25519KeyLength else { return false }
        return Implementation.ed25519Verify(signature: signature, message: message, publicKey: publicKey)
    }

    /// The 32-byte SHA-256 digest of `data`.
    package static func sha256(_ data: Data) -> Data { Implementation.sha256(data) }

    /// The 20-byte SHA-1 digest of `data` (only for RFC 6455's `Sec-WebSocket-Accept`).
    package static func sha1(_ data: Data) -> Data { Implementation.sha1(data) }

    /// `count` bytes from a cryptographically secure random source (0 or less gives none).
    package static func randomBytes(_ count: Int) -> [UInt8] { Implementation.randomBytes(max(0, count)) }

    /// `count` bytes from `SystemRandomNumberGenerator`, which reads the operating system's
    /// secure source (`arc4random_buf` on Apple platforms, `getrandom` on Linux). The random
    /// source on Apple platforms, and the fallback if OpenSSL's generator fails.
    static func systemRandomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<max(0, count)).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

#if !canImport(CryptoKit) && !canImport(COpenSSL)
#error("OpenClawCrypto needs CryptoKit (Apple platforms) or COpenSSL (Linux, libssl-dev)")
#endif
