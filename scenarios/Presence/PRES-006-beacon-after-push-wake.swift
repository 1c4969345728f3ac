import Conformance
import GatewayProtocol
import MockGateway

let pres006 = Scenario(
    "PRES-006", .must,
    title: "a silent push from the Gateway wakes the client, which reconnects and reports trigger silent_push",
    requirement: "After registering for push, a client woken by the Gateway's silent push reconnects its node session and sends node.event node.presence.alive whose payloadJSON names trigger silent_push.",
    source: "docs/protocol.md §6.6, §9.3; src/infra/push-apns.ts (sendApnsBackgroundWake)",
    discussion: """
        Pairs the client automatically and asks it to register for relay push (push-register \
        transport relay); the Gateway must keep the registration (it names this Gateway's \
        identity). If the client supports disconnect, it is then disconnected (a suspended app \
        has no socket). The Gateway sends a real silent push through that registration: push \
        type background, priority 5, payload {aps:{content-available:1}, openclaw:{kind: \
        node.wake, ...}}, signed for the fake relay with the Gateway's identity. Once the relay \
        accepts it, the push reaches the client as background-wake with trigger silent_push and \
        the payload as push. A node.event node.presence.alive must then arrive on a node session \
        with trigger silent_push in its payloadJSON. Unsupported for a client without \
        push-register or background-wake, decided before anything is awaited.
        """,
    tags: ["presence", "push", "background"],
    needs: [.pushRegister, .backgroundWake],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let nodeId = try await run.registerRelayPushAndDisconnect("the Gateway keeps the push registration, so that it can wake the client",
                                                              ifSupported: true)
    let start = run.mark()
    let wake = try await run.wakeThroughPush(nodeId: nodeId)
    try run.expect(wake.isDelivered, "the silent push reached the client",
                   expected: "the push transport accepts the wake", actual: wake.summary)
    let beacon = try await run.waitForEvent(.beaconRequest.named("node.event node.presence.alive after the push"), from: start)
    try run.expectOnNodeSession(beacon, "the beacon")
    try run.expectEqual(beacon.beaconTrigger ?? "none", "silent_push", "the trigger of the beacon sent because of the push")
}
