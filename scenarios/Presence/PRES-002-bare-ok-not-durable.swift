import Conformance
import GatewayProtocol
import MockGateway

let pres002 = Scenario(
    "PRES-002", .must,
    title: "a bare {ok:true} beacon reply is not durable: the next wake sends again",
    requirement: "Against an older Gateway that answers node.presence.alive with a bare {\"ok\":true}, the client does not count the beacon as recorded: on the next background wake it sends the beacon again.",
    source: "docs/protocol.md §6.5-6.6",
    discussion: """
        Legacy profile (node.event answered with a bare {ok:true}). Pairs the client \
        automatically, wakes it in the background (bg_app_refresh) and waits for the beacon on \
        its node session (answered with a bare {ok:true}); two minutes later (well inside any \
        minimum interval for recorded beacons) wakes it again: a second node.presence.alive must \
        follow. With a real clock the gap is a few seconds.
        """,
    tags: ["presence", "background"],
    needs: [.backgroundWake],
    profiles: .legacy,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.nodeSession()
    // Time between wakes: two minutes of virtual time; with a real clock a few seconds, which is
    // just as far inside the minimum interval and keeps the run short.
    let gap: Duration = run.isSimulated ? .seconds(120) : .seconds(2)
    for wake in 1...2 {
        let start = run.mark()
        try await run.client.reply(to: .backgroundWake(trigger: "bg_app_refresh"))
        try await run.waitForEvent(.nodeEvent(.presenceAlive).named("node.presence.alive after wake \(wake)"), from: start)
        if wake == 1 { await run.elapse(gap) }
    }
}
