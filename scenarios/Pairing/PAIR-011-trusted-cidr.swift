import Conformance
import GatewayProtocol
import MockGateway

let pair011 = Scenario(
    "PAIR-011", .must,
    title: "trusted-CIDR auto-approval admits a scopeless node, not a scoped ask",
    requirement: "With trusted-CIDR auto-approval covering the client's address, a fresh node connect (role node, scopes []) is admitted at once with hello-ok and no manual step, while a connect of the same device that asks for operator scopes still needs an approval.",
    source: "gateway-protocol.md §6.4, §3.3",
    discussion: """
        Runs a Gateway whose trusted CIDR is 127.0.0.0/8. Requires the client's first node connect \
        to send scopes [] and to get hello-ok without any pairing request (the device recorded as \
        approved via trusted-cidr). Then asks the client for operator scopes (request-scopes, when \
        supported) and requires every connect of the device that asks for scopes to be refused with \
        PAIRING_REQUIRED.
        """,
    tags: ["pairing", "auto-approval"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { configuration in
        do {
            configuration.autoApproval = try .trustedCIDRs(parsing: ["127.0.0.0/8"])
        } catch {
            // Left manual: the body reports the missing policy.
        }
    })
) { run in
    try run.expect(!run.gateway.configuration.autoApproval.trustedNetworks.isEmpty, "the Gateway trusts 127.0.0.0/8",
                   expected: "a trusted network", actual: "none")
    let connect = try await run.waitForEvent("the client's first node connect", from: .start) { event in
        PairingSteps.connect(in: event).flatMap { $0.role == GatewayRole.node.rawValue ? $0 : nil }
    }
    try run.expect(connect.scopes.isEmpty, "the node connect asks for no scopes", expected: "scopes []",
                   actual: "scopes \(connect.scopes)")
    let connectionId = connect.connectionId
    let outcome = try await run.waitForEvent("the outcome of the first node connect", from: .start) { event -> String? in
        switch event {
        case .sessionOpened(let info) where info.connectionId == connectionId: "hello-ok"
        case .handshakeRejected(let id, let error, _) where id == connectionId: "\(error.detailCode ?? error.code): \(error.message)"
        default: nil
        }
    }
    try run.expectEqual(outcome, "hello-ok", "the first node connect's outcome under trusted-CIDR auto-approval")
    guard let deviceId = connect.deviceId else { try run.fail("the node connect has no device identity") }
    let record = await run.gateway.pairedDevices().first { $0.deviceId == deviceId }
    try run.expectEqual(record?.approvedVia, .trustedCIDR, "how the device was approved")

    if run.client.supports(.requestScopes) {
        try await run.client.reply(to: .requestScopes(["operator.read"]))
    }
    await PairingSteps.pass(run, .seconds(2))
    let scoped = PairingSteps.connects(run, from: .start).filter { $0.deviceId == deviceId && !$0.scopes.isEmpty }
    if scoped.isEmpty { run.note("the client made no connect with scopes: the scoped half is not checked") }
    let events = run.gateway.events.all
    for ask in scoped {
        let refused = events.contains { event in
            PairingSteps.pairingRejection(event)?.connectionId == ask.connectionId
        }
        try run.expect(refused, "a connect of the auto-approved device that asks for scopes needs approval",
                       expected: "PAIRING_REQUIRED for the \(ask.role) connect with scopes \(ask.scopes)",
                       actual: "not refused with PAIRING_REQUIRED")
    }
}
