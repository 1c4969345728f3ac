#if !canImport(CryptoKit) && canImport(COpenSSL)
internal import COpenSSL
import Foundation
import Locking

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
        if let cached = PrivateKeyCache.shared.key(for: seed) {
            defer { EVP_PKEY_free(cached) }
            return body(cached)
        }
        let key = withBytes(seed) { bytes, count in
            EVP_PKEY_new_raw_private_key(openclaw_evp_pkey_ed25519(), nil, bytes, count)
        }
        guard let key else { return failure() }
        defer { EVP_PKEY_free(key) }
        PrivateKeyCache.shared.insert(key, for: seed)
        return body(key)
    }

    /// The OpenSSL keys of the most recently used seeds. Making the key object from a seed
    /// derives the public key (a scalar multiplication) and goes through OpenSSL's provider
    /// lookups, about as costly as the signature itself; a device signs every connect with the
    /// same seed. A key object is immutable once made, and OpenSSL 3 allows one to be used by
    /// several threads at once for signing; it holds nothing the seed (which the caller keeps
    /// in memory anyway) does not.
    private final class PrivateKeyCache: Sendable {
        static let shared = PrivateKeyCache()
        private static let capacity = 32

        /// A reference the cache holds on an `EVP_PKEY`.
        ///
        /// `@unchecked Sendable`: the pointer is only stored, handed out and freed under the
        /// cache's lock, each user gets its own reference (`EVP_PKEY_up_ref`) and frees it, and
        /// the key itself is never modified after it was made (see above).
        private struct Entry: @unchecked Sendable {
            let seed: Data
            let key: OpaquePointer
        }

        // Most recently used last; at most `capacity` entries, each holding one reference.
        private let entries = Locked<[Entry]>([])

        /// A new reference to the key of `seed` (the caller frees it), if it is cached and the
        /// cache is free at once.
        ///
        /// Nobody waits for the cache: the threads of simulated runs run at a lower priority
        /// (`nice` 10), and one that the scheduler kept off the CPU while it held the lock held up
        /// every other signer behind it, the threads of Swift's cooperative pool included (seen as
        /// a whole test process stalled for seconds). A contended lookup makes the key instead.
        func key(for seed: Data) -> OpaquePointer? {
            entries.withLockIfAvailable { entries -> OpaquePointer? in
                guard let index = entries.lastIndex(where: { $0.seed == seed }) else { return nil }
                let entry = entries.remove(at: index)
                entries.append(entry)
                guard EVP_PKEY_up_ref(entry.key) == 1 else { return nil }
                return entry.key
            } ?? nil
        }

        /// Keeps a reference to `key`, the key of `seed`, evicting the least recently used; does
        /// nothing when the cache is busy (see ``key(for:)``).
        func insert(_ key: OpaquePointer, for seed: Data) {
            guard EVP_PKEY_up_ref(key) == 1 else { return }
            let evicted: [Entry]? = entries.withLockIfAvailable { entries in
                // Another thread may have made and cached a key for the same seed meanwhile.
                var evicted = entries.filter { $0.seed == seed }
                entries.removeAll { $0.seed == seed }
                entries.append(Entry(seed: Data(seed), key: key))
                let excess = max(0, entries.count - Self.capacity)
                evicted += entries.prefix(excess)
                entries.removeFirst(excess)
                return evicted
            }
            guard let evicted else {
                EVP_PKEY_free(key)  // not kept: give back the reference taken for the cache
                return
            }
            for entry in evicted { EVP_PKEY_free(entry.key) }
        }
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
