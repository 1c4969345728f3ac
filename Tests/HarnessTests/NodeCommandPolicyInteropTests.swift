import Foundation
import GatewayProtocol
import Testing

/// The node command policy as an independent client written in Python sees it on the wire
/// (`Tests/Interop/gateway_policy_peer.py`; docs/protocol.md §6.7): an operator's `node.invoke` of
/// a dangerous, an undeclared, a denied and a not-declared command is refused with upstream's
/// message and `details {reason, command}` and never reaches the node; `system.execApprovals.*`
/// is refused even for an unknown node; the console's `invoke` refuses too and `invoke --force`
/// sends anyway. Break tried: the dispatch check removed from `nodeInvoke` (the peer's first
/// check waits for a refusal that never comes and the test fails).
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct NodeCommandPolicyInteropTests {
    @Test func pythonPeerSeesUpstreamsRefusalsAndTheConsoleObeysThePolicy() async throws {
        try await ServeProcess.withServe(["--pairing", "auto", "--node-command-deny", "location.get"]) { serve, url in
            try await InteropPython.withPeer("gateway_policy_peer.py", [url, "--timeout", "60"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                let checks = ["dangerous-declared-camera-snap", "undeclared-sms-send", "denied-location-get",
                              "allowlisted-not-declared", "exec-approvals-connected", "exec-approvals-unknown-node",
                              "nothing-delivered", "declared-allowlisted-delivered"]
                try await peer.expectChecksPass(checks, context: context)
                let ready = try #require(await peer.object("step", "console_ready"), context())
                let nodeId = try #require(ready["nodeId"]?.stringValue)

                let cursor = serve.objects.count
                try serve.send("invoke \(nodeId) camera.snap")
                let refused = try #require(await serve.object(after: cursor, "event", "command.error") { $0["command"] == "invoke" },
                                           context())
                let message = refused["message"]?.stringValue ?? ""
                #expect(message.contains("node command not allowed: \"camera.snap\""), "\(message)")
                #expect(message.contains("command not allowlisted"), "\(message)")

                try serve.send("invoke --force \(nodeId) camera.snap")
                let forced = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "invoke" },
                                          context())
                #expect(forced["result"]?["ok"] == true)
                let step = try #require(await peer.object("step", "forced_invoke"), context())
                #expect(step["command"] == "camera.snap")
                try await peer.expectDoneAndExit(context: context)
            }
        }
    }
}
