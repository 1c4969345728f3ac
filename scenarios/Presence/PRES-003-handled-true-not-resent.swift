import Conformance
import GatewayProtocol
import MockGateway

let pres003 = Scenario(
    "PRES-003", .should,
    title: "after handled:true the beacon is not resent within the minimum interval",
    requirement: "After a node.presence.alive reply with handled:true (persisted or throttled) the client does not send another beacon on wakes within its minimum interval (10 minutes in the official apps).",
    source: "docs/protocol.md §6.6",
    discussion: """
        Current profile (structured node.event replies). Pairs the client automatically and \
        wakes it in the background (silent_push): the beacon is answered handled:true, \
        persisted. Two minutes later (a few seconds with a real clock) it is woken again \
        (bg_app_refresh): no beacon may follow.
        """,
    tags: ["presence", "background"],
    needs: [.backgroundWake],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.nodeSession()
    // Time between wakes: two minutes of virtual time; with a real clock a few seconds, which is
    // just as far inside the minimum interval and keeps the run short.
    let gap: Duration = run.isSimulated ? .seconds(120) : .seconds(2)
    let start = run.mark()
    try await run.client.reply(to: .backgroundWake(trigger: "silent_push"))
    let answer = try await run.waitForEvent(.presenceAnswered, from: start)
    try run.expect(answer.handled, "the first beacon is recorded (precondition)", expected: "handled:true",
                   actual: "handled:false \(answer.reason)")

    await run.elapse(gap)
    let second = run.mark()
    try await run.client.reply(to: .backgroundWake(trigger: "bg_app_refresh"))
    try await run.expectNoEvent(.nodeEvent(.presenceAlive).named("node.presence.alive on a wake soon after a recorded beacon"),
                                within: .milliseconds(200), from: second)
}
