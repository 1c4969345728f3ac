#if canImport(CryptoKit)
internal import CryptoKit
import Foundation

/// The Apple-platform implementation of ``CryptoBackend``: CryptoKit, and the system random
/// source. Lengths are checked by ``CryptoBackend``. Only Apple platforms compile this file.
enum Implementation {
    static let name = "CryptoKit"
    static let signaturesAreDeterministic = false

    static func ed25519PublicKey(seed: Data) -> Data? {
        try? Curve25519.Signing.PrivateKey(rawRepresentation: seed).publicKey.rawRepresentation
    }

    static func ed25519Sign(_ message: Data, seed: Data) -> Data? {
        try? Curve25519.Signing.PrivateKey(rawRepresentation: seed).signature(for: message)
    }

    static func ed25519Verify(signature: Data, message: Data, publicKey: Data) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    static func sha256(_ data: Data) -> Data { Data(SHA256.hash(data: data)) }

    static func sha1(_ data: Data) -> Data { Data(Insecure.SHA1.hash(data: data)) }

    static func randomBytes(_ count: Int) -> [UInt8] { CryptoBackend.systemRandomBytes(count) }
}
#endif
