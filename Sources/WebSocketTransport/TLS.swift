#if canImport(COpenSSL)
import COpenSSL
#endif

/// The server side of TLS (`wss://`): a certificate chain and its private key, as PEM files.
public struct WebSocketTLSServerConfiguration: Sendable, Hashable {
    /// The PEM file with the server certificate, followed by any intermediate certificates.
    public var certificateFile: String
    /// The PEM file with the certificate's private key.
    public var privateKeyFile: String

    /// Creates a server configuration.
    public init(certificateFile: String, privateKeyFile: String) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }

    /// Checks that the files can be used: readable PEM, a key that matches the certificate.
    /// - Throws: ``WebSocketError/tlsFailed`` saying which file is wrong,
    ///   ``WebSocketError/tlsUnavailable`` without OpenSSL.
    public func validate() throws(WebSocketError) {
        _ = try TLSContext.server(self)
    }
}

/// How a `wss://` client decides to trust the server.
///
/// With a pinned fingerprint the server certificate must have exactly that SHA-256 fingerprint
/// (of its DER encoding) and nothing else is checked: the way a phone trusts a self-signed
/// Gateway certificate from a setup code's `tlsFingerprint`. Otherwise the certificate must
/// verify against ``caFile`` (or the system's trust store when it is `nil`) and name the host.
public struct WebSocketTLSClientConfiguration: Sendable, Hashable {
    /// The expected SHA-256 fingerprint of the server certificate: 64 hexadecimal digits, with
    /// or without colons, in any case, optionally after `sha256:` or `sha-256:` (both forms
    /// upstream writes: `AB:CD:…` from Node's `fingerprint256`, and `abcd…`, the form of its
    /// setup codes).
    public var pinnedCertificateSHA256: String?
    /// A PEM file of CA certificates to verify the server against (with a host-name check).
    public var caFile: String?

    /// Creates a client configuration; with neither argument the system's trust store is used.
    public init(pinnedCertificateSHA256: String? = nil, caFile: String? = nil) {
        self.pinnedCertificateSHA256 = pinnedCertificateSHA256
        self.caFile = caFile
    }

    /// A fingerprint as 64 lower-case hexadecimal digits, or `nil` when `text` is not one
    /// (colons, spaces, case and a `sha256` / `sha-256` prefix, with or without a colon, are
    /// ignored, as the official apps' pinning ignores them: `normalizeFingerprint` in
    /// `apps/shared/OpenClawKit/Sources/OpenClawKit/GatewayTLSPinning.swift@0ac6e05cd084d91632796a35e2f3d2cafc222dbc`
    /// and `apps/android/app/src/main/java/ai/openclaw/app/gateway/GatewayTls.kt@0756c13cea08782b4ae24a8b5afdc0771a56c958`).
    public static func normalizedFingerprint(_ text: String) -> String? {
        var body = Substring(text.lowercased())
        while body.first == " " { body.removeFirst() }
        for prefix in ["sha-256", "sha256"] where body.hasPrefix(prefix) {
            body = body.dropFirst(prefix.count)
            while body.first == " " { body.removeFirst() }
            if body.first == ":" { body.removeFirst() }
            break
        }
        let digits = body.filter { $0 != ":" && $0 != " " }
        guard digits.count == 64, digits.allSatisfy(\.isHexDigit) else { return nil }
        return String(digits)
    }
}

/// TLS helpers: availability, self-signed certificates and fingerprints.
///
/// TLS is implemented with OpenSSL (libssl) and exists only where the `COpenSSL` module does
/// (Linux today); elsewhere ``isAvailable`` is `false` and every TLS entry point throws
/// ``WebSocketError/tlsUnavailable``.
public enum WebSocketTLS {
    /// Whether this build can speak TLS.
    public static var isAvailable: Bool {
        #if canImport(COpenSSL)
        return true
        #else
        return false
        #endif
    }

    /// A certificate fingerprint in the form Node's `X509Certificate.fingerprint256` prints:
    /// upper-case hexadecimal byte pairs joined by colons (`AB:CD:…`, 95 characters).
    public static func formattedFingerprint(_ digest: [UInt8]) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// Makes a self-signed server certificate on a fresh ECDSA P-256 key, signed with SHA-256,
    /// for the `serverAuth` purpose.
    /// - Parameters:
    ///   - commonName: the subject's common name.
    ///   - subjectAlternativeNames: names the certificate is valid for, each `DNS:name` or `IP:address`.
    ///   - days: how long it is valid.
    /// - Returns: the certificate and the private key, as PEM text.
    /// - Throws: ``WebSocketError/tlsUnavailable`` without OpenSSL, ``WebSocketError/tlsFailed``
    ///   when OpenSSL refuses (for example a malformed alternative name).
    public static func makeSelfSignedCertificate(
        commonName: String, subjectAlternativeNames: [String], days: Int = 825
    ) throws(WebSocketError) -> (certificatePEM: String, privateKeyPEM: String) {
        #if canImport(COpenSSL)
        guard let certificateBIO = BIO_new(BIO_s_mem()), let keyBIO = BIO_new(BIO_s_mem()) else {
            throw WebSocketError.tlsFailed.with(detail: "cannot allocate memory BIOs")
        }
        defer {
            BIO_free(certificateBIO)
            BIO_free(keyBIO)
        }
        openclaw_openssl_clear_errors()
        let names = subjectAlternativeNames.joined(separator: ",")
        guard openclaw_tls_make_self_signed(commonName, names, Int32(clamping: days), certificateBIO, keyBIO) == 1 else {
            throw WebSocketError.tlsFailed.with(detail: "cannot make a self-signed certificate: \(TLSErrors.drain())")
        }
        return (TLSErrors.memoryText(certificateBIO), TLSErrors.memoryText(keyBIO))
        #else
        throw WebSocketError.tlsUnavailable
        #endif
    }

    /// The SHA-256 fingerprint of the first certificate in PEM text, formatted as
    /// ``formattedFingerprint(_:)`` does.
    /// - Throws: ``WebSocketError/tlsFailed`` when the text holds no certificate,
    ///   ``WebSocketError/tlsUnavailable`` without OpenSSL.
    public static func sha256Fingerprint(certificatePEM: String) throws(WebSocketError) -> String {
        #if canImport(COpenSSL)
        var bytes = Array(certificatePEM.utf8)
        let certificate: OpaquePointer? = bytes.withUnsafeMutableBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        guard let certificate else {
            openclaw_openssl_clear_errors()
            throw WebSocketError.tlsFailed.with(detail: "no PEM certificate found")
        }
        defer { X509_free(certificate) }
        guard let digest = TLSErrors.fingerprint(certificate) else {
            throw WebSocketError.tlsFailed.with(detail: "cannot hash the certificate")
        }
        return formattedFingerprint(digest)
        #else
        throw WebSocketError.tlsUnavailable
        #endif
    }
}

#if canImport(COpenSSL)

/// OpenSSL's error queue and small conversions.
enum TLSErrors {
    /// Every queued error as text (the queue is emptied); "unknown error" when it was empty.
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            openclaw_tls_error_text(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "unknown error" : messages.joined(separator: "; ")
    }

    /// The bytes of a memory BIO as text.
    static func memoryText(_ bio: OpaquePointer) -> String {
        var data: UnsafeMutablePointer<CChar>?
        let length = openclaw_bio_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// The SHA-256 digest of a certificate's DER encoding.
    static func fingerprint(_ certificate: OpaquePointer) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1, length == 32 else { return nil }
        return Array(digest.prefix(32))
    }
}

/// An OpenSSL `SSL_CTX`: the certificate and trust settings shared by many connections.
///
/// `@unchecked Sendable`: the context is fully configured in `init` and never changed after;
/// OpenSSL allows creating connections (`SSL_new`) from one context on many threads at once.
final class TLSContext: @unchecked Sendable {
    let pointer: OpaquePointer
    let isServer: Bool
    /// The client's trust settings (`nil` for a server).
    let trust: WebSocketTLSClientConfiguration?
    /// The normalised pinned fingerprint of a client.
    let pin: String?

    private init(pointer: OpaquePointer, isServer: Bool, trust: WebSocketTLSClientConfiguration?, pin: String?) {
        self.pointer = pointer
        self.isServer = isServer
        self.trust = trust
        self.pin = pin
    }

    deinit { SSL_CTX_free(pointer) }

    /// A server context with the certificate chain and key of `configuration`.
    /// - Throws: ``WebSocketError/tlsFailed`` naming the file that could not be used.
    static func server(_ configuration: WebSocketTLSServerConfiguration) throws(WebSocketError) -> TLSContext {
        openclaw_openssl_clear_errors()
        guard let pointer = openclaw_tls_context_new(1) else {
            throw WebSocketError.tlsFailed.with(detail: "cannot create a TLS context: \(TLSErrors.drain())")
        }
        let context = TLSContext(pointer: pointer, isServer: true, trust: nil, pin: nil)
        guard SSL_CTX_use_certificate_chain_file(pointer, configuration.certificateFile) == 1 else {
            throw WebSocketError.tlsFailed.with(detail: "cannot use the certificate \(configuration.certificateFile): \(TLSErrors.drain())")
        }
        guard SSL_CTX_use_PrivateKey_file(pointer, configuration.privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw WebSocketError.tlsFailed.with(detail: "cannot use the private key \(configuration.privateKeyFile): \(TLSErrors.drain())")
        }
        guard SSL_CTX_check_private_key(pointer) == 1 else {
            throw WebSocketError.tlsFailed.with(detail: "the private key \(configuration.privateKeyFile) does not match the certificate: \(TLSErrors.drain())")
        }
        return context
    }

    /// A client context trusting what `configuration` says.
    /// - Throws: ``WebSocketError/tlsFailed`` for an invalid pin or an unusable CA file.
    static func client(_ configuration: WebSocketTLSClientConfiguration) throws(WebSocketError) -> TLSContext {
        var pin: String?
        if let text = configuration.pinnedCertificateSHA256 {
            guard let normalized = WebSocketTLSClientConfiguration.normalizedFingerprint(text) else {
                throw WebSocketError.tlsFailed.with(detail: "the pinned fingerprint is not 64 hexadecimal digits: \(text)")
            }
            pin = normalized
        }
        openclaw_openssl_clear_errors()
        guard let pointer = openclaw_tls_context_new(0) else {
            throw WebSocketError.tlsFailed.with(detail: "cannot create a TLS context: \(TLSErrors.drain())")
        }
        let context = TLSContext(pointer: pointer, isServer: false, trust: configuration, pin: pin)
        if pin != nil {
            // The pin is the whole trust decision; it is checked once the handshake is done.
            SSL_CTX_set_verify(pointer, SSL_VERIFY_NONE, nil)
        } else {
            SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
            let loaded = configuration.caFile.map { SSL_CTX_load_verify_locations(pointer, $0, nil) }
                ?? SSL_CTX_set_default_verify_paths(pointer)
            guard loaded == 1 else {
                throw WebSocketError.tlsFailed.with(detail: "cannot load the CA file \(configuration.caFile ?? "(system)"): \(TLSErrors.drain())")
            }
        }
        return context
    }
}

/// One TLS connection over memory buffers: ciphertext read from the socket is fed in, plaintext
/// comes out of ``read(into:)``; plaintext goes in with ``write(_:)`` and the ciphertext to send
/// comes out of ``takeCiphertext()``.
///
/// The socket I/O stays where it was (the event loop's non-blocking reads and writes), so TLS
/// adds no state to the loop: OpenSSL never touches the descriptor, a "want read" only means
/// "feed more ciphertext", and a write never blocks inside OpenSSL. Each plaintext write becomes
/// its own TLS record(s), so split-write faults stay visible to the peer.
///
/// `@unchecked Sendable`: every call happens under the lock of the one handler or connection
/// that owns the session; the session is handed from the handshake handler to the connection
/// once, after which the handler never touches it again.
final class TLSSession: @unchecked Sendable {
    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    private let context: TLSContext
    private var shutdownSent = false

    /// Outcomes of the calls.
    enum Progress: Equatable {
        /// The call finished (the handshake is done, bytes were read or written).
        case done(Int)
        /// More ciphertext from the peer is needed.
        case needsInput
        /// The peer ended TLS cleanly (close_notify).
        case closed
        /// A TLS or trust failure.
        case failed(String)
    }

    /// A session for one connection; `serverName` is the client's SNI and host-name check.
    init(context: TLSContext, serverName: String?) throws(WebSocketError) {
        guard let ssl = SSL_new(context.pointer), let readBIO = BIO_new(BIO_s_mem()), let writeBIO = BIO_new(BIO_s_mem()) else {
            throw WebSocketError.tlsFailed.with(detail: "cannot create a TLS connection: \(TLSErrors.drain())")
        }
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        self.context = context
        SSL_set_bio(ssl, readBIO, writeBIO)  // the SSL owns both BIOs from here on
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let serverName, !serverName.isEmpty {
                let isAddress = serverName.contains(":") || serverName.allSatisfy { $0.isNumber || $0 == "." }
                if !isAddress { _ = openclaw_tls_set_server_name(ssl, serverName) }
                if context.pin == nil {
                    // Host-name (or IP address) check of CA-verified certificates.
                    if isAddress { _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) } else { _ = SSL_set1_host(ssl, serverName) }
                }
            }
        }
    }

    deinit { SSL_free(ssl) }

    /// Hands ciphertext received from the peer to OpenSSL.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = BIO_write(readBIO, base, Int32(clamping: bytes.count))
    }

    /// Whether the handshake has completed.
    var isHandshakeComplete: Bool { SSL_is_init_finished(ssl) == 1 }

    /// Advances the handshake; once it is done on a client, checks the pin.
    func handshake() -> Progress {
        if isHandshakeComplete { return .done(0) }
        let result = SSL_do_handshake(ssl)
        if result == 1 { return verifyPeer() }
        return progress(for: result, action: "TLS handshake")
    }

    /// Reads decrypted bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Progress {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .done(0) }
        let wasComplete = isHandshakeComplete
        let result = SSL_read(ssl, base, Int32(clamping: buffer.count))
        if !wasComplete, isHandshakeComplete, case .failed(let reason) = verifyPeer() { return .failed(reason) }
        if result > 0 { return .done(Int(result)) }
        return progress(for: result, action: "TLS read")
    }

    /// Encrypts `bytes` (all of them: the output buffer is memory).
    func write(_ bytes: UnsafeRawBufferPointer) -> Progress {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .done(0) }
        var offset = 0
        while offset < bytes.count {
            let result = SSL_write(ssl, base + offset, Int32(clamping: bytes.count - offset))
            guard result > 0 else { return progress(for: result, action: "TLS write") }
            offset += Int(result)
        }
        return .done(offset)
    }

    /// Queues a close_notify alert (once): the clean end of the TLS stream before a TCP FIN.
    func shutdown() {
        guard !shutdownSent, isHandshakeComplete else { return }
        shutdownSent = true
        _ = SSL_shutdown(ssl)
        openclaw_openssl_clear_errors()
    }

    /// The ciphertext OpenSSL produced since the last call, to be written to the socket.
    func takeCiphertext() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(writeBIO))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let count = bytes.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress, Int32(clamping: pending)) }
        return count > 0 ? Array(bytes.prefix(Int(count))) : []
    }

    /// The SHA-256 fingerprint of the peer's certificate, formatted (`AB:CD:…`).
    var peerFingerprint: String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return TLSErrors.fingerprint(certificate).map(WebSocketTLS.formattedFingerprint)
    }

    private func verifyPeer() -> Progress {
        guard !context.isServer else { return .done(0) }
        if let pin = context.pin {
            guard let actual = peerFingerprint.flatMap(WebSocketTLSClientConfiguration.normalizedFingerprint) else {
                return .failed("the server sent no certificate")
            }
            guard actual == pin else {
                return .failed("certificate fingerprint mismatch: the server's is \(peerFingerprint ?? actual), the pinned one \(context.trust?.pinnedCertificateSHA256 ?? pin)")
            }
        }
        return .done(0)
    }

    private func progress(for result: Int32, action: String) -> Progress {
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            openclaw_openssl_clear_errors()
            return .needsInput
        case SSL_ERROR_ZERO_RETURN:
            openclaw_openssl_clear_errors()
            return .closed
        default:
            let verify = SSL_get_verify_result(ssl)
            let detail = verify != Int(X509_V_OK) && !context.isServer
                ? String(cString: X509_verify_cert_error_string(verify)) : TLSErrors.drain()
            openclaw_openssl_clear_errors()
            return .failed("\(action) failed: \(detail)")
        }
    }
}

#else

/// Without OpenSSL there is no TLS: a context cannot be created, so no session ever exists.
final class TLSContext: Sendable {
    static func server(_ configuration: WebSocketTLSServerConfiguration) throws(WebSocketError) -> TLSContext {
        throw WebSocketError.tlsUnavailable
    }

    static func client(_ configuration: WebSocketTLSClientConfiguration) throws(WebSocketError) -> TLSContext {
        throw WebSocketError.tlsUnavailable
    }
}

/// Without OpenSSL there is no TLS session; this type only keeps the transport's code paths
/// the same on every platform. It cannot be created.
final class TLSSession: Sendable {
    enum Progress: Equatable {
        case done(Int)
        case needsInput
        case closed
        case failed(String)
    }

    init(context: TLSContext, serverName: String?) throws(WebSocketError) { throw WebSocketError.tlsUnavailable }
    func feed(_ bytes: UnsafeRawBufferPointer) {}
    var isHandshakeComplete: Bool { false }
    func handshake() -> Progress { .failed("TLS needs OpenSSL") }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Progress { .failed("TLS needs OpenSSL") }
    func write(_ bytes: UnsafeRawBufferPointer) -> Progress { .failed("TLS needs OpenSSL") }
    func shutdown() {}
    func takeCiphertext() -> [UInt8] { [] }
    var peerFingerprint: String? { nil }
}

#endif
