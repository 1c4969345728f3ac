import Conformance
import GatewayProtocol
import MockGateway

let push004 = Scenario(
    "PUSH-004", .must,
    title: "the reopen nudge is not taken for a silent wake",
    requirement: "The Gateway's reopen nudge (an alert push without content-available) is for the user: a client that receives it does not reconnect or report a silent_push wake by itself.",
    source: "docs/protocol.md §6.9.1, §9.3",
    discussion: """
        Pairs the client automatically, registers it for relay push and disconnects it. An \
        operator invokes device.info on the node; none of the Gateway's silent pushes is handed \
        to the client, so after the 3 s and 12 s windows the Gateway sends the reopen nudge (an \
        alert: "OpenClaw needs a quick reopen") and answers NOT_CONNECTED (precondition). The \
        nudge then reaches the client as background-wake with the alert's payload: within 10 s \
        the client must neither connect its node role nor send node.presence.alive with trigger \
        silent_push (only the user opening the app may bring it back).
        """,
    tags: ["push", "invoke", "background"],
    needs: [.pushRegister, .backgroundWake, .disconnect],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let nodeId = try await run.registerRelayPushAndDisconnect("the Gateway keeps the push registration (precondition)")

    let answer = await run.gateway.operatorInvoke(nodeId: nodeId, command: NodeCommandName.deviceInfo.rawValue, timeoutMs: 60_000)
    try run.expectEqual(answer.error?.detailCode ?? answer.summary, "NOT_CONNECTED",
                        "the operator's answer after the undelivered wakes (precondition)")
    let payload = try await run.lastPushPayload("alert", to: nodeId, "the reopen nudge (precondition)")
    let delivered = try await run.mark { try await run.client.stimulate(.pushWake(payload: payload)) }
    try await run.expectNoEvent(.connect(.node).named("a node connect after the nudge"), within: .seconds(10), from: delivered)
    try await run.expectNoEvent(.beaconRequest.filter { $0.beaconTrigger == "silent_push" }
        .named("node.presence.alive with trigger silent_push after the nudge"), within: .seconds(1), from: delivered)
}
