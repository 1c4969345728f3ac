import Foundation
import GatewayProtocol
import MockGateway
import Testing
import TestSupport

/// The chat surface through the real processes: `harness serve`'s console arming chat faults for
/// an operator connected over a real socket, and the reference client as an adapter process
/// (`harness reference-node`) through the OUTBOX and CACHE scenarios.
@Suite("harness serve and run: chat over the wire")
struct ServeChatFlowTests {
    /// A word for `/bin/sh -c`, quoted so that paths with spaces survive.
    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Connects an operator with chat scopes, approving its pairing from the console.
    private static func chatOperator(_ serve: LineProcess, url: String, identity: DeviceIdentity) async throws -> WireClient {
        let scopes = ["operator.read", "operator.write"]
        let first = try await WireClient.open(url, identity: identity)
        let refused = try await first.connect(first.operatorParams(scopes: scopes))
        #expect(refused.error?.detailCode == "PAIRING_REQUIRED")
        await first.close()
        let cursor = serve.objects.count
        try serve.send("approve latest")
        _ = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "approve" }, "\(serve.transcript)")
        let client = try await WireClient.open(url, identity: identity)
        let hello = try await client.connect(client.operatorParams(scopes: scopes))
        #expect(hello.ok, "\(hello)")
        return client
    }

    @Test func consoleChatFaultsReachAnOperatorOverARealSocket() async throws {
        try await ServeProcess.withServe { serve, url in
            let identity = try DeviceIdentity(seed: Data(repeating: 0x6C, count: 32))
            let client = try await Self.chatOperator(serve, url: url, identity: identity)

            var cursor = serve.objects.count
            try serve.send("chat-drop-ack after-apply")
            let armed = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "chat-drop-ack" },
                                     "\(serve.transcript)")
            #expect(armed["result"]?["summary"]?.stringValue?.contains("ack is dropped") == true)
            try await client.sendRequest("chat.send", params: ["sessionKey": "main", "message": "are you there?", "idempotencyKey": "wire-1"])
            let (frames, _) = try await client.framesUntilClosed()
            #expect(!frames.contains { if case .response = $0 { true } else { false } }, "the ack never arrives")

            cursor = serve.objects.count
            try serve.send("chat-history")
            let history = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "chat-history" },
                                       "\(serve.transcript)")
            let texts = history["result"]?["messages"]?.arrayValue?.compactMap { $0["content"]?.arrayValue?.first?["text"]?.stringValue }
            #expect(texts == ["are you there?", "echo: are you there?"], "the message was applied although its ack was lost")

            let again = try await WireClient.open(url, identity: identity)
            let hello = try await again.connect(again.operatorParams(scopes: ["operator.read", "operator.write"]))
            #expect(hello.ok)
            // session.message reaches subscribers only.
            #expect(try await again.request("sessions.messages.subscribe", params: ["key": "main"]).ok)
            cursor = serve.objects.count
            try serve.send(#"chat-post "from the console""#)
            _ = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "chat-post" })
            let live = try await again.event("session.message")
            #expect(live.payload?["message"]?["role"] == "assistant")
            let replay = try await again.request("chat.send", params: ["sessionKey": "main", "message": "are you there?", "idempotencyKey": "wire-1"])
            #expect(replay.payload == ["runId": "wire-1", "status": "started"], "the same key answers the first ack")
            await again.close()
        }
    }

    @Test func theReferenceClientProcessPassesTheChatScenariosAndAMutantFails() async throws {
        let harness = try ServeProcess.executable()
        let adapter = "\(Self.shellQuoted(harness.path)) reference-node"
        let correct = try LineProcess(name: "harness run", executable: harness, arguments: [
            "run", "--node-command", adapter, "--filter", "OUTBOX-00[1-3],CACHE-001", "--profile", "current", "--jobs", "2", "--quiet",
        ])
        let status = await correct.waitForExit(timeout: .seconds(300))
        await correct.kill()
        #expect(status == 0, "the reference client process fails a chat scenario\n\(correct.transcript)")

        let mutant = try LineProcess(name: "harness run", executable: harness, arguments: [
            "run", "--node-command", "\(adapter) --mutant resend-ambiguous-new-key", "--filter", "OUTBOX-002",
            "--profile", "current", "--quiet",
        ])
        let mutantStatus = await mutant.waitForExit(timeout: .seconds(300))
        await mutant.kill()
        #expect(mutantStatus == 1, "OUTBOX-002 does not catch resend-ambiguous-new-key over a real socket\n\(mutant.transcript)")
    }
}
