import Conformance
import GatewayProtocol
import MockGateway

let outbox006 = Scenario(
    "OUTBOX-006", .must,
    title: "an input another run consumed is retired on its receipt, not resent",
    requirement: "While the agent is busy, accepted sends wait as pending inputs; when the run ends the Gateway may fold several of them into one run, whose single user row names only the first send. The client asks chat.history for inputReceipts of its open messages and retires every input whose receipt says consumed, without sending any of them again.",
    source: "protocol.md \"Sessions\" (chat.history inputRunIds, inputReceipts, pendingInputs); docs/platforms/ios.md (the outbox retires a send only when the Gateway shows it); docs/protocol.md §8.2, §8.4",
    discussion: """
        Pairs the client, then the scripted agent starts a run that holds later sends queued. The \
        user writes two messages; both are acknowledged and stay in the outbox (history does not \
        hold them yet). The client goes offline, the run ends and the agent collects both inputs \
        into one run (one user row with the first message's key; both receipts consumed by that \
        row). After go-online the outbox must be empty and the Gateway must hold the collected \
        row once, with no second chat.send of either message.
        """,
    tags: ["chat", "outbox", "operator"],
    needs: [.sendMessage, .goOffline, .goOnline, .expectOutbox],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let cursor = run.mark()
    let (first, second) = ("the logs from last night", "and the deploy plan")
    await run.gateway.holdChatRun()
    try await run.stimulate(.sendMessage(first), .sendMessage(second))
    try await run.expectChatView(.expectOutbox([first, second]),
                                 "the client retired a queued input before the Gateway consumed it")

    try await run.client.stimulate(.goOffline)
    await run.gateway.releaseChatRun(collect: true)
    try await run.expectChatView(.expectOutbox([]), after: [.goOnline],
                                 "an input consumed by another run (receipt consumed) is still in the outbox")
    try run.expectChatSends(2, carrying: [first, second], from: cursor, "how many chat.send requests carried the two messages")
    try await run.expectStoredUserTexts(["\(first)\n\(second)"], "the Gateway holds one collected row")
}
