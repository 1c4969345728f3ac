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
        try await ConsoleDrivenPeer.run("chat_history_peer.py", checks: Self.checks, consoleSteps: 3, peerTimeout: 240,
                                        lineTimeout: .seconds(120))
    }
}
