import Conformance
import GatewayProtocol
import MockGateway

let life002 = Scenario(
    "LIFE-002", .should,
    title: "a gap in event seq does not end the session",
    requirement: "A gap in event seq is tolerated: the client keeps its session (it may resynchronise, but does not disconnect).",
    source: "gateway-protocol.md §2.8",
    discussion: "Pairs the client automatically, sends a tick, skips 5 sequence numbers and sends another tick, so the client sees seq jump. Then it invokes a read-only probe command the client declares (device.info, device.status, camera.list, debug.counter, or one named with --probe-command): the invoke must go to the same connection and be answered.",
    tags: ["lifecycle"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let gateway = run.gateway
    let probe = try await run.probeCommand()
    let session = try await run.nodeSession()
    let connectionId = session.connectionId
    guard let nodeId = session.deviceId else { try run.fail("the node session has no device id") }
    await gateway.sendEvent("tick", payload: ["ts": .int(gateway.clock.nowMs)], to: connectionId, sequenced: true)
    await gateway.skipSequenceNumbers(5)
    await gateway.sendEvent("tick", payload: ["ts": .int(gateway.clock.nowMs)], to: connectionId, sequenced: true)

    let start = run.mark()
    async let outcome = gateway.invoke(nodeId: nodeId, command: probe, params: run.probeParams(for: probe), wait: run.stepTimeout)
    let sentOn = try await run.waitForEvent("the node.invoke.request after the seq gap", from: start) { event in
        if case .invokeSent(_, _, _, let id) = event { id } else { nil }
    }
    try run.expectEqual(sentOn, connectionId, "the node is still on the connection that saw the seq gap")
    let result = await outcome
    guard case .result = result else {
        try run.fail("the client did not answer an invoke after a seq gap",
                     expected: "a node.invoke.result on \(connectionId)", actual: "\(result)")
    }
}
