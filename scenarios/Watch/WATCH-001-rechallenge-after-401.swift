import Conformance
import GatewayProtocol
import MockGateway

let watch001 = Scenario(
    "WATCH-001", .must,
    title: "after a 401 to its poll (the session expired), the Watch fetches a new challenge and connects again",
    requirement: "When the Gateway answers a Watch's poll 401 because its session ended (75 s without a request), the Watch fetches a new challenge, connects again and polls in the new session instead of giving up.",
    source: "docs/protocol.md §13.3, §13.4",
    discussion: """
        Pairs the client as an Apple Watch with a node setup code (watch-pair) and waits for its \
        first session. While its poll waits, lets the Gateway clock jump 80 s, past the session's \
        75 s idle timeout: the session ends and the waiting poll is answered 401. Within 12 s of \
        client time the Watch must fetch a new challenge, connect again (200, the same node) and \
        poll in the new session.
        """,
    tags: ["watch"],
    needs: [.watchPair],
    profiles: .current,
    options: Scenario.Options(needsSession: false)
) { run in
    let nodeId = try await run.watchSession()
    let cursor = await run.mark { await run.advance(by: .seconds(80)) }
    try await run.waitForEvent(.watchAnswer(WatchDirectRules.pollPath).filter { $0.status == 401 }
        .named("the waiting poll answered 401 (session expired)"), from: cursor)
    try await run.waitForEvent(.watchAnswer(WatchDirectRules.challengePath).filter { $0.status == 200 }
        .named("a new challenge after the 401"), within: .seconds(12), from: cursor)
    let (session, next) = try await run.waitForMatch(.watchSession.named("a new Watch session after the 401"), within: .seconds(12),
                                                      from: cursor)
    try run.expectEqual(session.nodeId ?? "none", nodeId, "the node of the new session")
    try await run.waitForEvent(.watchRequest(WatchDirectRules.pollPath).named("a poll in the new session"), within: .seconds(12), from: next)
}
