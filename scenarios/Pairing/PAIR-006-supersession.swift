import Conformance
import GatewayProtocol
import MockGateway

let pair006 = Scenario(
    "PAIR-006", .must,
    title: "a changed ask supersedes the pending request; the client follows the new requestId",
    requirement: "A retry of the same device with a changed role or scope set (or, on the current Gateway, a retry of the device's other role) replaces every pending request of the device with one new request whose roles and scopes merge the old and the new ask; the client keeps waiting on (and retrying for) the newest requestId, approving a superseded id fails, and approving the newest one lets every session of the device in.",
    source: "docs/protocol.md §5.9-5.10 (requestDevicePairingInWorker)",
    discussion: """
        After the first pairing request, asks the client for more operator scopes (request-scopes), \
        then requires one pending request of the device with a new requestId that merges the node \
        role with the new scopes, refuses to approve the first requestId, lets the client retry and \
        requires its node session to be told a new requestId (the merged one, or a newer one when \
        the device's other role retried meanwhile), approves the newest pending request and \
        requires every role the device asked for to get a session. A client that retried by itself \
        must reconnect by itself after the approval; one that waits for an explicit reconnect gets \
        the connect stimulus.
        """,
    tags: ["pairing", "supersession"],
    needs: [.requestScopes],
    profiles: .all
) { run in
    let first = try await run.firstPairingRequest()
    let deviceId = first.deviceId
    let addedScope = "operator.admin"
    try await run.client.reply(to: .requestScopes([addedScope]))

    // The changed ask is proven by the Gateway: the device's pending requests are superseded by
    // one new request.
    let (newRequestId, afterSupersession) = try await run.waitForMatch(.superseded(of: first.requestId), from: .start)
    run.note("superseded \(first.requestId) by \(newRequestId)")
    let merged = try await run.expectOnePendingRequest(of: deviceId, "after asking for more scopes")
    try run.expect(merged.requestId != first.requestId, "the changed ask gets a new requestId",
                   expected: "an id other than \(first.requestId)", actual: merged.requestId)
    try run.expect(merged.roles.contains(.node) && merged.scopes.contains(addedScope),
                   "the new request merges the pending node ask with the new scopes",
                   expected: "roles ⊇ [node], scopes ⊇ [\(addedScope)]", actual: "roles \(merged.roles), scopes \(merged.scopes)")
    try await run.expectThrows("approving the superseded request \(first.requestId) fails") {
        _ = try await run.gateway.approve(requestId: first.requestId)
    }

    // The client follows the new id: a node retry after the supersession is told the merged
    // requestId (by itself, or prompted with the connect stimulus).
    let (nodeRetry, prompted) = try await run.untilClientOrPrompted(.connect(.node).named("a node retry after the supersession"),
                                                                    from: afterSupersession)
    let outcome = try await run.handshakeOutcome(of: nodeRetry.connectionId)
    // The current Gateway supersedes again whenever the device's other role retries (the primary
    // role is part of the comparison), so the retry may be told an id newer than `merged`: any
    // id but the first one, of this device.
    let told = run.toldRequestId(on: nodeRetry.connectionId)
    let ids = run.pairingRequestIds(deviceId: deviceId).union([merged.requestId])
    try run.expect(told.map { $0 != first.requestId && ids.contains($0) } ?? false,
                   "the node session's retry after the supersession is told a new requestId",
                   expected: "\(merged.requestId) or a newer request of \(deviceId)", actual: told ?? outcome.summary)

    // Approving the newest request lets every session of the device in.
    let roles = Set(run.connects().filter { $0.deviceId == deviceId }.map(\.role))
    let cursor = try await run.mark { try await run.approveNewest(deviceId: deviceId) }
    for role in roles.sorted() {
        try await run.sessionWithConnectFallback(GatewayRole(rawValue: role), device: deviceId, from: cursor,
                                                 "a \(role) session of \(deviceId) after approving the newest request",
                                                 connectFallback: prompted)
    }
}
