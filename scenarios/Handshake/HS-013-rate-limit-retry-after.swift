import Conformance
import GatewayProtocol
import MockGateway

let hs013 = Scenario(
    "HS-013", .should,
    title: "AUTH_RATE_LIMITED with retryAfterMs is honoured",
    requirement: "After a connect is refused with AUTH_RATE_LIMITED, retryable:true and retryAfterMs (the address is locked out after too many failed attempts), the client waits at least retryAfterMs before it connects again with that role, and connects once the lockout is over.",
    source: "docs gateway/security/rate-limiting.md; docs gateway/protocol.md \"Auth\"; docs/protocol.md §5.3, §11.3",
    discussion: """
        Runs a Gateway with a shared token the client is given, rate limits that also apply to \
        loopback, and the client's addresses locked out of the shared-secret class for 10 s before \
        the client starts (long enough for a client process to start), so its first connects are \
        refused with AUTH_RATE_LIMITED. Requires a node session within 40 s, and for every refusal \
        measures on the Gateway clock the time to the next connection of the same role: it must be \
        at least retryAfterMs.
        """,
    tags: ["handshake", "reconnect", "rate-limit"],
    profiles: .all,
    options: Scenario.Options(
        startsClient: false, sharedToken: "hs013-shared-token",
        configureGateway: { configuration in
            configuration.autoApproval = .auto
            configuration.authRateLimit.exemptLoopback = false
        })
) { run in
    await HandshakeSteps.lockOutLoopback(run, scope: .sharedSecret)
    let start = try await run.mark { try await run.client.start() }
    let refusal = try await run.waitForEvent(.refusal(.authRateLimited), within: .seconds(20)).error
    run.note("refused with retryAfterMs \(refusal.retryAfterMs.map(String.init) ?? "none")")
    _ = try await run.nodeSession("a node session after the lockout", from: start, within: .seconds(40))
    try HandshakeSteps.expectRateLimitRetriesHonoured(run, from: start)
}
