import Conformance
import GatewayProtocol
import MockGateway

let outbox007 = Scenario(
    "OUTBOX-007", .must,
    title: "an ambiguous send the Gateway lists as a pending input is not resent",
    requirement: "When the ack of a chat.send was lost, the client reads chat.history with the message's key in inputRunIds: a pending receipt, or the key in pendingInputs, means the Gateway accepted it and it waits for a turn. The client keeps it as accepted and never sends it again; it retires it once history holds it.",
    source: "protocol.md \"Sessions\" (pendingInputs, inputReceipts); docs/platforms/ios.md, docs/platforms/android.md (never replay an ambiguous send blindly); docs/protocol.md §8.2, §8.4",
    discussion: """
        Pairs the client; the scripted agent starts a run that holds later sends queued, and the \
        Gateway is armed to accept the next chat.send but drop its ack and cut the connection. \
        The user writes one message. After the client reconnected and read chat.history, it is \
        taken online once more; exactly one chat.send of the message may have arrived, and the \
        outbox must still show it. Then the run ends (the input gets its turn), the client goes \
        offline and online, and the outbox must be empty with the message stored once.
        """,
    tags: ["chat", "outbox", "operator", "faults"],
    needs: [.sendMessage, .goOffline, .goOnline, .expectOutbox],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let first = try await run.chatReady()
    let text = "rotate the staging keys"
    await run.gateway.holdChatRun()
    let cursor = try await run.sendWithLostAck(text, after: first)
    try run.expectChatSends(1, carrying: [text], from: cursor, "how many chat.send requests carried a message the Gateway lists as a pending input")
    try await run.expectChatView(.expectOutbox([text]), "the client retired a message that history does not hold yet")

    await run.gateway.releaseChatRun()
    try await run.expectChatView(.expectOutbox([]), after: [.goOffline, .goOnline], "history holds the message but the client still shows it in its outbox")
    try await run.expectEqual(run.storedUserTexts().filter { $0 == text }.count, 1, "how many times the Gateway stored the message")
}
