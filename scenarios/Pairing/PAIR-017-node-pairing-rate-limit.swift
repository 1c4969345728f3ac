import Conformance
import GatewayProtocol
import MockGateway

let pair017 = Scenario(
    "PAIR-017", .should,
    title: "node-pairing AUTH_RATE_LIMITED: wait retryAfterMs, keep the identity",
    requirement: "When a node connect is refused with AUTH_RATE_LIMITED, retryable:true and retryAfterMs because its address made too many node-pairing requests (first node sessions of nodes whose capability surface is not paired yet), the client waits at least retryAfterMs before its next node connect, retries with the same device identity (a new identity is one more node-pairing request from the same address: the storm the limit is there to stop), and connects once the lockout is over.",
    source: "connect-node-session.ts @eb43e943 (requestNodePairingFromConnect, AUTH_RATE_LIMIT_SCOPE_NODE_PAIRING); docs gateway/security/rate-limiting.md; docs/protocol.md §5.11",
    discussion: """
        Runs a Gateway that approves every pairing request, with rate limits that also apply to \
        loopback, and the client's addresses locked out of the node-pairing class for 10 s before \
        the client starts, so that its first node connect passes authentication and pairing and is \
        then refused with AUTH_RATE_LIMITED. Requires a node session within 40 s, measures on the \
        Gateway clock the time from every such refusal to the next node connection (at least \
        retryAfterMs), and requires that node session to be of the device that was refused.
        """,
    tags: ["pairing", "reconnect", "rate-limit"],
    profiles: .all,
    options: Scenario.Options(
        startsClient: false,
        configureGateway: { configuration in
            configuration.autoApproval = .auto
            configuration.authRateLimit.exemptLoopback = false
        })
) { run in
    await HandshakeSteps.lockOutLoopback(run, scope: .nodePairing)
    let start = try await run.mark { try await run.client.start() }
    let refused = try await run.waitForEvent(.refusal(.authRateLimited), within: .seconds(20))
    run.note("refused with retryAfterMs \(refused.error.retryAfterMs.map(String.init) ?? "none")")
    let refusedDevice = run.connect(on: refused.connectionId)?.deviceId
    let session = try await run.nodeSession("a node session after the lockout", from: start, within: .seconds(40))
    try HandshakeSteps.expectRateLimitRetriesHonoured(run, from: start, role: .node)
    try run.expectEqual(session.deviceId, refusedDevice, "the device of the node session after the lockout (the rate-limited one)")
}
