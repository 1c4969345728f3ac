import Conformance
import GatewayProtocol
import MockGateway

let pair014 = Scenario(
    "PAIR-014", .must,
    title: "wait_then_retry: keep retrying with the same bootstrap token",
    requirement: "When a setup-code connect is refused with PAIRING_REQUIRED and recommendedNextStep wait_then_retry (retryable:true, pauseReconnect:false), because the code does not approve this client silently, the client keeps reconnecting by itself with the same auth.bootstrapToken until the request is approved, and is then let in.",
    source: "docs gateway/protocol.md \"Auth\"; connect-device-pairing.ts @e7f3d12c; docs/protocol.md §5.13, §5.8",
    discussion: """
        Runs a Gateway with a shared token the client does not have and sends a voice-node setup \
        code, which no client redeems silently, so the setup-code connect stays pending. Requires \
        the refusal to say wait_then_retry, then two more node connects within 20 s that present \
        the same bootstrap token, approves the pending request and requires a node session within \
        30 s.
        """,
    tags: ["pairing", "setup-code", "reconnect"],
    needs: [.setupCode],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.auth = .token("pair014-token-the-client-lacks") })
) { run in
    let code = await run.gateway.makeSetupCode(profile: .voiceNode)
    let refused = try await run.reply(to: .setupCode(code.encoded), until: .refusal(.pairingRequired))
    let (first, refusal) = (refused.connectionId, refused.error)
    try run.expect(run.connect(on: first)?.presents(code.bootstrapToken) == true,
                   "the first connect refused with PAIRING_REQUIRED presents the setup code's bootstrap token",
                   expected: "auth.bootstrapToken", actual: run.connect(on: first)?.params["auth"]?.jsonString ?? "no auth")
    try run.expectEqual(refusal.details?["recommendedNextStep"]?.stringValue, RecommendedNextStep.waitThenRetry.rawValue,
                        "recommendedNextStep of the pending setup-code connect")
    let afterFirst = run.mark()
    let retries = try await run.waitForEvents(.connect(.node).named("a node connect after the wait_then_retry refusal of \(first)"),
                                              count: 2, within: .seconds(20), from: afterFirst)
    for retry in retries {
        try run.expect(retry.bootstrapToken == code.bootstrapToken, "a retry while wait_then_retry presents the same bootstrap token",
                       expected: "auth.bootstrapToken = the setup code's token",
                       actual: retry.params["auth"]?.jsonString ?? "no auth")
    }
    let pending = await run.gateway.pendingPairingRequests()
    let request = try run.required(pending.first { $0.role == .node || $0.roles.contains(.node) }, "no pending node pairing request",
                                   expected: "the setup-code connect's request", actual: "\(pending.count) pending")
    let approved = try await run.mark { try await run.gateway.approve(requestId: request.requestId) }
    run.note("approved \(request.requestId)")
    _ = try await run.nodeSession("a node session after the approval", from: approved, within: .seconds(30))
}
