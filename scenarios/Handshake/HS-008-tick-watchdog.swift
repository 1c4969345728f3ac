import Conformance
import GatewayProtocol
import MockGateway

let hs008 = Scenario(
    "HS-008", .should,
    title: "a Gateway that stops ticking is dropped and reconnected",
    requirement: "When no tick arrives for more than 2x hello-ok.policy.tickIntervalMs, the client drops the socket and reconnects.",
    source: "docs/protocol.md §11.1-11.2",
    discussion: "Runs with tickIntervalMs 4000. Pairs the client automatically and lets one tick through: the session must stay up. Then the Gateway stops ticking (the socket stays open and silent); within 2x the interval plus a margin the client must close that socket, and it must then open a new node session.",
    tags: ["lifecycle", "liveness"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { configuration in
        configuration.autoApproval = .auto
        configuration.tickIntervalMs = 4_000
    })
) { run in
    let tickIntervalMs = run.gateway.configuration.tickIntervalMs
    let connectionId = try await run.nodeSession().connectionId
    // Ticks flow for more than one interval: the client keeps the socket.
    try await run.expectNoEvent(.closed(connectionId).named("close of \(connectionId) while ticks were flowing"),
                                within: .milliseconds(Int64(tickIntervalMs + tickIntervalMs / 4)), from: run.mark())

    let silent = await run.mark { await run.gateway.stopTicks() }
    let limitMs = 2 * tickIntervalMs + 4_000
    try await run.waitForEvent(.closed(connectionId).named("the client closing \(connectionId) after the ticks stopped"),
                               within: .milliseconds(Int64(limitMs)), from: silent)
    try await run.waitForEvent(.session(.node).filter { $0.connectionId != connectionId }
        .named("a new node session after the silent socket was dropped"), within: .seconds(30), from: silent)
}
