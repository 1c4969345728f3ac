import Conformance
import GatewayProtocol
import MockGateway

let sess001 = Scenario(
    "SESS-001", .must,
    title: "a session deleted elsewhere leaves the session list",
    requirement: "When sessions.changed says that a session was deleted (reason \"delete\"), the client removes it from its session list instead of showing a session the Gateway no longer has.",
    source: "docs/protocol.md §8.6",
    discussion: """
        The Gateway holds a second session, "research" (the scripted agent posted into it). The \
        client pairs and goes online; its session list must show "main" and "research" (the \
        adapter may wait up to 5 s of client time for its first read). Another device then \
        deletes "research" (sessions.delete; the Gateway sends sessions.changed with reason \
        "delete" to the connections subscribed with sessions.subscribe). The session list must \
        then show only "main" (the adapter may wait up to 5 s of client time for the event).
        """,
    tags: ["sessions", "operator", "events"],
    needs: [.goOnline, .expectSessions],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    await run.gateway.postAssistantMessage("welcome to research", sessionKey: "research")
    try await run.chatReady()
    try await run.expectClientShows(.expectSessions(["main", "research"]), "the client's session list does not show the Gateway's sessions")
    try await run.gateway.deleteChatSession(sessionKey: "research")
    try await run.expectClientShows(.expectSessions(["main"]), "the client kept a session deleted on another device")
}
