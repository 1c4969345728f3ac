import Conformance
import GatewayProtocol
import MockGateway

let cache001 = Scenario(
    "CACHE-001", .must,
    title: "a cold start shows the last known transcript at once, then refreshes it",
    requirement: "The client keeps a read-only cache of recent transcripts per Gateway: a cold start without network shows the last known transcript at once, and once the Gateway answers the transcript is refreshed from chat.history.",
    source: "docs/platforms/ios.md, docs/platforms/android.md (offline transcript cache); protocol.md \"Sessions\" (chat.history); docs/protocol.md §8.2, §8.4",
    discussion: """
        Pairs the client and has the user write a message, which the scripted agent echoes; the \
        chat view must show both rows. The app is killed and launched again without network \
        (cold-start offline): it must show the same two rows from its cache. The agent then posts \
        a message while the client is away; after go-online the chat view must show all three rows.
        """,
    tags: ["chat", "cache", "operator", "restart"],
    needs: [.sendMessage, .coldStart, .goOnline, .expectTranscript],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let known = try await run.expectConversationShown(afterSending: "what changed overnight?")
    try await run.expectChatView(.expectTranscript(known), after: [.coldStart(offline: true)],
                                 "after a cold start without network the client shows no cached transcript")

    let news = "two deploys finished while you were away"
    await run.gateway.postAssistantMessage(news)
    try await run.expectChatView(.expectTranscript(known + [news]), after: [.goOnline],
                                 "once the Gateway answers, the client does not refresh the cached transcript")
}
