import Conformance
import GatewayProtocol
import MockGateway

let watch002 = Scenario(
    "WATCH-002", .must,
    title: "after pairing, the Watch connects with its device token, never the bootstrap token again",
    requirement: "A Watch pairs with the bootstrap token of a node setup code, keeps the device token the connect returns and deletes the bootstrap token: every later connect, in the same run of the app and after a relaunch, presents auth.deviceToken.",
    source: "docs/protocol.md §13.2, §13.4",
    discussion: """
        Pairs the client as an Apple Watch with a node setup code (watch-pair) and requires its \
        first connect to present the bootstrap token and open a session. Ends the session by \
        letting the Gateway clock jump 80 s (past the 75 s idle timeout); the Watch's next connect \
        must present its device token and be admitted. Then relaunches the client and requires the \
        same of its first connect after the relaunch.
        """,
    tags: ["watch", "tokens", "setup-code"],
    needs: [.watchPair],
    profiles: .current,
    options: Scenario.Options(needsSession: false)
) { run in
    let (first, _) = try await run.watchPair()
    try run.expectWatchConnect(first, credential: "bootstrapToken", "the pairing connect")
    let expiry = await run.mark { await run.advance(by: .seconds(80)) }
    try await run.expectWatchConnect("the Watch's connect after its session expired", credential: "deviceToken", from: expiry,
                                     within: .seconds(12))
    let relaunch = try await run.mark { try await run.client.restart() }
    try await run.expectWatchConnect("the Watch's connect after the relaunch", credential: "deviceToken", from: relaunch)
}
