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
        requires the dead token to be presented at most once more (refused), or twice when that \
        refusal carried `canRetryWithDeviceToken:true` (the one bounded retry upstream's hint \
        invites), never after a refusal without the hint.
        """,
    tags: ["pairing", "tokens"],
    profiles: .all,
    options: Scenario.Options(sharedToken: "pair009-shared-gateway-token")
) { run in
    let (_, deviceId, token) = try await run.pairClientAndKeepToken()
    // Relaunch without the shared token: the stored device token is the client's only credential.
    await run.client.stop()
    let relaunch = try await run.mark { try await run.client.start(sharedToken: .some(nil)) }
    let session = try await run.sessionWithConnectFallback(device: deviceId, from: relaunch,
                                                          "a node session authenticated with the stored device token")
    try run.expectEqual(session.authMethod, "device-token", "how the relaunched node session authenticated")

    let revocation = try await run.mark { try await run.gateway.revokeToken(deviceId: deviceId, role: GatewayRole.node.rawValue) }
    run.note("revoked the node token of \(deviceId)")
    // A rule about time: within 15 s the revoked token is presented at most once, or twice when
    // the refusal of the first attempt invited the one bounded retry with the device token
    // (`canRetryWithDeviceToken:true`, as upstream's refusal of a device token sent in
    // `auth.token` against a shared-token Gateway does); never after a refusal without that hint.
    let presentingDead = EventMatcher.connect().filter { $0.presents(token) }.named("a connect presenting the revoked token")
    _ = try? await run.waitForEvents(presentingDead, count: 3, within: .seconds(15), from: revocation)
    let attempts = run.matches(presentingDead, from: revocation)
    var allowed = 1
    if let first = attempts.first {
        let refusal = try await run.expectRefused(first.connectionId, "the Gateway refuses the revoked token")
        if refusal.details?["canRetryWithDeviceToken"] == true { allowed = 2 }
    }
    if attempts.count > allowed {
        try run.fail("the client stops presenting the revoked token after it was refused",
                     expected: allowed == 2
                        ? "at most two connects with the revoked token within 15 s (the first and the one hinted retry)"
                        : "at most one connect with the revoked token within 15 s",
                     actual: "connects \(attempts.map(\.connectionId).joined(separator: ", ")) presented it")
    }
    for attempt in attempts.dropFirst() {
        try await run.expectRefused(attempt.connectionId, "the Gateway refuses the revoked token again")
    }
}
