#if !canImport(CryptoKit) && canImport(COpenSSL)
internal import COpenSSL
import Foundation

/// The Linux implementation of ``CryptoBackend``: OpenSSL 3 EVP. Every OpenSSL object is freed
/// before returning, and a failure clears the thread's OpenSSL error queue, so untrusted input
/// leaves nothing behind. Lengths are checked by ``CryptoBackend``.
enum Implementation {
    static let name = "OpenSSL"
    static let signaturesAreDeterministic = true

    static func ed25519PublicKey(seed: Data) -> Data? {
        withPrivateKey(seed) { key in
            var raw = [UInt8](repeating: 0, count: CryptoBackend.ed25519KeyLength)
            var length = raw.count
            guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == raw.count else { return failure() }
            return Data(raw)
        }
    }

    static func ed25519Sign(_ message: Data, seed: Data) -> Data? {
        withPrivateKey(seed) { key in
            guard let context = EVP_MD_CTX_new() else { return failure() }
            defer { EVP_MD_CTX_free(context) }
            // Ed25519 is a one-shot scheme: no message digest, EVP_DigestSign over the whole input.
            guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1 else { return failure() }
            var signature = [UInt8](repeating: 0, count: CryptoBackend.ed25519SignatureLength)
            var length = signature.count
            let status = withBytes(message) { bytes, count in
                EVP_DigestSign(context, &signature, &length, bytes, count)
            }
            guard status == 1, length == signature.count else { return failure() }
            return Data(signature)
        }
    }

    static func ed25519Verify(signature: Data, message: Data, publicKey: Data) -> Bool {
        let key = withBytes(publicKey) { bytes, count in
            EVP_PKEY_new_raw_public_key(openclaw_evp_pkey_ed25519(), nil, bytes, count)
        }
        guard let key else { return failure() ?? false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return failure() ?? false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return failure() ?? false }
        let status = withBytes(signature) { signatureBytes, signatureCount in
            withBytes(message) { messageBytes, messageCount in
                EVP_DigestVerify(context, signatureBytes, signatureCount, messageBytes, messageCount)
            }
        }
        if status != 1 { openclaw_openssl_clear_errors() }
        return status == 1
    }

    static func sha256(_ data: Data) -> Data { digest(data, EVP_sha256(), length: 32) }

    static func sha1(_ data: Data) -> Data { digest(data, EVP_sha1(), length: 20) }

    static func randomBytes(_ count: Int) -> [UInt8] {
        guard let length = Int32(exactly: count) else { return CryptoBackend.systemRandomBytes(count) }
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, length) }
        // RAND_bytes fails only when the system entropy source is unavailable.
        guard status == 1 else {
            openclaw_openssl_clear_errors()
            return CryptoBackend.systemRandomBytes(count)
        }
        return bytes
    }

    /// A one-shot EVP digest of in-memory bytes. It fails only when memory runs out; the
    /// result is then all zeros (never equal to a real digest a peer would compare with).
    private static func digest(_ data: Data, _ algorithm: OpaquePointer?, length: Int) -> Data {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var written: UInt32 = 0
        let status = withBytes(data) { bytes, count in
            EVP_Digest(bytes, count, &digest, &written, algorithm, nil)
        }
        guard status == 1, Int(written) == length else {
            openclaw_openssl_clear_errors()
            return Data(count: length)
        }
        return Data(digest.prefix(length))
    }

    private static func withPrivateKey<T>(_ seed: Data, _ body: (OpaquePointer) -> T?) -> T? {
        let key = withBytes(seed) { bytes, count in
            EVP_PKEY_new_raw_private_key(openclaw_evp_pkey_ed25519(), nil, bytes, count)
        }
        guard let key else { return failure() }
        defer { EVP_PKEY_free(key) }
        return body(key)
    }

    /// Clears the thread's OpenSSL error queue and reports failure.
    private static func failure<T>() -> T? {
        openclaw_openssl_clear_errors()
        return nil
    }

    /// Calls `body` with a non-NULL pointer to a copy of the bytes of `data` and their count
    /// (OpenSSL may reject a NULL pointer even with length 0, so empty input gets a placeholder).
    private static func withBytes<R>(_ data: Data, _ body: (UnsafePointer<UInt8>?, Int) -> R) -> R {
        let bytes = data.isEmpty ? [UInt8(0)] : [UInt8](data)
        return bytes.withUnsafeBufferPointer { body($0.baseAddress, data.count) }
    }
}
#endif
