import Foundation
import Testing
@testable import WebSocketTransport

/// A self-signed certificate written to a fresh directory, as `harness serve --tls` makes one.
struct TestCertificate: Sendable {
    let directory: URL
    let server: WebSocketTLSServerConfiguration
    let fingerprint: String

    init() throws {
        let made = try WebSocketTLS.makeSelfSignedCertificate(
            commonName: "openclaw test", subjectAlternativeNames: ["DNS:localhost", "IP:127.0.0.1", "IP:::1"])
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        try Data(made.certificatePEM.utf8).write(to: certificate)
        try Data(made.privateKeyPEM.utf8).write(to: key)
        server = WebSocketTLSServerConfiguration(certificateFile: certificate.path, privateKeyFile: key.path)
        fingerprint = try WebSocketTLS.sha256Fingerprint(certificatePEM: made.certificatePEM)
    }

    /// A client configuration pinning this certificate.
    var pinned: WebSocketConfiguration { WebSocketConfiguration(tls: WebSocketTLSClientConfiguration(pinnedCertificateSHA256: fingerprint)) }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// `wss://`: our client against our server through OpenSSL, with every fault hook.
@Suite(.enabled(if: WebSocketTLS.isAvailable, "TLS needs OpenSSL"))
struct TLSTests {
    @Test func certificatesAreFreshAndFingerprintsAreFormattedAsNodePrintsThem() throws {
        let first = try TestCertificate()
        let second = try TestCertificate()
        defer { first.remove(); second.remove() }
        #expect(first.fingerprint != second.fingerprint)
        #expect(first.fingerprint.count == 95)
        #expect(first.fingerprint.split(separator: ":").allSatisfy { $0.count == 2 && $0.allSatisfy { $0.isHexDigit && !$0.isLowercase } })
        let normalized = WebSocketTLSClientConfiguration.normalizedFingerprint(first.fingerprint)
        #expect(normalized?.count == 64)
        #expect(WebSocketTLSClientConfiguration.normalizedFingerprint("sha256:" + (normalized ?? "").uppercased()) == normalized)
        // The official apps also strip `SHA-256`, with or without a colon, and spaces around it.
        for prefix in ["SHA-256:", "sha-256 ", " sha256 : ", "SHA256"] {
            #expect(WebSocketTLSClientConfiguration.normalizedFingerprint(prefix + first.fingerprint) == normalized, "\(prefix)")
        }
        #expect(WebSocketTLSClientConfiguration.normalizedFingerprint("AB:CD") == nil)
        #expect(throws: WebSocketError.tlsFailed) { try WebSocketTLS.sha256Fingerprint(certificatePEM: "not a certificate") }
    }

    @Test func echoesOverTLSWithAPinnedFingerprintAndEveryClientFault() async throws {
        let certificate = try TestCertificate()
        defer { certificate.remove() }
        try await withEchoServer(tls: certificate.server) { server in
            #expect(server.url.hasPrefix("wss://"))
            let client = try await WebSocketClient.connect(to: server.url, configuration: certificate.pinned)
            #expect(client.isSecure)
            #expect(client.peerCertificateFingerprint == certificate.fingerprint)
            let accepted = try await server.nextAccepted()
            #expect(accepted.isSecure)
            #expect(accepted.requestPath == "/echo")
            try await client.send(text: "héllo über TLS")
            #expect(try await nextMessage(client) == .text("héllo über TLS"))
            let big = pattern(1 << 20)
            try await client.send(.binary(big))
            #expect(try await nextMessage(client) == .binary(big))
            try await client.send(.text("fragmented ✓"), fault: .fragmented(into: 5, interleavingPings: true))
            #expect(try await nextMessage(client) == .text("fragmented ✓"))
            try await client.send(.text("byte by byte"), fault: .byteByByte)
            #expect(try await nextMessage(client) == .text("byte by byte"))
            try await client.send(.text("split"), fault: .splitWrites(at: [1, 3]))
            #expect(try await nextMessage(client) == .text("split"))
            // Raw bytes go inside TLS as they are: a hand-made masked frame is echoed.
            try await client.sendRaw(WebSocketFrame(opcode: .text, payload: Array("raw".utf8)).encoded(maskingKey: [1, 2, 3, 4]))
            #expect(try await nextMessage(client) == .text("raw"))
            try await client.send(.text("lost"), fault: .drop)
            try await client.send(text: "kept")
            #expect(try await nextMessage(client) == .text("kept"))
            try await client.ping(Array("tls ping".utf8))
            let info = await client.close(code: .normal, reason: "bye")
            #expect(info.wasClean, "\(info)")
            #expect(await accepted.waitUntilClosed().wasClean)
        }
    }

    @Test func serverFaultsAndAResetOverTLS() async throws {
        let certificate = try TestCertificate()
        defer { certificate.remove() }
        try await withEchoServer(tls: certificate.server) { server in
            let client = try await WebSocketClient.connect(to: server.url, configuration: certificate.pinned)
            let accepted = try await server.nextAccepted()
            try await accepted.send(.text("fragmented by the server"), fault: .fragmented(into: 3, interleavingPings: true)
                .combined(with: .byteByByte))
            #expect(try await nextMessage(client) == .text("fragmented by the server"))
            accepted.dropNextOutboundMessages()
            try await accepted.send(text: "dropped")
            try await accepted.send(text: "after the drop")
            #expect(try await nextMessage(client) == .text("after the drop"))
            accepted.abort()
            let info = await client.waitUntilClosed()
            #expect(info.code == .abnormal, "\(info)")
        }
    }

    @Test func aWrongPinAnUntrustedCertificateAndAPlainServerAreRefused() async throws {
        let certificate = try TestCertificate()
        let other = try TestCertificate()
        defer { certificate.remove(); other.remove() }
        try await withEchoServer(tls: certificate.server) { server in
            let wrongPin = WebSocketConfiguration(tls: WebSocketTLSClientConfiguration(pinnedCertificateSHA256: other.fingerprint))
            let error = await #expect(throws: WebSocketError.tlsFailed) {
                try await WebSocketClient.connect(to: server.url, configuration: wrongPin)
            }
            #expect(error?.detail.contains("fingerprint mismatch") == true, "\(String(describing: error))")
            // Not in the system's trust store.
            await #expect(throws: WebSocketError.tlsFailed) { try await WebSocketClient.connect(to: server.url) }
            // Trusted as a CA file, for its IP address.
            let trusted = WebSocketConfiguration(tls: WebSocketTLSClientConfiguration(caFile: certificate.server.certificateFile))
            let client = try await WebSocketClient.connect(to: server.url, configuration: trusted)
            try await client.send(text: "verified")
            #expect(try await nextMessage(client) == .text("verified"))
            await client.close()
            // A plain client gets no upgrade from a TLS server.
            await #expect(throws: WebSocketError.self) {
                try await WebSocketClient.connect(to: "ws://127.0.0.1:\(server.server.port)/", configuration: .init(handshakeTimeout: .seconds(3)))
            }
        }
        try await withEchoServer { plain in
            let secureURL = "wss://127.0.0.1:\(plain.server.port)/"
            // A plain server waits for an HTTP request that never comes; the attempt fails.
            var configuration = certificate.pinned
            configuration.handshakeTimeout = .seconds(2)
            let error = await #expect(throws: WebSocketError.self) {
                try await WebSocketClient.connect(to: secureURL, configuration: configuration)
            }
            #expect(error == .tlsFailed || error == .handshakeTimedOut, "\(String(describing: error))")
        }
        #expect(throws: WebSocketError.tlsFailed) {
            try WebSocketTLSServerConfiguration(certificateFile: "/nonexistent/cert.pem", privateKeyFile: "/nonexistent/key.pem")
                .validate()
        }
    }
}

/// Where the build has no OpenSSL (Apple platforms today), every TLS entry point refuses with
/// ``WebSocketError/tlsUnavailable`` before any socket is opened: a clear error, never a crash.
@Suite(.enabled(if: !WebSocketTLS.isAvailable, "this build speaks TLS through OpenSSL"))
struct TLSUnavailableTests {
    @Test func everyEntryPointThrowsTLSUnavailable() async throws {
        #expect(throws: WebSocketError.tlsUnavailable) {
            try WebSocketTLS.makeSelfSignedCertificate(commonName: "openclaw test", subjectAlternativeNames: ["DNS:localhost"])
        }
        #expect(throws: WebSocketError.tlsUnavailable) { try WebSocketTLS.sha256Fingerprint(certificatePEM: "") }
        let files = WebSocketTLSServerConfiguration(certificateFile: "/nonexistent/cert.pem", privateKeyFile: "/nonexistent/key.pem")
        #expect(throws: WebSocketError.tlsUnavailable) { try files.validate() }
        await #expect(throws: WebSocketError.tlsUnavailable) { try await WebSocketServer.start(tls: files) }
        await #expect(throws: WebSocketError.tlsUnavailable) { try await WebSocketClient.connect(to: "wss://127.0.0.1:9/") }
        let error = await #expect(throws: WebSocketError.self) { try await WebSocketClient.connect(to: "wss://127.0.0.1:9/") }
        #expect(error?.detail == "TLS needs OpenSSL; not available on this platform")
    }
}
