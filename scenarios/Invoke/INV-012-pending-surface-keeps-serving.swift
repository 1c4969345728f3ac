import Conformance
import GatewayProtocol
import MockGateway

let inv012 = Scenario(
    "INV-012", .should,
    title: "a node whose widened surface waits for approval keeps serving its approved commands and stays connected",
    requirement: "A node whose declared command surface is wider than the one an operator approved is admitted with the approved commands in effect while the widening waits for approval; it keeps serving those commands on the same connection and does not reconnect or declare again because its other commands are not used.",
    source: "docs/protocol.md §6.7",
    discussion: """
        Pairs the client automatically and reads its first node connect. The scenario needs a \
        probe command (device.info, device.status, camera.list, debug.counter, or one named with \
        --probe-command) and at least one other declared command the Gateway's allowlist admits \
        for the node; otherwise it is unsupported. The Gateway's approved surface for the node is \
        then set to the probe command alone (Gateway.setApprovedNodeCommands), and the node \
        connection is reset without a close frame: the client's ordinary reconnect now declares \
        a widened surface, which the Gateway admits with only the probe command in effect and \
        holds in a node pairing request (the precondition). On that connection an invoke of the \
        probe command must be answered ok, and over the following 150 s of the run's time \
        (virtual in a simulated run) the client must not connect its node again. \
        What the node cannot observe, and so is not asked of it: upstream sends the node nothing \
        about the waiting request (node.pair.requested and node.pair.resolved go to operators \
        with operator.pairing only), hello-ok carries no effective command list, and an \
        operator's invoke of a withheld command is refused by the Gateway without reaching the \
        node. A reconnect would only repeat the same request, and a loop of them would drop the \
        commands that do work each time.
        """,
    tags: ["invoke", "commands", "reconnect"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let probe = try await run.probeCommand()
    let declared = try await run.declaredCommands()
    let nodeId = try await run.nodeId()
    let session = try await run.nodeSession(deviceId: nodeId, from: .start)
    // Approve the probe command alone: the client's ordinary declaration becomes a widened one.
    await run.gateway.setApprovedNodeCommands(nodeId: nodeId, commands: [probe])
    let cursor = try await run.resetAndReconnect(session).cursor
    let widened = try await run.nodeSession(deviceId: nodeId, "the node's session after the reset", from: cursor)
    let pending = await run.gateway.pendingNodeSurfaceRequests().filter { $0.nodeId == nodeId }
    guard let request = pending.first else {
        try run.unsupported("the node declares no allowlisted command besides \(probe) (declared: \(declared.joined(separator: ", "))), so nothing widens")
    }
    run.note("node pairing request \(request.requestId) waits for [\(request.commands.joined(separator: ", "))]")

    let quiet = run.mark()
    let outcome = await run.gateway.invoke(nodeId: nodeId, command: probe, params: run.probeParams(for: probe), wait: run.stepTimeout)
    let served: Bool = if case .result(let result) = outcome { result.ok } else { false }
    try run.expect(served, "the node serves its approved command \(probe) while the widening waits",
                   expected: "an ok result for \(probe)", actual: "\(outcome)")
    try await run.expectNoEvent(within: .seconds(150), "another node connect while the widening waits", from: quiet) { event in
        guard let attempt = ConnectAttempt(event) else { return false }
        return attempt.role == GatewayRole.node.rawValue && attempt.deviceId == nodeId
    }
    let still = await run.gateway.connectedNodes().first { $0.nodeId == nodeId }?.connectionId
    try run.expectEqual(still, widened.connectionId, "the node is still on the connection it made after the reset")
}
