import Conformance
import GatewayProtocol
import MockGateway

let cache002 = Scenario(
    "CACHE-002", .must,
    title: "a reset clears the transcript cache",
    requirement: "Resetting the app (reinstall, or forgetting the Gateway) clears the cached transcripts with the identity: afterwards the chat view shows nothing of the old conversation, even before any Gateway answers.",
    source: "docs/platforms/ios.md, docs/platforms/android.md (the cache is per Gateway and disposable; a reset or forget clears it); docs/protocol.md §8.4",
    discussion: """
        Pairs the client and has the user write a message, which the scripted agent echoes; the \
        chat view must show both rows. The client goes offline and is reset (reset-identity); \
        still offline, the chat view must be empty.
        """,
    tags: ["chat", "cache", "operator", "reinstall"],
    needs: [.sendMessage, .goOffline, .goOnline, .resetIdentity, .expectTranscript],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.chatReady()
    let text = "the private plan"
    try await run.expectConversationShown(afterSending: text)

    try await run.client.stimulate(.goOffline)
    try await run.client.stimulate(.resetIdentity)
    try await run.expectChatView(.expectTranscript([]), "after a reset the client still shows the old transcript")
}
