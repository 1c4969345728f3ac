import Conformance
import GatewayProtocol
import MockGateway

let pres005 = Scenario(
    "PRES-005", .must,
    title: "the Gateway stores lastSeenAtMs/lastSeenReason for the beacon's authenticated device",
    requirement: "A node.presence.alive beacon on an authenticated node session writes lastSeenAtMs (Gateway time) and lastSeenReason (the normalised trigger) onto that device's paired record and nowhere else; a beacon on any other session, or to a Gateway without a beacon handler, stores nothing.",
    source: "docs/protocol.md §6.6",
    discussion: """
        Checks the fake Gateway's beacon handler against the client. Pairs the client \
        automatically, lets 90 s pass (1 s with a real clock), wakes it in the background \
        (bg_app_refresh) and reads the paired records once the beacon is answered. The beacon \
        must have come on a node session authenticated as the client's device. Current \
        profile: that device's record now has lastSeenAtMs = the Gateway time of the beacon and \
        lastSeenReason bg_app_refresh. Legacy profile (no beacon handler, bare {ok:true}): the \
        record does not take the beacon's trigger. A beacon on another session must not be \
        stored either. Every other record is unchanged on both profiles.
        """,
    tags: ["presence", "background", "gateway"],
    needs: [.backgroundWake],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let nodeId = try await run.nodeId()
    // Some time after the connect, so that the beacon's lastSeenAtMs differs from the connect's.
    await run.elapse(run.isSimulated ? .seconds(90) : .seconds(1))
    let before = await run.gateway.pairedDevices()
    let start = run.mark()
    let wokenAtMs = run.gateway.clock.nowMs
    try await run.client.reply(to: .backgroundWake(trigger: "bg_app_refresh"))
    let beacon = try await run.waitForEvent(.beaconRequest.named("node.presence.alive after the wake"), from: start)
    let connectionId = beacon.connectionId
    try await run.waitForEvent(.response(to: beacon), from: start)
    let answeredAtMs = run.gateway.clock.nowMs
    let after = await run.gateway.pairedDevices()
    guard let old = before.first(where: { $0.deviceId == nodeId }), let new = after.first(where: { $0.deviceId == nodeId }) else {
        try run.fail("the client's device has no paired record", expected: "a paired record for \(nodeId)",
                     actual: "records for \(after.map(\.deviceId))")
    }
    // A reconnect for the wake may refresh the record with reason "connect"; only the
    // beacon's own trigger shows that the beacon was stored.
    let storedBeacon = new.lastSeenReason == "bg_app_refresh" && old.lastSeenReason != "bg_app_refresh"
    let session = run.matches(.session(on: connectionId)).first
    guard session?.role == .node, session?.deviceId == nodeId else {
        // Not a node session of the device: the Gateway must not have stored it.
        try run.expect(!storedBeacon, "the Gateway stored a beacon that came on a session other than the device's node session",
                       expected: "lastSeenReason not bg_app_refresh", actual: "lastSeenReason \(new.lastSeenReason ?? "-")")
        try run.fail("the beacon did not come on the node session authenticated as the client's device",
                     expected: "role node, device \(nodeId)",
                     actual: "role \(session?.role.rawValue ?? "?"), device \(session?.deviceId ?? "none")")
    }
    if run.profile.nodeEventReply == .structured {
        try run.expectEqual(new.lastSeenReason, "bg_app_refresh", "lastSeenReason after the beacon")
        try run.expect(new.lastSeenAtMs.map { (wokenAtMs...answeredAtMs).contains($0) } ?? false,
                       "lastSeenAtMs is the Gateway time of the beacon",
                       expected: "between \(wokenAtMs) and \(answeredAtMs)", actual: new.lastSeenAtMs.map(String.init) ?? "none")
    } else {
        try run.expect(!storedBeacon, "a Gateway without a beacon handler stores nothing",
                       expected: "lastSeenReason not bg_app_refresh (was \(old.lastSeenReason ?? "-"))",
                       actual: "lastSeenReason \(new.lastSeenReason ?? "-") at \(new.lastSeenAtMs.map(String.init) ?? "-")")
    }
    for other in after where other.deviceId != nodeId {
        let previous = before.first { $0.deviceId == other.deviceId }
        try run.expect(previous?.lastSeenAtMs == other.lastSeenAtMs && previous?.lastSeenReason == other.lastSeenReason,
                       "the beacon changed no other device's record",
                       expected: "device \(other.deviceId) unchanged",
                       actual: "lastSeen \(other.lastSeenReason ?? "-") at \(other.lastSeenAtMs.map(String.init) ?? "-")")
    }
}
