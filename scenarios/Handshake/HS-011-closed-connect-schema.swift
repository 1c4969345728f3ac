import Conformance
import GatewayProtocol
import MockGateway

let hs011 = Scenario(
    "HS-011", .must,
    title: "connect params stay inside the closed connect schema",
    requirement: "Every connect carries only the members the Gateway's connect schema has, at every level, with client.id and client.mode from their enums, no empty string where the schema needs a non-empty one, and a device.nonce, so a real Gateway, which refuses anything else with INVALID_REQUEST \"invalid connect params\", admits it.",
    source: "gateway-protocol.md §3.3; drift-2026-12.md §1.2 (packages/gateway-protocol/src/schema/frames.ts @9e18229e)",
    discussion: """
        Waits until the client has a node session and checks every connect it sent until then \
        against the closed schema of the profile's Gateway (the current profile also requires \
        device.nonce). A refusal with "invalid connect params" names the member.
        """,
    tags: ["handshake", "schema"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false, configureGateway: { $0.autoApproval = .auto })
) { run in
    let rules = run.profile.connectSchema
    func check(_ attempt: ConnectAttempt) throws {
        if case .failure(let violation) = ConnectParams.validate(attempt.params, rules: rules) {
            try run.fail("the \(attempt.role) connect on \(attempt.connectionId) leaves the closed connect schema",
                         expected: "params the schema admits", actual: violation.message)
        }
    }
    let first = try await run.waitForEvent("the client's first connect") { ConnectAttempt($0) }
    try check(first)
    _ = try await run.nodeSession("a node session", within: .seconds(20))
    for attempt in run.connects() { try check(attempt) }
}
