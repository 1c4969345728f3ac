import Conformance
import GatewayProtocol
import MockGateway

let pair009 = Scenario(
    "PAIR-009", .must,
    title: "a revoked device token is refused and then forgotten",
    requirement: "A revoked device token is refused; the client forgets it and never presents it again (it falls back to its other credentials or to pairing) instead of looping on the dead token.",
    source: "docs/protocol.md §5.3, §5.5-5.6, §11.3",
    discussion: """
        Runs a Gateway with a shared token. Pairs the client (started with the shared token), then \
        relaunches it without the shared token so that it authenticates with its stored node token \
        alone (as an app paired through a setup code does) and requires that to work. Revokes the \
        node token (the Gateway closes the session with 1008), lets 15 s of client time pass, and \
        requires the dead token to be presented at most once more (refused), never after the refusal.
        """,
    tags: ["pairing", "tokens"],
    profiles: .all,
    options: Scenario.Options(sharedToken: "pair009-shared-gateway-token")
) { run in
    let (_, deviceId, token) = try await run.pairClientAndKeepToken()
    // Relaunch without the shared token: the stored device token is the client's only credential.
    await run.client.stop()
    let relaunch = run.mark()
    try await run.client.start(sharedToken: .some(nil))
    let session = try await run.sessionWithConnectFallback(device: deviceId, from: relaunch,
                                                          "a node session authenticated with the stored device token")
    try run.expectEqual(session.authMethod, "device-token", "how the relaunched node session authenticated")

    let revocation = run.mark()
    try await run.gateway.revokeToken(deviceId: deviceId, role: GatewayRole.node.rawValue)
    run.note("revoked the node token of \(deviceId)")
    // A rule about time: within 15 s the revoked token is presented at most once (one attempt
    // may follow the revocation before the refusal teaches the client).
    let presentingDead = EventMatcher.connect().filter { $0.presents(token) }.named("a connect presenting the revoked token")
    if let again = try? await run.waitForEvents(presentingDead, count: 2, within: .seconds(15), from: revocation) {
        try run.fail("the client stops presenting the revoked token after it was refused",
                     expected: "at most one connect with the revoked token within 15 s",
                     actual: "connects \(again.map(\.connectionId).joined(separator: ", ")) presented it")
    }
    if let attempt = run.matches(presentingDead, from: revocation).first {
        let outcome = try await run.handshakeOutcome(of: attempt.connectionId)
        try run.expect(outcome.refusal != nil, "the Gateway refuses the revoked token", expected: "the connect refused",
                       actual: outcome.summary)
    }
}
