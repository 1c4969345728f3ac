import Conformance
import GatewayProtocol
import MockGateway

let inv008 = Scenario(
    "INV-008", .must,
    title: "a result for an invoke of a previous socket is not sent on the new socket",
    requirement: "When the socket that carried a node.invoke.request is gone, the client drops that invoke's result instead of sending it on a newer socket.",
    source: "docs/protocol.md §6.1, §6.3",
    discussion: """
        Pairs the client automatically and invokes the test command debug.slow (answers after \
        durationMs; the scenario is unsupported for a client that does not declare it). While it \
        runs, the client is disconnected (disconnect) and reconnected (connect); then the slow \
        command is allowed to finish. No node.invoke.result for the old invoke may arrive on the \
        new socket. A later invoke on the new socket proves the client is answering there.
        """,
    tags: ["invoke", "reconnect"],
    needs: [.disconnect, .connect],
    profiles: .all,
    options: Scenario.Options(needsCommands: [["debug.slow"], ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.requireDeclared("debug.slow")
    let probe = try await run.probeCommand()
    let node = try await run.waitForEvent(.nodeConnected())
    let (nodeId, firstSocket) = (node.nodeId, node.connectionId)
    let slowMs = 3_000
    let start = run.mark()
    async let stale = run.gateway.invoke(nodeId: nodeId, command: "debug.slow", params: ["durationMs": .int(Int64(slowMs))],
                                         timeoutMs: 60_000, wait: run.stepTimeout)
    let staleId = try await run.waitForEvent(.invokeSent("debug.slow"), from: start)
    // A quick invoke behind it on the same socket: once it is answered, the slow one is running.
    await run.invokeProbe(probe, nodeId: nodeId)

    let beforeDisconnect = run.mark()
    try await run.disconnect(until: .nodeDisconnected(firstSocket))
    _ = await stale
    try await run.client.stimulate(.connect)
    try await run.waitForEvent(.nodeConnected(nodeId).filter { $0.connectionId != firstSocket }.named("the node session on a new socket"),
                               from: beforeDisconnect)

    // Let the old invoke's command finish on the client (nothing on the wire shows it).
    await run.elapse(.milliseconds(Int64(slowMs + 1_000)))
    try await run.invokeForResult(probe, nodeId: nodeId, params: run.probeParams(for: probe), "an invoke on the new socket", expected: "a result for \(probe)")
    try await run.expectNoEvent(.invokeResult(id: staleId).filter { $0.connectionId != firstSocket }
        .named("node.invoke.result for the old socket's invoke \(staleId)"), within: .milliseconds(100), from: beforeDisconnect)
}
