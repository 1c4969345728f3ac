import Foundation
import GatewayProtocol
import Testing

/// The chat history contract of `harness serve` as an independent Python client sees it on the
/// wire (`Tests/Interop/chat_history_peer.py`; docs/protocol.md §8.2, §8.5), with the scripted
/// agent driven from the console (`chat-hold`, `chat-release --collect`).
///
/// Breaks tried (each failed a check here): accepting `deltaCursor` as a request member, a
/// top-level `idempotencyKey` on user rows, receipts left out of the answer, a collected input
/// left `pending`, a compaction that keeps old cursors valid.
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct ServeChatHistoryInteropTests {
    static let checks = ["delta-cursor-refused", "envelope-key", "cursor-delta", "cursor-of-another-session", "pending-inputs",
                         "consumed-receipts", "interrupt-ack", "compaction-resets-cursor", "message-get", "startup", "patch",
                         "reset", "run-id-bounds"]

    @Test
    func pythonChecksOfTheChatHistoryContractPass() async throws {
        try await ServeProcess.withServe(["--pairing", "auto"]) { serve, url in
            let peer = try InteropPython.start("chat_history_peer.py", [url, "--timeout", "240"])
            defer { Task { await peer.kill() } }
            func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
            var consoleSteps = 0
            var seen = 0
            for check in Self.checks {
                // Console steps come before the check that needs them, in order.
                while true {
                    let found = try #require(await peer.objects.first(from: seen, timeout: .seconds(120)) { object in
                        object["check"] != nil || object["step"] == "console" || object["step"] == "error"
                    }, context())
                    let line = found.element
                    seen = found.position + 1
                    if line["step"] == "console", let command = line["command"]?.stringValue {
                        let cursor = serve.objects.count
                        try serve.send(command)
                        let name = String(command.split(separator: " ").first ?? "")
                        _ = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"]?.stringValue == name },
                                         context())
                        try peer.send("go")
                        consoleSteps += 1
                        continue
                    }
                    #expect(line["check"]?.stringValue == check, context())
                    #expect(line["ok"] == true, "\(check): \(line["detail"]?.jsonString ?? "")")
                    break
                }
            }
            #expect(consoleSteps == 3)
            _ = try #require(await peer.object("step", "done"), context())
            #expect(await peer.waitForExit(timeout: .seconds(30)) == 0, context())
        }
    }
}
