import Conformance
import GatewayProtocol
import MockGateway

let pair007 = Scenario(
    "PAIR-007", .must,
    title: "two simultaneous approvals: one applies, the client ends with one session and one token",
    requirement: "When two operators approve the same pending request at once, exactly one approval applies (the other fails as an unknown request); the client then ends with exactly one node session and one node device token.",
    source: "docs/protocol.md §5.10, §5.4",
    discussion: """
        Lets the client's first pairing round settle, approves the device's pending request twice \
        concurrently, requires exactly one success and one approved resolution, lets the client \
        reconnect, then requires exactly one node session of the device and one node token.
        """,
    tags: ["pairing", "race"],
    profiles: .all
) { run in
    let deviceId = try await run.firstPairingRequest().deviceId
    let gateway = run.gateway
    let beforeApproval = run.mark()
    var approved: String?
    for _ in 0..<3 where approved == nil {
        guard let request = await gateway.pendingPairingRequests().last(where: { $0.deviceId == deviceId }) else { break }
        let requestId = request.requestId
        run.note("approving \(requestId) twice at once")
        async let firstApproval = (try? await gateway.approve(requestId: requestId)) != nil
        async let secondApproval = (try? await gateway.approve(requestId: requestId)) != nil
        let applied = [await firstApproval, await secondApproval].filter { $0 }.count
        // Both fail only when the client superseded the request just before: try its replacement.
        if applied == 0 { continue }
        try run.expectEqual(applied, 1, "the number of simultaneous approvals of \(requestId) that applied")
        approved = requestId
    }
    let requestId = try run.required(approved, "neither approval applied", expected: "one approval applies", actual: "both failed")
    try run.expectEqual(run.matches(.pairingResolved(requestId, .approved)).count, 1,
                        "the number of device.pair.resolved approved for \(requestId)")

    let first = try await run.sessionWithConnectFallback(device: deviceId, from: beforeApproval)
    try await run.expectNoEvent(.session(.node, device: deviceId).named("second node session (the first is \(first.connectionId))"),
                                within: .seconds(3), from: run.mark())
    let sessions = run.sessions(role: .node, deviceId: deviceId)
    try run.expectEqual(sessions.count, 1, "the number of node sessions of \(deviceId) after the approval race")
    let tokens = Set(sessions.compactMap(\.issuedDeviceToken))
    try run.expectEqual(tokens.count, 1, "the number of distinct node device tokens issued to \(deviceId)")
}
