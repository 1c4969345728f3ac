import Conformance
import GatewayProtocol
import MockGateway

/// HS-010's `retryAfterMs`: longer than any first backoff step (see the discussion).
let hs010RetryAfterMs = 5_000

let hs010 = Scenario(
    "HS-010", .should,
    title: "UNAVAILABLE with retryAfterMs is honoured",
    requirement: "After a connect is refused with UNAVAILABLE and retryAfterMs (close 1013, gateway starting), the client waits at least retryAfterMs before it connects again with that role, and keeps retrying until the Gateway is up.",
    source: "docs/protocol.md §3.7, §10.3, §11.3",
    discussion: """
        Starts the Gateway in its starting-up state, so every connect is refused with UNAVAILABLE, \
        retryAfterMs 5000 and close 1013, and waits up to 35 s for the next connection of the \
        refused role. For every refusal it measures on the Gateway clock the time from the refusal \
        to the next connection of the same role (node or operator): it must be at least \
        retryAfterMs. Then the Gateway finishes starting and the client must connect within 30 s. \
        Margins: 5 s is far longer than any first backoff step (0.5 s for the Swift clients, 1 s \
        for upstream's TypeScript client, plus jitter), so a client that ignores the hint and \
        retries after its own backoff always comes too soon; retrying later than asked is \
        allowed, and 35 s leaves room for a client that waits retryAfterMs plus a backoff of up to \
        30 s (the usual cap). Upstream's real Gateway asks for 500 ms, too close to a first backoff \
        step to tell the two apart.
        """,
    tags: ["handshake", "reconnect"],
    profiles: .all,
    options: Scenario.Options(timeoutMs: 120_000, configureGateway: { configuration in
        configuration.autoApproval = .auto
        configuration.startingUp = true
        configuration.startingUpRetryAfterMs = hs010RetryAfterMs
    })
) { run in
    // The whole log: the runner started the client before this script, so its first connects
    // may already be in it.
    let start = EventCursor.start
    let refused = try await run.waitForEvent("a connect refused with UNAVAILABLE") { event -> String? in
        if case .handshakeRejected(let id, let error, _) = event, error.code == ErrorCode.unavailable.rawValue { id } else { nil }
    }
    let refusedRole = run.matches(.connect(), from: start).first { $0.connectionId == refused }?.role
    // Retrying later than asked is allowed: wait for retryAfterMs plus the longest usual backoff.
    let waitMs = hs010RetryAfterMs + 30_000
    let nextConnect = EventMatcher.connect().filter { $0.connectionId != refused && $0.role == refusedRole }
        .named("another \(refusedRole ?? "") connection within \(waitMs / 1000) s after the refusal")
    _ = try await run.waitForEvent(nextConnect, within: .milliseconds(waitMs), from: start)

    // Each refusal with its role and the wait before the next connection of that role (Gateway
    // clock, from the transcript).
    var measured = 0
    for retry in HandshakeSteps.retries(run, from: start, matches: { $0.code == ErrorCode.unavailable.rawValue }) {
        try run.expectEqual(retry.closeCode, 1013, "the refused connection \(retry.refused) was closed with 1013")
        guard let waited = retry.waitedMs else { continue }
        measured += 1
        try run.expect(
            waited >= Int64(retry.retryAfterMs),
            "the client connected again (\(retry.role)) sooner than retryAfterMs after UNAVAILABLE",
            expected: "at least \(retry.retryAfterMs) ms between the refusal of \(retry.refused) and the next \(retry.role) connection",
            actual: "\(waited) ms")
    }
    try run.expect(measured > 0, "the client did not retry after UNAVAILABLE",
                   expected: "another connect within \(waitMs / 1000) s after a refusal with retryAfterMs \(hs010RetryAfterMs)",
                   actual: "none")

    let started = await run.mark { await run.gateway.setStartingUp(false) }
    try await run.nodeSession("a node session within 30 s after the Gateway finished starting", from: started, within: .seconds(30))
}
