import Conformance
import GatewayProtocol
import MockGateway

let push001 = Scenario(
    "PUSH-001", .must,
    title: "relay push registration names this Gateway's identity",
    requirement: "Relay push registration reaches the Gateway as node.event push.apns.register on the node session, with gatewayDeviceId equal to the Gateway's own identity (gateway.identity.get).",
    source: "docs/protocol.md §9.1-9.2",
    discussion: """
        Pairs the client automatically and asks it to register for relay push (push-register \
        transport relay). A node.event push.apns.register must arrive on a node session with \
        transport relay and gatewayDeviceId equal to the Gateway's device id, so that the \
        Gateway accepts the registration.
        """,
    tags: ["push"],
    needs: [.pushRegister],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.nodeSession()
    let registration = try await run.stimulate(.pushRegister(transport: PushTransport.relay.rawValue), until: .pushRegistered())
    try run.expectEqual(registration.transport, .relay, "the registration's transport")
    try run.expectEqual(registration.gatewayDeviceId, run.gateway.identity.deviceId,
                        "gatewayDeviceId is the Gateway's own identity (gateway.identity.get)")
    try run.expect(registration.accepted, "the Gateway accepts the registration", expected: "accepted", actual: "ignored")
}
