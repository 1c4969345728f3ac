import Conformance
import GatewayProtocol
import MockGateway

let push002 = Scenario(
    "PUSH-002", .must,
    title: "after switching Gateways the client registers push again with the new identity",
    requirement: "After switching to another Gateway the client registers for push again on the new Gateway, with the new Gateway's identity as gatewayDeviceId.",
    source: "docs/protocol.md §9.1",
    discussion: """
        Pairs the client automatically and registers it for relay push with the run's Gateway. \
        A second Gateway (its own identity, approving automatically) is started and the client \
        is switched to it (switch-gateway). A push.apns.register must reach the second Gateway \
        with transport relay and gatewayDeviceId equal to the second Gateway's identity, not the \
        first's.
        """,
    tags: ["push", "switch"],
    needs: [.pushRegister, .switchGateway],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.nodeSession()
    let first = try await run.stimulate(.pushRegister(transport: PushTransport.relay.rawValue),
                                        until: .pushRegistered(.relay).named("push.apns.register on the first Gateway"))
    try run.expectEqual(first.gatewayDeviceId ?? "", run.gateway.identity.deviceId, "gatewayDeviceId of the first registration (precondition)")

    let second = try await run.startOtherGateway()
    let registration = try await run.stimulate(.switchGateway(url: second.url),
                                               until: .pushRegistered(.relay).named("push.apns.register on the new Gateway"), on: second)
    try run.expectEqual(registration.gatewayDeviceId, second.identity.deviceId,
                        "gatewayDeviceId of the registration on the new Gateway (its own identity, not the old one's)")
    try run.expect(registration.accepted, "the new Gateway accepts the registration", expected: "accepted", actual: "ignored")
}
