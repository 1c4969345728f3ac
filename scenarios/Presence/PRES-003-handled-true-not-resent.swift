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
    let answer = try await run.reply(to: .backgroundWake(trigger: "silent_push"), until: .presenceAnswered)
    try run.expect(answer.handled, "the first beacon is recorded (precondition)", expected: "handled:true",
                   actual: "handled:false \(answer.reason)")

    await run.elapse(run.wakeGap)
    try await run.reply(to: .backgroundWake(trigger: "bg_app_refresh"),
                        thenNo: .nodeEvent(.presenceAlive).named("node.presence.alive on a wake soon after a recorded beacon"),
                        within: .milliseconds(200))
}
