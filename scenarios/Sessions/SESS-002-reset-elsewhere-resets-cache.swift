import Conformance
import GatewayProtocol
import MockGateway

let sess002 = Scenario(
    "SESS-002", .must,
    title: "a compaction or reset elsewhere resets the transcript cache",
    requirement: "When sessions.changed says that a session was compacted or reset (reason \"compact\", \"reset\" or \"new\"), the client drops the transcript it caches for that session and shows the Gateway's transcript again, not the rows that left it.",
    source: "docs/protocol.md §8.6",
    discussion: """
        Pairs the client and has the user write a message, which the scripted agent echoes; the \
        chat view must show both rows. The session is then compacted elsewhere down to its newest \
        row (the Gateway sends sessions.changed with reason "compact" to the connections \
        subscribed with sessions.subscribe). The chat view must then show only the echo (the \
        adapter may wait up to 5 s of client time for the refresh).
        """,
    tags: ["sessions", "chat", "cache", "operator", "events"],
    needs: [.sendMessage, .goOnline, .expectTranscript],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let text = "draft the plan"
    try await run.expectConversationShown(afterSending: text)

    await run.gateway.compactChatSession(keep: 1)
    try await run.expectChatView(.expectTranscript(["echo: \(text)"]),
                                 "after a compaction on another device the client still shows the rows that left the transcript")
}
