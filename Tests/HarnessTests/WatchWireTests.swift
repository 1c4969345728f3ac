import Foundation
import GatewayProtocol
import Testing
import TestSupport
import WebSocketTransport

/// The Apple Watch direct mode of `harness serve` over HTTP, against an independent client
/// (`Tests/Interop/watch_peer.py`: Python's `http.client` and `cryptography`, no project code),
/// driven through the console like a person would (docs/protocol.md §13). Every route, status and
/// limit the peer can reach on the wire is one `check` line; each was seen to fail against a
/// deliberately broken rule (the machine's unit tests name the breaks; `challenge_rate_limited`
/// failed with the challenge's rate-limit check removed, `chunked_too_large` and `chunked_result`
/// with the parser's former 501 for every `Transfer-Encoding`; the checks from `connect_method`
/// on name the break tried in `watch_peer.py`, next to each). The peer stops at
/// `waiting_…` steps for the operator: clock moves (the 20 s poll, the 75 s idle timeout),
/// invokes (`--no-wait` to fill a queue), `restart --stay-down` and `resume`.
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct WatchWireTests {
    @Test func pythonWatchClientChecksEveryRoute() async throws {
        try await runWatchPeer(serveArguments: [], peerArguments: [])
    }

    /// The same client over `https`, against `serve --tls-cert/--tls-key` with a certificate made
    /// as docs/harness-serve.md ("An Apple Watch") says (a private CA, a leaf with the address in
    /// `subjectAltName`, EKU `serverAuth`, 397 days), trusted through the CA file alone, as the
    /// Watch trusts it through the CA installed on its iPhone: Python's default context verifies
    /// the chain and the address (`X509_STRICT` rules). Shown to fail with `--tls` instead (a
    /// self-signed certificate the CA did not sign: the peer's first request fails to verify).
    @Test(.enabled(if: WebSocketTLS.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"),
                   "needs OpenSSL and the openssl command"))
    func pythonWatchClientOverHTTPSWithAPrivateCA() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("watch-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await AsyncProcess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "cd '\(directory.path)' && \(Self.certificateScript)"])
        try #require(made.status == 0, "openssl: \(made.stderrText)")
        try await runWatchPeer(
            serveArguments: ["--tls-cert", directory.appendingPathComponent("gateway.pem").path,
                             "--tls-key", directory.appendingPathComponent("gateway.key").path],
            peerArguments: ["--cafile", directory.appendingPathComponent("ca.pem").path])
    }

    /// The commands of docs/harness-serve.md ("An Apple Watch") for the address 127.0.0.1.
    static let certificateScript = """
        set -e
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 825 \\
          -keyout ca.key -out ca.pem -subj "/CN=OpenClaw harness CA" \\
          -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout gateway.key \\
          -out gateway.csr -subj "/CN=localhost"
        printf '%s\\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \\
          "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost" \\
          "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid,issuer" > gateway.ext
        openssl x509 -req -in gateway.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 397 \\
          -sha256 -extfile gateway.ext -out gateway.pem
        """

    /// Runs `watch_peer.py` against `serve` (plus `serveArguments`) through the console, and
    /// expects every check to pass.
    private func runWatchPeer(serveArguments: [String], peerArguments: [String]) async throws {
        try await ServeProcess.withServe(["--show-secrets", "--rate-limit-loopback"] + serveArguments) { serve, url in
            func context(_ peer: LineProcess? = nil) -> Comment {
                Comment(rawValue: serve.transcript + "\n" + (peer?.transcript ?? ""))
            }
            try serve.send("setup-code --profile node")
            let reply = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" }, context())
            let token = try #require(reply["result"]?["bootstrapToken"]?.stringValue, context())
            let base = url.replacingOccurrences(of: "wss://", with: "https://").replacingOccurrences(of: "ws://", with: "http://")
            // Options first, then `--`: a token may begin with `-`, which argparse would read as an option.
            try await InteropPython.withPeer("watch_peer.py", peerArguments + ["--", base, token]) { peer in
                let waiting = try #require(await peer.object(timeout: .seconds(60), "step", "waiting_invoke"), context(peer))
                let nodeId = try #require(waiting["nodeId"]?.stringValue)
                try serve.send("invoke \(nodeId) device.info")
                _ = try #require(await peer.object(timeout: .seconds(60), "step", "waiting_timeout"), context(peer))
                let cursor = serve.objects.count
                try serve.send("advance 20")
                _ = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "advance" }, context(peer))
                try peer.send("advanced")
                func expectChecks(_ checks: [String]) async throws {
                    for check in checks {
                        let line = try #require(await peer.object(timeout: .seconds(60), "step", check), context(peer))
                        #expect(line["ok"] == true, "\(check): \(line.jsonString)")
                    }
                }
                /// Runs a console command once the peer printed step `step` (with `seconds` when
                /// given), waits for the command's reply `event` (`command.ok` unless told), and
                /// lets the peer go on.
                func whenPeer(_ step: String, seconds: Int? = nil, run command: String, times: Int = 1,
                              event: String = "command.ok") async throws {
                    _ = try #require(await peer.object(timeout: .seconds(60), "step", step) { line in
                        seconds.map { line["seconds"] == .int(Int64($0)) } ?? true
                    }, context(peer))
                    for _ in 0..<times {
                        let cursor = serve.objects.count
                        let name = String(command.prefix { $0 != " " })
                        try serve.send(command)
                        _ = try #require(await serve.object(after: cursor, "event", event) { $0["command"]?.stringValue == name }, context(peer))
                    }
                    try peer.send("go on")
                }
                try await expectChecks([
                    "challenge", "challenge_method", "connect_canvas_refused", "connect_schema", "connect_two_credentials",
                    "connect_skew", "connect_unknown_nonce", "connect_bad_signature", "chunked_too_large",
                    "connect_bootstrap", "connect_replay",
                    "bootstrap_single_use", "poll_unknown_session", "poll_method", "poll_invoke", "result_accepted",
                    "result_ignored", "result_invalid", "chunked_result", "poll_superseded", "poll_timeout", "disconnect",
                    "poll_after_disconnect", "connect_device_token", "connect_method", "result_method", "disconnect_method",
                    "connect_bad_json", "result_bad_json", "poll_no_bearer", "result_no_session", "disconnect_no_session",
                    "challenge_pending_limit",
                ])
                try await whenPeer("waiting_advance", seconds: 70, run: "advance 70")
                try await expectChecks(["session_idle_alive"])
                try await whenPeer("waiting_advance", seconds: 75, run: "advance 75")
                try await expectChecks(["session_idle_expired"])
                // Params over 64 KiB: the Watch's session closes as the event is queued, so the
                // invoke fails at once (the node disconnected). With the limit broken the event is
                // queued and the invoke waits for a result instead: no `command.error` comes.
                try await whenPeer("waiting_large_invoke", run: "invoke \(nodeId) device.info {\"pad\":\"\(String(repeating: "x", count: 66_000))\"}",
                                   event: "command.error")
                try await expectChecks(["event_too_large"])
                // 33 events while no poll waits (the queue holds 32): the overflow closes the session.
                try await whenPeer("waiting_queue_events", run: "invoke --no-wait \(nodeId) device.info", times: 33)
                try await expectChecks(["queue_overflow_events"])
                // 9 invokes of about 60 KB while no poll waits: 8 fit in the 512 KiB queue, the 9th overflows it.
                let padded = "{\"pad\":\"\(String(repeating: "y", count: 60_000))\"}"
                try await whenPeer("waiting_queue_bytes", run: "invoke --no-wait \(nodeId) device.info \(padded)", times: 9)
                try await expectChecks(["queue_overflow_bytes"])
                try await whenPeer("waiting_shutdown", run: "restart --stay-down")
                try await whenPeer("waiting_resume", run: "resume")
                try await expectChecks(["shutdown_unavailable", "session_after_restart", "unknown_route", "challenge_rate_limited"])
                let done = try #require(await peer.object(timeout: .seconds(60), "step", "done"), context(peer))
                #expect(done["failures"] == 0, context(peer))
                #expect(await peer.waitForExit(timeout: .seconds(30)) == 0, context(peer))
            }
        }
    }

    /// A Watch's connect goes through the node command surface rules of a WebSocket node
    /// (`Tests/Interop/watch_surface_peer.py`: a Python Watch over HTTP and a Python operator over
    /// WebSocket): the watchOS allowlist with `gateway.nodes.commands.deny`, effective versus
    /// declared commands, and a widened surface opening a node pairing request. Break tried:
    /// registering the Watch's declared commands as they came (the rule before, in
    /// `registerWatchNode`) fails `watch-widened-requested` and `watch-effective`, and the peer
    /// stops there (no request to approve).
    @Test func watchConnectFollowsTheNodeCommandSurfaceRules() async throws {
        try await ServeProcess.withServe(["--show-secrets", "--pairing", "auto", "--node-command-deny", "device.status"]) { serve, url in
            try serve.send("setup-code --profile node")
            let reply = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" },
                                     Comment(rawValue: serve.transcript))
            let token = try #require(reply["result"]?["bootstrapToken"]?.stringValue)
            let base = url.replacingOccurrences(of: "ws://", with: "http://")
            try await Self.expectSurfacePeer(["--timeout", "60", "--", url, base, token], serve: serve, checks: [
                "watch-paired", "watch-widened-requested", "watch-effective", "watch-withheld-refused", "watch-approved",
                "watch-approved-effective", "watch-deny-wins",
            ])
        }
    }

    /// A Watch's first node surface counts in the node-pairing rate limit like a WebSocket node's
    /// (upstream's Watch connect wraps `requestNodePairing` in the node-pairing scope): the
    /// eleventh new Watch from one address within the window gets 429. Break tried: no check on
    /// the Watch route (before) fails `watch-node-pairing-rate-limited` (eleven 200s).
    @Test func newWatchesCountInTheNodePairingRateLimit() async throws {
        try await ServeProcess.withServe(["--show-secrets", "--rate-limit-loopback"]) { serve, url in
            var tokens: [String] = []
            for _ in 0..<11 {
                let cursor = serve.objects.count
                try serve.send("setup-code --profile node")
                let reply = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "setup-code" },
                                         Comment(rawValue: serve.transcript))
                tokens.append(try #require(reply["result"]?["bootstrapToken"]?.stringValue))
            }
            let base = url.replacingOccurrences(of: "ws://", with: "http://")
            try await Self.expectSurfacePeer(["--pairing-limit", "--", url, base] + tokens, serve: serve,
                                             checks: ["watch-node-pairing-rate-limited"])
        }
    }

    /// Runs `watch_surface_peer.py` with `arguments` against `serve` and requires each of `checks`
    /// to be reported `ok`, in order, then the peer's `done` and exit status 0.
    private static func expectSurfacePeer(_ arguments: [String], serve: LineProcess, checks: [String]) async throws {
        try await InteropPython.withPeer("watch_surface_peer.py", arguments) { peer in
            func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
            try await peer.expectChecksPass(checks, timeout: .seconds(60), context: context)
            try await peer.expectDoneAndExit(timeout: .seconds(60), context: context)
        }
    }
}
