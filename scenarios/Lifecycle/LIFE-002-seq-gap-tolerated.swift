import Conformance
import GatewayProtocol
import MockGateway

let life002 = Scenario(
    "LIFE-002", .should,
    title: "a gap in event seq does not end the session",
    requirement: "A gap in event seq is tolerated: the client keeps its session (it may resynchronise, but does not disconnect).",
    source: "docs/protocol.md §2.5",
    discussion: "Pairs the client automatically, sends a tick, skips 5 sequence numbers and sends another tick, so the client sees seq jump. Then it invokes a read-only probe command the client declares (device.info, device.status, camera.list, debug.counter, or one named with --probe-command): the invoke must go to the same connection and be answered.",
    tags: ["lifecycle"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let gateway = run.gateway
    let (probe, session) = try await run.probeAndNodeSession()
    await gateway.sendEvent("tick", payload: ["ts": .int(gateway.clock.nowMs)], to: session.connectionId, sequenced: true)
    await gateway.skipSequenceNumbers(5)
    await gateway.sendEvent("tick", payload: ["ts": .int(gateway.clock.nowMs)], to: session.connectionId, sequenced: true)
    try await run.expectProbeAnswers(probe, on: session, "after the seq gap")
}
