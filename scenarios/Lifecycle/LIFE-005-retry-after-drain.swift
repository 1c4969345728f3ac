import Conformance
import GatewayProtocol
import MockGateway

let life005 = Scenario(
    "LIFE-005", .should,
    title: "a request refused by a restart drain is sent again after retryAfterMs",
    requirement: "When the Gateway refuses a request with UNAVAILABLE, retryable:true and details.reason gateway-restarting (a restart drain; gateway-suspending and gateway-closing are alike), the client does not give up: it sends the request again, no sooner than retryAfterMs after each refusal, and the request is served once the drain is over.",
    source: "docs/protocol.md §10.2, §11.4 (restart-unavailable.ts)",
    discussion: """
        Pairs the client automatically and starts a restart drain: the Gateway keeps the session \
        but refuses every new request with UNAVAILABLE, retryable:true, retryAfterMs 1000 and \
        details.reason gateway-restarting. Then background-wake with trigger bg_app_refresh, so \
        the client sends its presence beacon (or whatever request it sends first) on its node \
        session. Only a request of that node session counts: the operator session the client may \
        open at the same time sends its own requests, and which of the two is refused first is a \
        race, not a property of the client. After the first refusal the drain goes on for 2.5 s of client time and then ends. The method of \
        the first refused request must be sent again and served within 15 s after the drain \
        ended, and no resend of it may come sooner than retryAfterMs after the refusal before it \
        (Gateway clock).
        """,
    tags: ["lifecycle", "reconnect"],
    needs: [.backgroundWake],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let node = try await run.nodeSession()
    let reason = GatewayDrain.restarting.reason
    await run.gateway.beginDrain(.restarting)
    let start = run.mark()
    async let wake = run.client.reply(to: .backgroundWake(trigger: "bg_app_refresh"))
    let method = try await run.refusedRequest(on: node.connectionId, reason: reason, from: start,
                                              "a request of the node session refused with UNAVAILABLE \(reason)")
    await run.elapse(.milliseconds(2_500))
    let lifted = await run.mark { await run.gateway.endDrain() }
    try await run.waitForEvent(.served(method).named("\(method) sent again and served within 15 s after the drain ended"),
                               within: .seconds(15), from: lifted)
    _ = try? await wake
    // Every resend of the method, measured from the refusal before it (Gateway clock).
    try run.expectResendsWait(method, afterRefusalsWith: reason, atLeastMs: Int64(GatewayDrain.retryAfterMs))
}
