import Conformance
import GatewayProtocol
import MockGateway

let pair009 = Scenario(
    "PAIR-009", .must,
    title: "a revoked device token is refused and then forgotten",
    requirement: "A revoked device token is refused; the client forgets it and never presents it again (it falls back to its other credentials or to pairing) instead of looping on the dead token.",
    source: "gateway-protocol.md §5.3, §5.5-5.6, §9.4",
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
    let paired = try await PairingSteps.pairClient(run)
    guard let deviceId = paired.deviceId, let token = paired.issuedDeviceToken else {
        try run.fail("the approved node session has no device token", expected: "hello-ok.auth.deviceToken", actual: "none")
    }

    try await PairingSteps.holdSession(run, paired)
    // Relaunch without the shared token: the stored device token is the client's only credential.
    await run.client.stop()
    let relaunch = run.mark()
    try await run.client.start(sharedToken: .some(nil))
    let session = try await PairingSteps.awaitClient(run, "a node session authenticated with the stored device token",
                                                     from: relaunch) { event in
        if case .sessionOpened(let info) = event, info.role == GatewayRole.node.rawValue, info.deviceId == deviceId { info } else { nil }
    }
    try run.expectEqual(session.authMethod, "device-token", "how the relaunched node session authenticated")

    let revocation = run.mark()
    try await run.gateway.revokeToken(deviceId: deviceId, role: GatewayRole.node.rawValue)
    run.note("revoked the node token of \(deviceId)")
    await PairingSteps.pass(run, .seconds(15))

    let dead = PairingSteps.connects(run, from: revocation).filter { $0.presents(token) }
    try run.expect(dead.count <= 1, "the client stops presenting the revoked token after it was refused",
                   expected: "at most one connect with the revoked token",
                   actual: "\(dead.count) connects presented it within 15 s")
    if let attempt = dead.first {
        let refused = run.gateway.events.all.contains { event in
            if case .handshakeRejected(let id, _, _) = event { id == attempt.connectionId } else { false }
        }
        try run.expect(refused, "the Gateway refuses the revoked token", expected: "the connect refused", actual: "admitted")
    }
}
