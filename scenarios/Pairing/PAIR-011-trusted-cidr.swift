import Conformance
import GatewayProtocol
import MockGateway

let pair011 = Scenario(
    "PAIR-011", .must,
    title: "trusted-CIDR auto-approval admits a scopeless node, not a scoped ask",
    requirement: "With trusted-CIDR auto-approval covering the client's address, a fresh node connect (role node, scopes []) is admitted at once with hello-ok and no manual step, while a connect of the same device that asks for operator scopes still needs an approval.",
    source: "docs/protocol.md §5.10, §3.5",
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
    let connect = try await run.nextConnect(role: .node, "the client's first node connect", from: .start)
    try run.expect(connect.scopes.isEmpty, "the node connect asks for no scopes", expected: "scopes []",
                   actual: "scopes \(connect.scopes)")
    try await run.expectAdmitted(connect, "the first node connect is admitted under trusted-CIDR auto-approval")
    guard let deviceId = connect.deviceId else { try run.fail("the node connect has no device identity") }
    let record = await run.gateway.pairedDevices().first { $0.deviceId == deviceId }
    try run.expectEqual(record?.approvedVia, .trustedCIDR, "how the device was approved")

    // A connect of the same device that asks for scopes needs approval: the client's own (an
    // operator session asking for scopes), or one prompted with request-scopes.
    if run.client.supports(.requestScopes) {
        try await run.client.reply(to: .requestScopes(["operator.read"]))
    }
    let scoped: ConnectAttempt
    do {
        scoped = try await run.nextConnect(deviceId: deviceId, "a connect of \(deviceId) that asks for scopes", from: .start) { !$0.scopes.isEmpty }
    } catch is ScenarioFailure {
        run.note("the client made no connect with scopes: the scoped half is not checked")
        return
    }
    try await run.expectRefused(scoped.connectionId, with: .pairingRequired,
                                "a connect of the auto-approved device that asks for scopes (the \(scoped.role) connect with scopes \(scoped.scopes)) needs approval")
}
