import Conformance
import GatewayProtocol
import MockGateway

let cache003 = Scenario(
    "CACHE-003", .must,
    title: "a cursor reset makes the cache drop what it merged and read a fresh tail",
    requirement: "The client catches up a cached transcript by passing the tail's deltaCursor back as cursor. When the Gateway answers {kind:\"reset\"} (the session was compacted or reset, the cursor is stale or belongs elsewhere, or too much happened), the client drops what it merged and shows a fresh chat.history tail.",
    source: "protocol.md \"Sessions\" (chat.history cursor, kind delta / reset); docs/platforms/ios.md (transcript cache); docs/protocol.md §8.2, §8.4",
    discussion: """
        Pairs the client and has the user write a message, which the scripted agent echoes; the \
        chat view shows both rows and the client holds a cursor. The client goes offline; the \
        session is compacted to its newest row and the agent posts a message. After go-online the \
        client's cursor answers reset, and the chat view must show the fresh tail: the echo and \
        the new message, not the compacted-away user row.
        """,
    tags: ["chat", "cache", "operator"],
    needs: [.sendMessage, .goOffline, .goOnline, .expectTranscript],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let text = "summarise the incident"
    try await run.expectConversationShown(afterSending: text)

    try await run.client.stimulate(.goOffline)
    await run.gateway.compactChatSession(keep: 1)
    let news = "the incident summary is ready"
    await run.gateway.postAssistantMessage(news)
    try await run.expectChatView(.expectTranscript(["echo: \(text)", news]), after: [.goOnline],
                                 "after a {kind:\"reset\"} answer the client does not show a fresh tail")
}
