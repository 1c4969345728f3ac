import Conformance
import GatewayProtocol
import MockGateway

let pair002 = Scenario(
    "PAIR-002", .must,
    title: "retries while pending keep one identity and one request",
    requirement: "While its pairing request is pending, every retry of the client presents the same device identity (device.id and publicKey), so the Gateway refreshes one request in place and keeps reporting one requestId instead of collecting new requests.",
    source: "gateway-protocol.md §6.3, §4.1",
    discussion: """
        Lets 12 s of client time pass after the first pairing request (with the connect stimulus \
        for a client that waits for an explicit reconnect), then requires at least two retries, one \
        device.id and publicKey on every connect, exactly one pending request on the Gateway, and \
        the same requestId in the last two refusals.
        """,
    tags: ["pairing", "identity"],
    profiles: .all
) { run in
    let first = try await run.firstPairingRequest()
    // The client keeps retrying while pending: the first node connect and two retries, by itself
    // or, for a client that waits for an explicit reconnect, prompted with the connect stimulus.
    var nodeConnects: [ConnectAttempt]
    do {
        nodeConnects = try await run.waitForEvents("three node connects while pairing is pending", count: 3,
                                                   within: .seconds(12), from: .start) { event in
            ConnectAttempt(event).flatMap { $0.isNode ? $0 : nil }
        }
    } catch let failure as ScenarioFailure {
        guard run.client.supports(.connect) else {
            try run.unsupported("the client did not retry while pending (\(failure.actual ?? "")) and does not support the connect stimulus")
        }
        run.note("the client does not retry by itself: prompting two retries with the connect stimulus")
        for _ in 0..<2 {
            let before = run.mark()
            try await run.client.reply(to: .connect)
            let retry = try await run.nextConnect(role: .node, "the node retry after the connect stimulus", from: before)
            _ = try await run.handshakeOutcome(of: retry.connectionId)
        }
        nodeConnects = run.connects().filter(\.isNode)
    }
    let retries = Array(nodeConnects.dropFirst().suffix(2))
    for retry in retries { _ = try await run.handshakeOutcome(of: retry.connectionId) }

    let connects = run.connects()
    let deviceIds = Set(connects.map { $0.deviceId ?? "(none)" })
    try run.expect(deviceIds == [first.deviceId], "every connect while pending presents the first device.id",
                   expected: first.deviceId, actual: deviceIds.sorted().joined(separator: ", "))
    let keys = Set(connects.map { $0.publicKey ?? "(none)" })
    try run.expectEqual(keys.count, 1, "the number of distinct device.publicKey values while pending")

    let pending = await run.gateway.pendingPairingRequests()
    try run.expect(pending.count == 1 && pending.first?.deviceId == first.deviceId,
                   "the Gateway holds exactly one pending request, for the client's device",
                   expected: "1 request of \(first.deviceId)",
                   actual: "\(pending.count): " + pending.map { "\($0.requestId) of \($0.deviceId)" }.joined(separator: ", "))

    let reported = retries.map { run.toldRequestId(on: $0.connectionId) ?? "(none)" }
    try run.expect(Set(reported) == [pending.first?.requestId ?? ""], "the last two retries are told the one pending requestId",
                   expected: pending.first?.requestId ?? "", actual: reported.joined(separator: ", "))
}
