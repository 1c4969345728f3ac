import Foundation
import OpenClawCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a device identity could not be created, loaded or saved.
public struct DeviceIdentityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// An Ed25519 device identity (docs/protocol.md §3.8): the key pair behind `device.id`,
/// `device.publicKey` and `device.signature`.
///
/// The value holds the 32-byte private seed; key objects of the crypto library (CryptoKit on
/// Apple platforms, OpenSSL on Linux) are created per operation, so the value is plain data
/// (`Sendable`, comparable).
public struct DeviceIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte Ed25519 private key seed. Secret.
    public let privateKeySeed: Data
    /// The raw 32-byte Ed25519 public key.
    public let publicKey: Data
    /// Creation time in milliseconds.
    public let createdAtMs: Int

    /// Derives the identity from a 32-byte private key seed.
    /// - Throws: `DeviceIdentityError` when the seed is not 32 bytes or the crypto library
    ///   rejects it.
    public init(seed: Data, createdAtMs: Int = 0) throws {
        guard seed.count == Ed25519.keyLength else {
            throw DeviceIdentityError("an Ed25519 seed has 32 bytes, got \(seed.count)")
        }
        guard let publicKey = Ed25519.publicKey(fromSeed: seed) else {
            throw DeviceIdentityError("the \(CryptoBackend.name) Ed25519 implementation rejected the seed")
        }
        self.privateKeySeed = Data(seed)
        self.publicKey = publicKey
        self.createdAtMs = createdAtMs
        self.deviceId = Self.deviceId(forRawPublicKey: publicKey)
        self.publicKeyBase64URL = Base64URL.encode(publicKey)
    }

    /// Generates a fresh key pair from 32 bytes of the system's secure random source.
    /// - Throws: `DeviceIdentityError` when the crypto library fails.
    public static func generate(createdAtMs: Int = 0) throws -> DeviceIdentity {
        try DeviceIdentity(seed: Ed25519.generateSeed(), createdAtMs: createdAtMs)
    }

    /// `device.id`: lower-case hex SHA-256 of the raw public key (derived once, at creation:
    /// every connect and token lookup reads it).
    public let deviceId: String

    /// `device.publicKey`: unpadded base64url of the raw public key (43 characters).
    public let publicKeyBase64URL: String

    /// The identity without its secret, for logs.
    public var description: String { "DeviceIdentity(deviceId: \(deviceId))" }

    /// Signs the UTF-8 bytes of `payload`.
    ///
    /// On Linux (OpenSSL) the signature is deterministic (RFC 8032): the same seed and payload
    /// always give the same bytes. On Apple platforms CryptoKit randomizes Ed25519 signatures,
    /// so each call gives different bytes; every one of them verifies. Compare signatures with
    /// ``verify(signature:payload:publicKey:)``, never by their bytes.
    /// - Returns: the unpadded base64url of the 64-byte signature. Ed25519 signing with a valid
    ///   seed fails only if the crypto library cannot allocate; the result is then the empty
    ///   string, which never verifies.
    public func sign(_ payload: String) -> String {
        guard let signature = Ed25519.sign(Data(payload.utf8), seed: privateKeySeed) else { return "" }
        return Base64URL.encode(signature)
    }

    /// Whether ``sign(_:)`` gives the same bytes every time for the same seed and payload:
    /// `true` on Linux (OpenSSL, RFC 8032), `false` on Apple platforms (CryptoKit randomizes).
    public static var signaturesAreDeterministic: Bool { CryptoBackend.signaturesAreDeterministic }

    /// The raw 64-byte signature over `message` (randomized on Apple platforms, see
    /// ``sign(_:)``), or `nil` if the crypto library fails.
    public func signature(for message: Data) -> Data? {
        Ed25519.sign(message, seed: privateKeySeed)
    }

    /// Builds a complete `device` block for a connect: signs `payload` and echoes `nonce`.
    public func proof(payload: String, signedAtMs: Int, nonce: String?) -> DeviceProof {
        DeviceProof(id: deviceId, publicKey: publicKeyBase64URL, signature: sign(payload), signedAt: signedAtMs, nonce: nonce)
    }

    /// Verifies a device signature; never traps on garbage.
    /// - Parameters:
    ///   - signature: base64url or base64 (padded or not) of 64 bytes.
    ///   - payload: the signed string; its UTF-8 bytes are verified.
    ///   - publicKey: raw base64url/base64, or PEM/SPKI (see `DevicePublicKey.rawKey(from:)`).
    /// - Returns: `true` only for a valid Ed25519 signature.
    public static func verify(signature: String, payload: String, publicKey: String) -> Bool {
        guard let key = DevicePublicKey.rawKey(from: publicKey), let signatureBytes = Base64URL.decode(signature) else {
            return false
        }
        return Ed25519.verify(signature: signatureBytes, message: Data(payload.utf8), publicKey: key)
    }

    /// The device id for a raw public key.
    public static func deviceId(forRawPublicKey key: Data) -> String { SHA256Digest.hex(key) }
}

// MARK: - Persistence

extension DeviceIdentity {
    /// The on-disk format version written by `save(to:)`.
    public static let fileFormatVersion = 1

    private struct StoredIdentity: Codable {
        var version: Int
        var deviceId: String
        var publicKey: String
        var privateKeySeed: String
        var createdAtMs: Int
    }

    /// Loads an identity written by `save(to:)`.
    ///
    /// The file is `{"version":1,"deviceId","publicKey","privateKeySeed","createdAtMs"}` with
    /// base64url keys. The stored public key and device id must match the seed.
    /// - Throws: `DeviceIdentityError` for a missing, unreadable or inconsistent file.
    public static func load(from url: URL) throws -> DeviceIdentity {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw DeviceIdentityError("cannot read \(url.path): \(error.localizedDescription)")
        }
        return try decode(fileContents: data, named: url.path)
    }

    /// Decodes the contents of an identity file (see ``load(from:)``); `name` names the file in
    /// error messages.
    /// - Throws: `DeviceIdentityError` for unreadable or inconsistent contents.
    package static func decode(fileContents data: Data, named name: String) throws -> DeviceIdentity {
        let stored: StoredIdentity
        do { stored = try JSONDecoder().decode(StoredIdentity.self, from: data) } catch {
            throw DeviceIdentityError("\(name) is not a device identity file")
        }
        guard stored.version == fileFormatVersion else {
            throw DeviceIdentityError("unsupported device identity version \(stored.version)")
        }
        guard let seed = Base64URL.decode(stored.privateKeySeed) else {
            throw DeviceIdentityError("privateKeySeed is not base64url")
        }
        let identity = try DeviceIdentity(seed: seed, createdAtMs: stored.createdAtMs)
        guard DevicePublicKey.rawKey(from: stored.publicKey) == identity.publicKey else {
            throw DeviceIdentityError("publicKey does not belong to privateKeySeed")
        }
        guard stored.deviceId == identity.deviceId else {
            throw DeviceIdentityError("deviceId does not match publicKey")
        }
        return identity
    }

    /// Writes the identity atomically (a temporary file, then `rename`) with permissions 0600,
    /// creating the parent directory (0700) when needed.
    /// - Throws: `DeviceIdentityError` when the file cannot be written.
    ///
    /// - Parameter durable: flush the file to the disk before it replaces the old one (the
    ///   default); a throwaway directory (a conformance run's) can skip that.
    public func save(to url: URL, durable: Bool = true) throws {
        try AtomicFile.write(fileContents(), to: url, permissions: 0o600, durable: durable)
    }

    /// What ``save(to:durable:)`` writes: the identity file's bytes.
    /// - Throws: `DeviceIdentityError` when the identity cannot be encoded.
    package func fileContents() throws -> Data {
        let stored = StoredIdentity(
            version: Self.fileFormatVersion, deviceId: deviceId, publicKey: publicKeyBase64URL,
            privateKeySeed: Base64URL.encode(privateKeySeed), createdAtMs: createdAtMs)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        do { return try encoder.encode(stored) } catch {
            throw DeviceIdentityError("cannot encode the device identity")
        }
    }
}

/// Atomic, permission-restricted file writes (package-wide: the reference client's token and
/// chat files use them too).
package enum AtomicFile {
    /// Writes `data` to a temporary file created with `permissions`, optionally `fsync`s it, and
    /// renames it over `url`, creating the parent directory (0700) when needed.
    /// - Throws: `DeviceIdentityError` when the file cannot be written.
    package static func write(_ data: Data, to url: URL, permissions: mode_t, durable: Bool = true) throws {
        let directory = url.deletingLastPathComponent()
        // One `mkdir` answers the common cases (the directory exists, or only its last component
        // is missing); FileManager creates missing parents otherwise.
        if mkdir(directory.path, 0o700) != 0, errno != EEXIST {
            do {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DeviceIdentityError("cannot create \(directory.path): \(error.localizedDescription)")
            }
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(Hex.encode(CryptoBackend.randomBytes(8))).tmp")
        // The file is created with its final permissions, so the secret is never readable by
        // others, not even between creation and rename.
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, permissions)
        guard descriptor >= 0 else {
            throw DeviceIdentityError("cannot create \(temporary.path): errno \(errno)")
        }
        var written = 0
        let writeSucceeded = data.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                guard let base = buffer.baseAddress else { return false }
                let result = Glue.write(descriptor, base + written, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += result
            }
            return true
        }
        let synced = !durable || fsync(descriptor) == 0
        close(descriptor)
        guard writeSucceeded, synced, rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw DeviceIdentityError("cannot write \(url.path)")
        }
    }
}

/// Disambiguates POSIX functions whose names clash with Swift members.
private enum Glue {
    static func write(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
        #elseif canImport(Musl)
        Musl.write(descriptor, buffer, count)
        #else
        Darwin.write(descriptor, buffer, count)
        #endif
    }
}

// MARK: - Public key encodings

/// Device public-key encodings accepted by the Gateway (docs/protocol.md §3.8).
public enum DevicePublicKey {
    /// The DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it.
    public static let spkiPrefix = Data([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00])

    /// The raw 32-byte key from raw base64url or base64 (padded or not), a PEM
    /// `PUBLIC KEY` block, or base64 of the DER SubjectPublicKeyInfo.
    /// - Returns: `nil` when no 32-byte Ed25519 key can be extracted.
    public static func rawKey(from encoded: String) -> Data? {
        // Foundation's trimming and search only for text that may need them (a PEM block, longer
        // than any raw key, or padding): a raw base64url key, the common case, skips both.
        let padded = encoded.unicodeScalars.first?.properties.isWhitespace == true
            || encoded.unicodeScalars.last?.properties.isWhitespace == true
        let trimmed = padded ? encoded.trimmingCharacters(in: .whitespacesAndNewlines) : encoded
        if trimmed.utf8.count > 64 || trimmed.utf8.first == UInt8(ascii: "-"), trimmed.contains("-----BEGIN") {
            let body = trimmed.split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("-----") }
                .joined()
            guard let der = Base64URL.decode(body) else { return nil }
            return rawKey(fromDER: der)
        }
        guard let bytes = Base64URL.decode(trimmed) else { return nil }
        if bytes.count == Ed25519.keyLength { return bytes }
        return rawKey(fromDER: bytes)
    }

    /// The canonical wire form (unpadded base64url of the raw key), or `nil` when invalid.
    public static func normalizedBase64URL(_ encoded: String) -> String? {
        rawKey(from: encoded).map { Base64URL.encode($0) }
    }

    /// PEM (`-----BEGIN PUBLIC KEY-----`) for a raw key, as the TypeScript node host stores it.
    public static func pem(forRawKey key: Data) -> String {
        let body = (spkiPrefix + key).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END PUBLIC KEY-----\n"
    }

    private static func rawKey(fromDER der: Data) -> Data? {
        guard der.count == spkiPrefix.count + Ed25519.keyLength, der.prefix(spkiPrefix.count) == spkiPrefix else {
            return nil
        }
        return Data(der.suffix(Ed25519.keyLength))
    }
}

// MARK: - Ed25519

/// Ed25519 through the package's crypto interface (CryptoKit on Apple platforms, OpenSSL on
/// Linux).
enum Ed25519 {
    static let keyLength = CryptoBackend.ed25519KeyLength

    /// A fresh private key: 32 bytes from a secure random source (RFC 8032 section 5.1.5).
    static func generateSeed() -> Data { Data(CryptoBackend.randomBytes(keyLength)) }

    static func publicKey(fromSeed seed: Data) -> Data? { CryptoBackend.ed25519PublicKey(seed: seed) }

    static func sign(_ message: Data, seed: Data) -> Data? { CryptoBackend.ed25519Sign(message, seed: seed) }

    static func verify(signature: Data, message: Data, publicKey: Data) -> Bool {
        CryptoBackend.ed25519Verify(signature: signature, message: message, publicKey: publicKey)
    }
}
