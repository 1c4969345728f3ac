import Conformance
import GatewayProtocol
import MockGateway

let pres001 = Scenario(
    "PRES-001", .must,
    title: "a background wake reconnects and sends node.presence.alive",
    requirement: "After a background wake the client reconnects its node session and sends node.event node.presence.alive on it, with a payloadJSON string whose trigger is one the schema knows.",
    source: "docs/protocol.md §6.5-6.6",
    discussion: """
        Pairs the client automatically. If the client supports disconnect, it is first \
        disconnected (a suspended app has no socket), so the wake has to reconnect. Then \
        background-wake with trigger silent_push: a node.event request with event \
        node.presence.alive must arrive on a node session, with payloadJSON a string holding an \
        object whose trigger is one of background, silent_push, bg_app_refresh, \
        significant_location, manual, connect.
        """,
    tags: ["presence", "background"],
    needs: [.backgroundWake],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let firstSocket = try await run.nodeSession().connectionId
    if run.client.supports(.disconnect) { try await run.disconnect(until: .nodeDisconnected(firstSocket)) }
    let beacon = try await run.reply(to: .backgroundWake(trigger: "silent_push"),
                                     until: .beaconRequest.named("node.event node.presence.alive after the wake"))
    try run.expectOnNodeSession(beacon, "the beacon")
    try run.expectKnownPresenceTrigger(run.beaconPayload(beacon))
}
