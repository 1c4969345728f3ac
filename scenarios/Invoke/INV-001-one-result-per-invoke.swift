import Conformance
import GatewayProtocol
import MockGateway

let inv001 = Scenario(
    "INV-001", .must,
    title: "every invoke gets exactly one result with its id and the client's nodeId",
    requirement: "Every node.invoke.request gets exactly one node.invoke.result with the same id and the client's own nodeId.",
    source: "docs/protocol.md §6.3-6.4",
    discussion: """
        Pairs the client automatically, then invokes a harmless command the client declares \
        (device.info, device.status, camera.list, debug.counter, or one named with --probe-command) and, when declared, one that fails \
        (system.notify without a title or body); unsupported for a client that declares none of \
        them. Each invoke must be answered by \
        a node.invoke.result carrying the request's id and the client's node id (its device id), \
        which the Gateway matches to the invoke; no second result for either id may follow. \
        The absence is proved, not guessed: a closing invoke of the probe command follows on the \
        same connection, and once its result is in (the Gateway read every frame the client sent \
        before it), no second result for an earlier id may be in the log, counting from just \
        after each first result (a duplicate sent back to back with it is seen too); 150 ms more \
        catch a duplicate sent later still.
        """,
    tags: ["invoke"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let invokes = try await run.probeAndFailingInvokes()
    let probe = invokes[0].command
    let nodeId = try await run.nodeId()
    var answered: [(id: String, cursor: EventCursor)] = []
    for (command, _) in invokes {
        let start = run.mark()
        async let outcome = run.gateway.invoke(nodeId: nodeId, command: command, params: run.probeParams(for: command), wait: run.stepTimeout)
        let id = try await run.waitForEvent(.invokeSent(command), from: start)
        let ((resultNodeId, matched), afterResult) = try await run.waitForMatch(
            "a node.invoke.result for \(command) (id \(id))", from: start
        ) { event in
            if case .invokeResult(let resultId, let resultNodeId, _, let matched, _) = event, resultId == id {
                (resultNodeId, matched)
            } else {
                nil
            }
        }
        try run.expectEqual(resultNodeId, nodeId, "the result of \(command) carries the client's own nodeId")
        try run.expect(matched, "the Gateway matches the result of \(command) to its invoke",
                       expected: "a result the Gateway accepts for invoke \(id)", actual: "a result the Gateway ignored")
        // From just after the matched result: a duplicate sent back to back with it may already
        // be in the log, and must be seen.
        answered.append((id, afterResult))
        _ = await outcome
    }
    // A closing round trip on the same connection: once its result is in, the Gateway has read
    // every frame the client sent before it read this invoke, so a duplicate sent together with
    // (or soon after) an earlier result is in the log whatever the timing of the two frames.
    let closing = await run.mark { await run.invokeProbe(probe, nodeId: nodeId) }
    let closingId = try await run.waitForEvent(EventMatcher.invokeSent(probe).named("the closing node.invoke.request for \(probe)"),
                                               from: closing)
    let afterClosing = try await run.waitForMatch(
        EventMatcher.invokeResult(id: closingId).named("the node.invoke.result of the closing \(probe) invoke (id \(closingId))"),
        from: closing
    ).next
    for (id, cursor) in answered {
        try run.expectNoMatch(.invokeResult(id: id), from: cursor, "the client sent a second node.invoke.result for invoke \(id)",
                              expected: "one node.invoke.result for invoke \(id), none before the closing invoke's result")
    }
    // Anything later still counts (a client that sends its duplicate after a delay).
    let ids = Set(answered.map(\.id))
    try await run.expectNoEvent(EventMatcher.invokeResult().filter { ids.contains($0.id) }.named("second node.invoke.result"),
                                within: .milliseconds(150), from: afterClosing)
}
