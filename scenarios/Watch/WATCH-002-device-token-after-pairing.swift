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
    try run.expectEqual(first.credential ?? "none", "bootstrapToken", "the credential of the pairing connect")
    try run.expectEqual(first.status, 200, "the status of the pairing connect")
    let expiry = run.mark()
    await run.advance(by: .seconds(80))
    let again = try await run.waitForEvent(.watchAnswer(WatchDirectRules.connectPath).named("the Watch's connect after its session expired"),
                                           within: .seconds(12), from: expiry)
    try run.expectEqual(again.credential ?? "none", "deviceToken", "the credential of the connect after pairing")
    try run.expectEqual(again.status, 200, "the status of the connect with the device token")
    let relaunch = run.mark()
    try await run.client.restart()
    let relaunched = try await run.waitForEvent(.watchAnswer(WatchDirectRules.connectPath).named("the Watch's connect after the relaunch"),
                                                from: relaunch)
    try run.expectEqual(relaunched.credential ?? "none", "deviceToken", "the credential of the connect after the relaunch")
    try run.expectEqual(relaunched.status, 200, "the status of the connect after the relaunch")
}
