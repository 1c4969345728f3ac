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
    let (connectionId, requestId) = try await run.waitForEvent("a request of the node session refused with UNAVAILABLE \(reason)", from: start) { event -> (String, String)? in
        guard case .frameOut(let connectionId, .response(let response)) = event, connectionId == node.connectionId, !response.ok,
              response.error?.details?["reason"]?.stringValue == reason else { return nil }
        return (connectionId, response.id)
    }
    let method = run.matches(.anyRequest, from: start).first { $0.connectionId == connectionId && $0.request.id == requestId }?
        .request.method ?? "?"
    await run.elapse(.milliseconds(2_500))
    await run.gateway.endDrain()
    let lifted = run.mark()
    try await run.waitForEvent(.served(method).named("\(method) sent again and served within 15 s after the drain ended"),
                               within: .seconds(15), from: lifted)
    _ = try? await wake

    // Every resend of the method, measured from the refusal before it (Gateway clock).
    var lastRefusalMs: Int64?
    var measured = 0
    var requestMethods: [String: String] = [:]
    for entry in run.gateway.transcript.entries {
        guard let message = entry.message, let id = message["id"]?.stringValue else { continue }
        let key = "\(entry.connectionId) \(id)"
        switch entry.kind {
        case .inbound where message["type"]?.stringValue == "req":
            let sent = message["method"]?.stringValue ?? ""
            requestMethods[key] = sent
            guard sent == method, let refused = lastRefusalMs else { continue }
            measured += 1
            try run.expect(entry.gatewayMs - refused >= Int64(GatewayDrain.retryAfterMs),
                           "the client sent \(method) again sooner than retryAfterMs after a drain refusal",
                           expected: "at least \(GatewayDrain.retryAfterMs) ms after the refusal",
                           actual: "\(entry.gatewayMs - refused) ms")
            lastRefusalMs = nil
        case .outbound where message["type"]?.stringValue == "res" && requestMethods[key] == method:
            if message["error"]?["details"]?["reason"]?.stringValue == reason { lastRefusalMs = entry.gatewayMs }
        default:
            break
        }
    }
    try run.expect(measured > 0, "the client did not send \(method) again after the drain refusal",
                   expected: "a resend of \(method)", actual: "none")
}
