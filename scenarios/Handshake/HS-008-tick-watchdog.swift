import Conformance
import GatewayProtocol
import MockGateway

let hs008 = Scenario(
    "HS-008", .should,
    title: "a Gateway that stops ticking is dropped and reconnected",
    requirement: "When no tick arrives for more than 2x hello-ok.policy.tickIntervalMs, the client drops the socket and reconnects.",
    source: "gateway-protocol.md §2.9, §9.3",
    discussion: "Runs with tickIntervalMs 4000. Pairs the client automatically and lets one tick through: the session must stay up. Then the Gateway stops ticking (the socket stays open and silent); within 2x the interval plus a margin the client must close that socket, and it must then open a new node session.",
    tags: ["lifecycle", "liveness"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { configuration in
        configuration.autoApproval = .auto
        configuration.tickIntervalMs = 4_000
    })
) { run in
    let tickIntervalMs = run.gateway.configuration.tickIntervalMs
    let connectionId = try await run.waitForEvent("the client's node session") { event -> String? in
        if case .sessionOpened(let session) = event, session.role == GatewayRole.node.rawValue { session.connectionId } else { nil }
    }
    // One tick reaches the client before the silence; the watchdog must count from it.
    let healthy = run.mark()
    await run.elapse(.milliseconds(tickIntervalMs + tickIntervalMs / 4))
    try await run.expectNoEvent(within: .zero, "close of \(connectionId) while ticks were flowing", from: healthy) { event in
        if case .connectionClosed(let id, _, _) = event { id == connectionId } else { false }
    }

    await run.gateway.stopTicks()
    let silent = run.mark()
    let limitMs = 2 * tickIntervalMs + 4_000
    let closed: @Sendable (GatewayEvent) -> Bool = { event in
        if case .connectionClosed(let id, _, _) = event { id == connectionId } else { false }
    }
    // Client time passes in small steps until the socket is closed, at most 2x the interval plus
    // 4 s; then the client gets real time to finish what the last step started.
    for _ in 0..<(limitMs / 500) where !run.gateway.events.elements(from: silent.position).contains(where: closed) {
        await run.elapse(.milliseconds(500))
    }
    try await run.waitForEvent("the client closing \(connectionId) within \(limitMs) ms without a tick", from: silent, where: closed)

    // The reconnect may already have happened while the close was on its way.
    let reconnected: @Sendable (GatewayEvent) -> Bool = { event in
        if case .sessionOpened(let session) = event {
            session.role == GatewayRole.node.rawValue && session.connectionId != connectionId
        } else {
            false
        }
    }
    for _ in 0..<60 where !run.gateway.events.elements(from: silent.position).contains(where: reconnected) {
        await run.elapse(.milliseconds(500))
    }
    try await run.waitForEvent("a new node session within 30 s after the silent socket was dropped", from: silent, where: reconnected)
}
