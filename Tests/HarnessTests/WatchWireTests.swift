import Foundation
import GatewayProtocol
import Testing

/// The Apple Watch direct mode of `harness serve` over HTTP, against an independent client
/// (`Tests/Interop/watch_peer.py`: Python's `http.client` and `cryptography`, no project code),
/// driven through the console like a person would (docs/protocol.md §13). Every route, status and
/// limit the peer can reach on the wire is one `check` line; each was seen to fail against a
/// deliberately broken rule (the machine's unit tests name the breaks).
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct WatchWireTests {
    @Test func pythonWatchClientChecksEveryRoute() async throws {
        try await ServeProcess.withServe(["--show-secrets", "--rate-limit-loopback"]) { serve, url in
            func context(_ peer: LineProcess? = nil) -> Comment {
                Comment(rawValue: serve.transcript + "\n" + (peer?.transcript ?? ""))
            }
            try serve.send("setup-code --profile node")
            let reply = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" }, context())
            let token = try #require(reply["result"]?["bootstrapToken"]?.stringValue, context())
            let base = url.replacingOccurrences(of: "ws://", with: "http://")
            let peer = try InteropPython.start("watch_peer.py", [base, token])
            do {
                let waiting = try #require(await peer.object(timeout: .seconds(60), "step", "waiting_invoke"), context(peer))
                let nodeId = try #require(waiting["nodeId"]?.stringValue)
                try serve.send("invoke \(nodeId) device.info")
                _ = try #require(await peer.object(timeout: .seconds(60), "step", "waiting_timeout"), context(peer))
                let cursor = serve.objects.count
                try serve.send("advance 20")
                _ = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "advance" }, context(peer))
                try peer.send("advanced")
                let checks = ["challenge", "challenge_method", "connect_canvas_refused", "connect_schema", "connect_two_credentials",
                              "connect_skew", "connect_unknown_nonce", "connect_bad_signature", "connect_bootstrap", "connect_replay",
                              "bootstrap_single_use", "poll_unknown_session", "poll_method", "poll_invoke", "result_accepted",
                              "result_ignored", "result_invalid", "poll_superseded", "poll_timeout", "disconnect",
                              "poll_after_disconnect", "connect_device_token", "unknown_route"]
                for check in checks {
                    let line = try #require(await peer.object(timeout: .seconds(60), "step", check), context(peer))
                    #expect(line["ok"] == true, "\(check): \(line.jsonString)")
                }
                let done = try #require(await peer.object(timeout: .seconds(60), "step", "done"), context(peer))
                #expect(done["failures"] == 0, context(peer))
                #expect(await peer.waitForExit(timeout: .seconds(30)) == 0, context(peer))
                await peer.kill()
            } catch {
                await peer.kill()
                throw error
            }
        }
    }
}
