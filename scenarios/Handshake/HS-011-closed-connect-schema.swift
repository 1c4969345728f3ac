import Conformance
import GatewayProtocol
import MockGateway

let hs011 = Scenario(
    "HS-011", .must,
    title: "connect params stay inside the closed connect schema",
    requirement: "Every connect carries only the members the Gateway's connect schema has, at every level, with client.id and client.mode from their enums, no empty string where the schema needs a non-empty one, and a device.nonce, so a real Gateway, which refuses anything else with INVALID_REQUEST \"invalid connect params\", admits it.",
    source: "docs/protocol.md §3.3-3.4 (packages/gateway-protocol/src/schema/frames.ts @9e18229e)",
    discussion: """
        Waits until the client has a node session and checks every connect it sent until then \
        against the closed schema of the profile's Gateway (the current profile also requires \
        device.nonce). A refusal with "invalid connect params" names the member. A client whose \
        node connects are refused twice with the same DEVICE_AUTH_* code never gets a session \
        (its proof, not its schema, is wrong): the scenario fails at the second refusal instead \
        of waiting out the 20 s.
        """,
    tags: ["handshake", "schema"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false, configureGateway: { $0.autoApproval = .auto })
) { run in
    let first = try await run.waitForEvent("the client's first connect") { ConnectAttempt($0) }
    try run.expectClosedConnectSchema(first)
    try await waitForNodeSession(run, within: .seconds(20), checking: run.expectClosedConnectSchema)
    for attempt in run.connects() { try run.expectClosedConnectSchema(attempt) }
}

/// What ends HS-011's wait for a node session.
private enum SessionWait: Sendable {
    case session
    case refused(connectionId: String, code: String)
}

/// Waits up to `within` for a node session, checking each connect as it is refused. A node
/// connect refused twice with the same `DEVICE_AUTH_*` code ends the wait at once: the device
/// proof is wrong in a way no retry of the same client changes (the schema admitted it, or the
/// refusal would be INVALID_REQUEST), so waiting out the deadline would only delay the same
/// verdict. One such refusal is tolerated, in case a client repairs its proof on the retry.
private func waitForNodeSession(_ run: ScenarioRun, within: Duration,
                                checking check: (ConnectAttempt) throws -> Void) async throws {
    let deadlineMs = run.deadlineMs(within: within)
    var cursor: EventCursor?
    var refusedOnce: Set<String> = []
    while true {
        let (outcome, next) = try await run.waitForMatch("a node session", within: run.remaining(untilMs: deadlineMs),
                                                         from: cursor) { event -> SessionWait? in
            switch event {
            case .sessionOpened(let info) where info.role == .node:
                return .session
            case .handshakeRejected(let id, let error, _):
                guard let code = error.detailCode, code.hasPrefix("DEVICE_AUTH_") else { return nil }
                return .refused(connectionId: id, code: code)
            default:
                return nil
            }
        }
        cursor = next
        guard case .refused(let connectionId, let code) = outcome else { return }
        guard let attempt = run.connect(on: connectionId), attempt.role == GatewayRole.node.rawValue else { continue }
        try check(attempt)
        if !refusedOnce.insert(code).inserted {
            try run.fail("the client never got a node session: its node connects were refused twice with \(code)",
                         expected: "a node session (hello-ok), so that every connect until then can be checked",
                         actual: code)
        }
    }
}
