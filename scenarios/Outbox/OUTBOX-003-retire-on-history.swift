import Conformance
import GatewayProtocol
import MockGateway

let outbox003 = Scenario(
    "OUTBOX-003", .must,
    title: "a sent message is retired only when history shows it",
    requirement: "An acknowledged chat.send is not proof that the message was stored (the ack comes before the transcript write): the client keeps the message in its outbox until canonical chat.history shows it, and retires it once it does.",
    source: "docs/platforms/ios.md, docs/platforms/android.md (a send is retired only when canonical chat.history shows it); docs/protocol.md §8.2, §8.4",
    discussion: """
        Pairs the client and makes chat.history lag behind: it leaves out the newest two rows until \
        cleared. The user writes a message, which the Gateway acknowledges. The client must still \
        show it as an outbox bubble (expect-outbox). Then history catches up, the client goes \
        offline and online again, and must have retired the bubble; the Gateway must hold the \
        message once.
        """,
    tags: ["chat", "outbox", "operator", "faults"],
    needs: [.sendMessage, .goOffline, .goOnline, .expectOutbox],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let text = "status report, please"
    await run.gateway.lagChatHistory(omitNewest: 2)
    try await run.client.stimulate(.sendMessage(text))
    try await run.expectStoredUserTexts([text], "the Gateway stored and acknowledged the message")
    try await run.expectChatView(.expectOutbox([text]),
                                 "the client retired the message on its ack, before chat.history showed it")

    await run.gateway.lagChatHistory(omitNewest: 0)
    try await run.expectChatView(.expectOutbox([]), after: [.goOffline, .goOnline], "chat.history shows the message but the client still holds it in its outbox")
    try await run.expectStoredUserTexts([text], "the Gateway holds the message once")
}
