import Foundation
import GatewayProtocol
import MockGateway
import QRCode
import Testing
import TestSupport
import WebSocketTransport

/// What pairing a real phone needs from `harness serve`: state that survives a restart, a QR
/// code that scans back to the setup code, and TLS with a pinned fingerprint.
@Suite("harness serve: a real phone")
struct ServePhoneTests {
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-phone-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func withoutAStateDirectoryTheBannerSaysStateIsInMemory() async throws {
        try await ServeProcess.withServe { serve, _ in
            let listening = try #require(serve.objects.all.first)
            #expect(listening["state"]?.stringValue?.hasPrefix("in memory") == true, "\(listening)")
            #expect(listening["auth"] == "none")
        }
    }

    @Test func aStateDirectoryKeepsTheDeviceItsTokenAndAPendingRequestAcrossARestart() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let phone = try DeviceIdentity(seed: Data(repeating: 0x61, count: 32))
        let other = try DeviceIdentity(seed: Data(repeating: 0x62, count: 32))

        let (token, pendingId, gatewayDeviceId) = try await ServeProcess.withServe(["--state-dir", directory.path]) { serve, url in
            let listening = try #require(serve.objects.all.first)
            #expect(listening["stateDir"]?.stringValue == directory.path)
            let first = try await WireNode.open(url, identity: phone)
            #expect(try await first.connect().error?.detailCode == "PAIRING_REQUIRED")
            try serve.send("approve")
            _ = try #require(await serve.object("event", "pairing.resolved"), "\(serve.transcript)")
            let paired = try await WireNode.open(url, identity: phone)
            let hello = try await paired.connect()
            let token = try #require(hello.payload?["auth"]?["deviceToken"]?.stringValue, "\(hello)")
            let identity = try await paired.request("gateway.identity.get", params: nil)
            await paired.close()

            let waiting = try await WireNode.open(url, identity: other)
            let refused = try await waiting.connect()
            let pendingId = try #require(refused.error?.details?["requestId"]?.stringValue)
            _ = try #require(await serve.object("event", "pairing.requested") { $0["deviceId"]?.stringValue == other.deviceId })
            return (token, pendingId, identity.payload?["deviceId"]?.stringValue)
        }
        let file = directory.appendingPathComponent("gateway-state.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the state holds tokens: owner only")

        try await ServeProcess.withServe(["--state-dir", directory.path]) { serve, url in
            // The phone's token still works: no new pairing.
            let again = try await WireNode.open(url, identity: phone)
            let hello = try await again.connect(token: token)
            #expect(hello.ok, "\(hello.error.map { "\($0.code) \($0.message)" } ?? "")\n\(serve.transcript)")
            #expect(hello.payload?["auth"]?["deviceToken"]?.stringValue == token)
            // The Gateway is the same Gateway.
            let identity = try await again.request("gateway.identity.get", params: nil)
            #expect(identity.payload?["deviceId"]?.stringValue == gatewayDeviceId)
            await again.close()
            // The other device's request is still pending, with its id.
            let cursor = serve.objects.count
            try serve.send("pending")
            let pending = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "pending" })
            #expect(pending["result"]?["requests"]?.arrayValue?.compactMap { $0["requestId"]?.stringValue } == [pendingId])
            try serve.send("approve \(pendingId)")
            #expect(await serve.object("event", "pairing.resolved") { $0["requestId"]?.stringValue == pendingId } != nil)
        }
    }

    /// What a first `serve --state-dir` run leaves behind after a phone paired through a setup
    /// code: the tokens handed off, the setup's id, and a second code nobody used.
    struct SetupPairing: Sendable {
        var nodeToken: String
        var operatorToken: String
        var usedBootstrapToken: String
        var setupId: String
        var unusedBootstrapToken: String
        var unusedSetupId: String
        var secrets: [String] { [nodeToken, operatorToken, usedBootstrapToken, unusedBootstrapToken] }
    }

    static func pairThroughASetupCode(_ directory: URL, phone: DeviceIdentity) async throws -> SetupPairing {
        try await ServeProcess.withServe(["--state-dir", directory.path, "--show-secrets"]) { serve, url in
            func issue(_ line: String) async throws -> (code: SetupCode, setupId: String) {
                let cursor = serve.objects.count
                try serve.send(line)
                let reply = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "setup-code" },
                                         "\(serve.transcript)")
                let code = try SetupCode(decoding: try #require(reply["result"]?["setupCode"]?.stringValue))
                return (code, try #require(reply["result"]?["setupId"]?.stringValue))
            }
            let used = try await issue("setup-code")
            let client = try await WireNode.open(url, identity: phone)
            let hello = try await client.connect(client.connectParams(bootstrapToken: used.code.bootstrapToken))
            #expect(hello.ok, "\(hello.error.map { "\($0.code) \($0.message)" } ?? "")\n\(serve.transcript)")
            let auth = hello.payload?["auth"]
            let nodeToken = try #require(auth?["deviceToken"]?.stringValue, "\(hello)")
            let handOff = auth?["deviceTokens"]?.arrayValue?.first { $0["role"] == "operator" }
            let operatorToken = try #require(handOff?["deviceToken"]?.stringValue, "\(hello)")
            await client.close()
            let unused = try await issue("setup-code --profile node")
            return SetupPairing(nodeToken: nodeToken, operatorToken: operatorToken, usedBootstrapToken: used.code.bootstrapToken,
                                setupId: used.setupId, unusedBootstrapToken: unused.code.bootstrapToken, unusedSetupId: unused.setupId)
        }
    }

    @Test func aRestartKeepsSetupOutcomesAndTheTokensASetupCodeHandedOff() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let phone = try DeviceIdentity(seed: Data(repeating: 0x63, count: 32))
        let pairing = try await Self.pairThroughASetupCode(directory, phone: phone)

        try await ServeProcess.withServe(["--state-dir", directory.path]) { serve, url in
            let node = try await WireNode.open(url, identity: phone)
            let hello = try await node.connect(token: pairing.nodeToken)
            #expect(hello.ok, "the node token survives: \(hello.error.map { "\($0.code) \($0.message)" } ?? "")\n\(serve.transcript)")
            // The operator token of the hand-off (full profile: operator.admin) asks how the setup went.
            let operatorSession = try await WireNode.open(url, identity: phone)
            let admitted = try await operatorSession.connect(operatorSession.operatorParams(scopes: ["operator.admin"],
                                                                                            deviceToken: pairing.operatorToken))
            #expect(admitted.ok, "\(admitted.error.map { "\($0.code) \($0.message)" } ?? "")\n\(serve.transcript)")
            let status = try await operatorSession.request("device.pair.setupStatus", params: ["setupId": .string(pairing.setupId)])
            let completion = status.payload?["completion"]
            #expect(completion?["setupId"]?.stringValue == pairing.setupId, "\(status)")
            #expect(completion?["deviceId"]?.stringValue == phone.deviceId)
            #expect(completion?["access"] == "full")
            #expect(completion?["ts"]?.int64Value != nil)
            let unused = try await operatorSession.request("device.pair.setupStatus", params: ["setupId": .string(pairing.unusedSetupId)])
            #expect(unused.ok && unused.payload == .object([:]), "an unused code has no outcome: \(unused)")
            await operatorSession.close()
            await node.close()
        }
    }

    @Test func secretsRestoredFromTheStateDirectoryAreNeverPrinted() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let phone = try DeviceIdentity(seed: Data(repeating: 0x64, count: 32))
        let pairing = try await Self.pairThroughASetupCode(directory, phone: phone)
        let transcript = directory.appendingPathComponent("transcript.jsonl")

        let (lines, errors) = try await ServeProcess.withServe(["--state-dir", directory.path, "--verbose",
                                                                "--transcript", transcript.path]) { serve, url in
            // Before any client presents them under a secret key, a stray connection mentions every
            // restored secret in a member the redactor does not know as secret.
            let stray = try await WireNode.open(url, identity: try DeviceIdentity(seed: Data(repeating: 0x65, count: 32)))
            let mention = pairing.secrets.joined(separator: " ")
            try await stray.connection.send(.text(#"{"type":"req","id":"stray","method":"connect","params":{"note":"\#(mention)"}}"#))
            _ = try #require(await serve.object("event", "handshake.rejected"), "\(serve.transcript)")
            // The restored node token still works.
            let node = try await WireNode.open(url, identity: phone)
            let hello = try await node.connect(token: pairing.nodeToken)
            #expect(hello.ok, "\(hello.error.map { "\($0.code) \($0.message)" } ?? "")\n\(serve.transcript)")
            await node.close()
            return (serve.lines, serve.errors)
        }
        let recorded = try String(contentsOf: transcript, encoding: .utf8)
        #expect(recorded.contains(#""id":"stray""#), "the stray frame was recorded")
        #expect(lines.all.contains { $0.contains("frame.in") && $0.contains("stray") }, "and printed (--verbose)")
        for secret in pairing.secrets {
            // Booleans, so that a failure does not print the secret-laden output in full.
            let inTranscript = recorded.contains(secret)
            let inStdout = lines.all.contains { $0.contains(secret) }
            let inStderr = errors.all.contains { $0.contains(secret) }
            #expect(!inTranscript, "the transcript holds a restored secret")
            #expect(!inStdout, "stdout holds a restored secret")
            #expect(!inStderr, "stderr holds a restored secret")
        }
    }

    @Test func aTruncatedOrForeignStateFileIsAClearErrorAndIsLeftAlone() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A real state file, then cut in half as a crash during a non-atomic write would.
        try await ServeProcess.withServe(["--state-dir", directory.path]) { _, _ in }
        let file = directory.appendingPathComponent("gateway-state.json")
        let whole = try Data(contentsOf: file)
        let cases: [(Data, String)] = [
            (whole.prefix(whole.count / 2), "is truncated or not JSON"),
            (Data(#"{"devices": []}"#.utf8), "is not a mock Gateway state file"),
            (Data(#"{"format": "openclaw-mock-gateway-state", "version": 99}"#.utf8), "has state format version 99"),
        ]
        for (content, message) in cases {
            try content.write(to: file)
            let serve = try ServeProcess.start(["--port", "0", "--state-dir", directory.path])
            let status = await serve.waitForExit(timeout: .seconds(30))
            await serve.kill()
            #expect(status == 2, "\(message): \(serve.transcript)")
            let error = serve.errors.all.first { $0.hasPrefix("error: ") } ?? ""
            #expect(error.contains(file.path) && error.contains(message), "\(error)")
            #expect(try Data(contentsOf: file) == content, "the file is never replaced")
        }
    }

    @Test(.enabled(if: QRLibrary.installed || QRLibrary.required, Comment(rawValue: QRLibrary.skipMessage)),
          .enabled(if: ZBar.path != nil || ZBar.required, Comment(rawValue: ZBar.skipMessage)))
    func theQRCodeScansBackToTheExactSetupCode() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let atStart = directory.appendingPathComponent("start.png")
        try await ServeProcess.withServe(["--show-secrets", "--qr-png", atStart.path]) { serve, url in
            let first = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" }, "\(serve.transcript)")
            let code = try #require(first["result"]?["setupCode"]?.stringValue)
            #expect(first["result"]?["qrPng"]?.stringValue == atStart.path)
            #expect(try await ZBar.decode(atStart) == code)
            #expect(try SetupCode(decoding: code).url == url)

            let png = directory.appendingPathComponent("node profile.png")
            let cursor = serve.objects.count
            try serve.send("setup-code --profile node --qr-png \"\(png.path)\"")
            let reply = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "setup-code" })
            let second = try #require(reply["result"]?["setupCode"]?.stringValue)
            #expect(reply["result"]?["profile"] == "node")
            #expect(second != code)
            #expect(try await ZBar.decode(png) == second)
            let decoded = try SetupCode(decoding: second)
            #expect(decoded.expiresAtMs == reply["result"]?["expiresAtMs"]?.int64Value)
        }
    }

    @Test(.enabled(if: QRLibrary.installed || QRLibrary.required, Comment(rawValue: QRLibrary.skipMessage)))
    func theTerminalShowsTheQRCodeAndHidesTheCodeWithoutShowSecrets() async throws {
        let serve = try ServeProcess.start(["--port", "0", "--qr"])
        defer { serve.sendSignal(SIGKILL) }
        let block = try #require(await serve.lines.first(from: 0, timeout: .seconds(30)) { $0.hasPrefix("setup code ") }?.element,
                                 "\(serve.transcript)")
        #expect(block.hasPrefix("setup code <redacted> (scan the QR code"))
        let qrLines = serve.lines.all.filter { $0.hasPrefix("\u{1B}[30;47m") }
        #expect(qrLines.count >= 13, "the QR code is drawn: \(serve.transcript)")
        #expect(!serve.lines.all.contains { $0.contains("bootstrapToken") })
        try serve.send("quit")
        #expect(await serve.waitForExit(timeout: .seconds(30)) == 0)
    }

    @Test func withoutLibqrencodeQRIsAUsageErrorAndSetupCodesStillWork() async throws {
        let missing = ["OPENCLAW_LIBQRENCODE": "/nonexistent/libqrencode.so.4"]
        for flags in [["--qr"], ["--qr-png", "/tmp/never-written.png"]] {
            let serve = try ServeProcess.start(["--port", "0"] + flags, environment: missing)
            defer { serve.sendSignal(SIGKILL) }
            #expect(await serve.waitForExit(timeout: .seconds(30)) == 2, "\(serve.transcript)")
            let error = serve.errors.all.joined(separator: "\n")
            #expect(error.contains("error: \(flags[0]): QR codes need libqrencode"), "\(error)")
            #expect(error.contains("apt-get install libqrencode4") && error.contains("brew install qrencode"), "\(error)")
            #expect(!serve.lines.all.contains { $0.hasPrefix("listening") }, "nothing was served")
        }
        // Without --qr the Gateway serves; a setup code is issued without a QR code, and only a
        // PNG asked for is refused.
        try await ServeProcess.withServe(["--show-secrets"], environment: missing) { serve, _ in
            try serve.send("setup-code")
            let reply = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" }, "\(serve.transcript)")
            #expect(reply["result"]?["setupCode"]?.stringValue?.isEmpty == false)
            let cursor = serve.objects.count
            try serve.send("setup-code --qr-png /tmp/never-written.png")
            let failed = try #require(await serve.object(after: cursor, "event", "command.error"), "\(serve.transcript)")
            #expect(failed["message"]?.stringValue?.contains("apt-get install libqrencode4") == true, "\(failed)")
        }
    }

    @Test func plainWSOnTheLANLowersAFullSetupCodeAndPlainWSElsewhereGetsNone() async throws {
        // Only codes are issued: nothing is sent to these addresses.
        try await ServeProcess.withServe(["--url", "ws://192.168.1.20:18789"]) { serve, _ in
            try serve.send("setup-code --profile full")
            let reply = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" }, "\(serve.transcript)")
            #expect(reply["result"]?["profile"] == "limited")
            #expect(reply["result"]?["access"] == "limited")
            #expect(reply["result"]?["accessDowngraded"] == true)
            #expect(reply["result"]?["url"] == "ws://192.168.1.20:18789")
        }
        let text = try ServeProcess.start(["--port", "0", "--url", "ws://192.168.1.20:18789"])
        defer { text.sendSignal(SIGKILL) }
        try text.send("setup-code")
        let explained = await text.lines.first(from: 0, timeout: .seconds(30)) { $0.hasPrefix("access lowered from full to limited") }
        #expect(explained?.element.contains("serve with --tls") == true, "\(text.transcript)")
        try text.send("quit")
        #expect(await text.waitForExit(timeout: .seconds(30)) == 0)

        try await ServeProcess.withServe(["--url", "ws://203.0.113.5:18789"]) { serve, _ in
            try serve.send("setup-code --profile node")
            let error = try #require(await serve.object("event", "command.error") { $0["command"] == "setup-code" }, "\(serve.transcript)")
            let message = error["message"]?.stringValue ?? ""
            #expect(message.contains("neither loopback nor on a private network") && message.contains("--tls"), "\(message)")
        }
    }

    @Test(.enabled(if: WebSocketTLS.isAvailable, "TLS needs OpenSSL"))
    func tlsServesWSSWithTheFingerprintInTheBannerAndTheSetupCode() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fingerprint = try await ServeProcess.withServe(["--tls", "--state-dir", directory.path, "--show-secrets"]) { serve, url in
            #expect(url.hasPrefix("wss://127.0.0.1:"))
            let listening = try #require(serve.objects.all.first)
            let fingerprint = try #require(listening["tlsFingerprint"]?.stringValue)
            // Upstream's form: 64 lower-case hexadecimal digits, in the banner and in the code.
            #expect(fingerprint.count == 64 && fingerprint.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(fingerprint)")
            try serve.send("setup-code")
            let reply = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" })
            let code = try SetupCode(decoding: try #require(reply["result"]?["setupCode"]?.stringValue))
            #expect(code.tlsFingerprint == fingerprint)
            #expect(code.url == url)
            #expect(reply["result"]?["profile"] == "full", "wss:// gets the full profile by default")

            // Our own client over wss://, trusting only the printed fingerprint.
            let pinned = WebSocketConfiguration(tls: WebSocketTLSClientConfiguration(pinnedCertificateSHA256: fingerprint))
            let connection = try await WebSocketClient.connect(to: url, configuration: pinned)
            #expect(connection.peerCertificateFingerprint.flatMap(WebSocketTLSClientConfiguration.normalizedFingerprint) == fingerprint)
            await connection.close()
            return fingerprint
        }
        // The certificate is kept in the state directory: the same fingerprint after a restart.
        try await ServeProcess.withServe(["--tls", "--state-dir", directory.path]) { serve, _ in
            #expect(serve.objects.all.first?["tlsFingerprint"]?.stringValue == fingerprint)
        }
    }
}

/// Where the build has no OpenSSL (Apple platforms today), `--tls` is a usage error.
@Suite("harness serve --tls without OpenSSL", .enabled(if: !WebSocketTLS.isAvailable, "this build speaks TLS"))
struct ServeWithoutTLSTests {
    @Test func tlsFlagsExitWithAClearError() async throws {
        for arguments in [["--tls"], ["--cert", "/nonexistent/cert.pem", "--key", "/nonexistent/key.pem"]] {
            let serve = try ServeProcess.start(["--port", "0"] + arguments)
            let status = await serve.waitForExit(timeout: .seconds(30))
            await serve.kill()
            #expect(status == 2, "\(arguments): \(serve.transcript)")
            #expect(serve.errors.all.contains("error: --tls: TLS needs OpenSSL; not available on this platform"), "\(serve.transcript)")
            #expect(serve.lines.all.isEmpty, "nothing was served: \(serve.transcript)")
        }
    }
}

/// `harness run --tls`: the run's Gateways serve `wss://`, and a client process is told the
/// certificate's fingerprint.
@Suite("harness run --tls")
struct RunTLSTests {
    @Test(.enabled(if: WebSocketTLS.isAvailable, "TLS needs OpenSSL"))
    func theReferenceNodeProcessPinsTheGatewayOverTLS() async throws {
        let directory = try ServePhoneTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let seen = directory.appendingPathComponent("seen.txt")
        let harness = try ServeProcess.executable().path
        let command = #"echo "$OPENCLAW_GATEWAY_URL $OPENCLAW_GATEWAY_TLS_FINGERPRINT" >> "\#(seen.path)"; exec "\#(harness)" reference-node"#
        let run = try LineProcess(name: "harness run", executable: URL(fileURLWithPath: harness),
                                  arguments: ["run", "--tls", "--node-command", command, "--filter", "HS-001", "--profile", "current"])
        let status = await run.waitForExit(timeout: .seconds(120))
        await run.kill()
        #expect(status == 0, "\(run.transcript)")
        let lines = try String(contentsOf: seen, encoding: .utf8).split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let parts = line.split(separator: " ")
            #expect(parts.count == 2 && parts[0].hasPrefix("wss://127.0.0.1:"), "\(line)")
            #expect(parts.count == 2 && WebSocketTLSClientConfiguration.normalizedFingerprint(String(parts[1])) != nil, "\(line)")
        }
    }

    @Test func anInProcessClientIsRefusedWithTLS() async throws {
        let harness = try ServeProcess.executable()
        let run = try LineProcess(name: "harness run", executable: harness, arguments: ["run", "--tls", "--node", "reference"])
        let status = await run.waitForExit(timeout: .seconds(60))
        await run.kill()
        #expect(status == 2)
        #expect(run.errors.all.contains { $0.contains("--tls needs a client on real sockets") }, "\(run.transcript)")
    }
}
