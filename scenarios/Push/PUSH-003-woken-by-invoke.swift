import Conformance
import GatewayProtocol
import MockGateway

let push003 = Scenario(
    "PUSH-003", .must,
    title: "a node woken by an invoke's silent push reconnects and answers the invoke",
    requirement: "When an operator's node.invoke finds the node away, the Gateway's silent push (reason node.invoke) brings the node back before the Gateway gives up (3 s, then a forced push and 12 s more), and the node answers the invoke.",
    source: "docs/protocol.md §6.9.1, §9.3",
    discussion: """
        Pairs the client automatically and registers it for relay push, then disconnects it. An \
        operator invokes device.info on the node (Gateway.operatorInvoke, timeoutMs 30 s): the \
        Gateway sends its silent wake (background, reason node.invoke), which reaches the client \
        as background-wake with the push's payload. The operator's answer must be ok: the client \
        reconnected before the nudge (within 15 s of the first push) and answered the \
        node.invoke.request the Gateway dispatched to the new session. A forced second push (the \
        client took longer than 3 s) is delivered too and noted; the nudge is not delivered.
        """,
    tags: ["push", "invoke", "background"],
    needs: [.pushRegister, .backgroundWake, .disconnect],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let nodeId = try await run.registerRelayPushAndDisconnect("the Gateway keeps the push registration (precondition)")

    let start = run.mark()
    let gateway = run.gateway
    async let answer = gateway.operatorInvoke(nodeId: nodeId, command: NodeCommandName.deviceInfo.rawValue, timeoutMs: 30_000)
    try await run.deliverGatewayPush(nodeId: nodeId, pushType: "background", from: start)
    let result = await answer
    let background = await gateway.pushDeliveries().filter { $0.nodeId == nodeId && $0.pushType == "background" }
    if background.count > 1 { run.note("the client needed the forced second push (it was not back within 3 s)") }
    try run.expect(result.error == nil, "the woken node answered the invoke before the Gateway gave up",
                   expected: "node.invoke answered ok", actual: result.summary)
}
