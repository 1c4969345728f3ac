import Conformance
import GatewayProtocol
import MockGateway

let inv013 = Scenario(
    "INV-013", .must,
    title: "an operator does not send an invoke again by itself after ROUTE_CHANGED",
    requirement: "When the Gateway answers an operator's node.invoke with UNAVAILABLE, details.code ROUTE_CHANGED (the node's connection changed before dispatch), the operator client does not send the invoke again by itself, although the refusal says retryable:true: upstream's operator code takes only NOT_CONNECTED with nodeCommandDispatched:false as safe to send again (once the node is back) and leaves every other failure to the user.",
    source: "docs/protocol.md §6.9.2",
    discussion: """
        For operator clients that run commands on nodes (the invoke-node stimulus); the rule is \
        that of upstream's agent runtime (its node exec classifies ROUTE_CHANGED as \
        outcome-unknown: "Do not rerun it automatically") and of its TypeScript Gateway client \
        (which hands every refusal to its caller without resending). Clients without the \
        stimulus (the apps, which were not found invoking other nodes) are unsupported. \
        Pairs the client, registers it for relay push and disconnects it; arms the fault that \
        holds the next woken dispatch for 5 s (Gateway.holdNextWakeDispatch). Asks the client \
        to invoke the probe command on its own node (timeoutMs 30 s): the node is away, so the \
        Gateway sends its silent wake, which is handed to the client; the node reconnects, and \
        during the held dispatch the Gateway closes that node connection, so the invoke is \
        answered ROUTE_CHANGED. Over the next 20 s of the run's time the client's operator must \
        send no further node.invoke.
        """,
    tags: ["invoke", "operator", "push"],
    needs: [.pushRegister, .backgroundWake, .disconnect, .invokeNode],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let probe = try await run.probeCommand()
    let nodeId = try await run.registerRelayPushAndDisconnect("the Gateway keeps the push registration (precondition)")
    await run.gateway.holdNextWakeDispatch(for: .seconds(5))

    let start = run.mark()
    let client = run.client
    async let reply = client.reply(to: .invokeNode(nodeId: nodeId, command: probe, timeoutMs: 30_000))
    let invoke = try await run.waitForEvent(EventMatcher.request(.nodeInvoke).named("the client's operator node.invoke"), from: start)
    try await run.deliverGatewayPush(nodeId: nodeId, pushType: "background", from: start)
    let woken = try await run.nodeSession(deviceId: nodeId, "the node's session after the silent wake", from: start)
    await run.gateway.close(connectionId: woken.connectionId, code: 1012, reason: "connection changed before dispatch")
    let answer = try await run.waitForEvent(EventMatcher.response(to: invoke).named("the Gateway's answer to the node.invoke"), from: start)
    try run.expect(answer.error?.details?["code"]?.stringValue == "ROUTE_CHANGED",
                   "the Gateway answered the invoke ROUTE_CHANGED (precondition)",
                   expected: "UNAVAILABLE, details.code ROUTE_CHANGED", actual: answer.error.map { "\($0.code) \($0.message)" } ?? "ok")
    let answered = run.mark()
    await run.elapse(.seconds(20))
    run.note("the client's reply to invoke-node: \((try? await reply).map { "\($0)" } ?? "none")")
    let resent = run.matches(EventMatcher.request(.nodeInvoke), from: answered)
    try run.expect(resent.isEmpty, "the client did not send the invoke again after ROUTE_CHANGED",
                   expected: "no node.invoke", actual: "\(resent.count) node.invoke request(s) within 20 s")
}
