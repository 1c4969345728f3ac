import Conformance
import GatewayProtocol
import MockGateway

let pair002 = Scenario(
    "PAIR-002", .must,
    title: "retries while pending keep one identity, one request and a growing backoff",
    requirement: "While its pairing request is pending, every retry of the client presents the same device identity (device.id and publicKey), so the Gateway keeps one pending request for the device; and a new requestId in a refusal (supersession, which the current Gateway does on every alternation of a device's node and operator connects) is no progress: the retries keep backing off instead of starting over.",
    source: "docs/protocol.md §5.8-5.9, §3.8, §11.3 (requestDevicePairingInWorker)",
    discussion: """
        Lets 24 s of client time pass after the first pairing request (with the connect stimulus \
        for a client that waits for an explicit reconnect), then requires at least two retries, one \
        device.id and publicKey on every connect and exactly one pending request on the Gateway. \
        For a client that retried by itself, no role may connect more than 4 times in the last \
        12 s (on average no more often than every 3 s once it has waited 12 s).
        """,
    tags: ["pairing", "identity", "supersession"],
    profiles: .all
) { run in
    let first = try await run.firstPairingRequest()
    let window = 24
    let bins = await PairingSteps.attemptsPerSecond(run, seconds: window)
    var retriesBySelf = true
    if run.connects().filter(\.isNode).count < 3 {
        guard run.client.supports(.connect) else {
            try run.unsupported("the client did not retry while pending and does not support the connect stimulus")
        }
        retriesBySelf = false
        run.note("the client does not retry by itself: prompting two retries with the connect stimulus")
        for _ in 0..<2 {
            let retry = try await run.reply(to: .connect, until: .connect(.node).named("the node retry after the connect stimulus"))
            _ = try await run.handshakeOutcome(of: retry.connectionId)
        }
    }

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

    guard retriesBySelf else { return }
    let roles = Set(bins.flatMap(\.keys)).sorted()
    for role in roles {
        let counts = bins.map { $0[role] ?? 0 }
        let late = counts.suffix(window / 2).reduce(0, +)
        try run.expect(late <= 4, "the \(role) retries do not back off while pairing is pending",
                       expected: "at most 4 \(role) connection attempts in the last \(window / 2) s of \(window) s",
                       actual: "\(late); attempts per second: \(counts.map(String.init).joined(separator: " "))")
    }
}
