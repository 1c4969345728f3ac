import Conformance
import GatewayProtocol
import MockGateway

let life001 = Scenario(
    "LIFE-001", .must,
    title: "reconnects after a TCP reset back off",
    requirement: "After an abrupt TCP reset the client reconnects with backoff: while its reconnects keep failing, each session (node, operator) makes no more than 2 connection attempts per second.",
    source: "docs/protocol.md §11.3",
    discussion: "Pairs the client automatically, then resets its node connection without a close frame. For the next 10 s of client time the network stays broken: the reply to every connect is lost and its connection reset (a reconnect that still gets through is reset as soon as its session shows up). The client must try again, but with at most 20 connects per role in those 10 s. Then the network recovers and the client must get a node session again within 60 s.",
    tags: ["lifecycle", "reconnect"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let gateway = run.gateway
    let connect = GatewayMethod.connect.rawValue
    let first = try await run.nodeSession().connectionId
    let broken = run.mark()
    let windowMs = 10_000
    await gateway.dropNextResponse(to: connect, cutConnection: true)
    await gateway.reset(connectionId: first)
    let reset = await withTaskGroup(of: Set<String>.self) { group in
        // The broken network, reacting to what the client does: as soon as a connect reply was
        // swallowed, the next one will be too; a connect that slipped through between two
        // faults gets its session reset.
        group.addTask {
            var reset: Set<String> = []
            for await event in gateway.events.stream(from: broken.position) {
                switch event {
                case .requestHandled(_, let method, _, _) where method == connect:
                    await gateway.dropNextResponse(to: connect, cutConnection: true)
                case .sessionOpened(let session) where session.connectionId != first:
                    let swallowed = gateway.transcript.entries.contains { $0.kind == .dropped && $0.connectionId == session.connectionId }
                    if !swallowed, reset.insert(session.connectionId).inserted { await gateway.reset(connectionId: session.connectionId) }
                default:
                    break
                }
                if Task.isCancelled { break }
            }
            return reset
        }
        // A rule about time: the window the reconnect rate is judged over.
        await run.elapse(.milliseconds(Int64(windowMs)))
        group.cancelAll()
        return await group.next() ?? []
    }
    let window = run.mark()

    var attempts: [String: Int] = [:]
    for event in run.events(from: broken).prefix(window.position - broken.position) {
        if case .frameIn(_, .request(let request)?, _) = event, request.method == connect {
            attempts[request.params?["role"]?.stringValue ?? GatewayRole.operator.rawValue, default: 0] += 1
        }
    }
    try run.expect(!attempts.isEmpty, "the client did not try to reconnect after the TCP reset",
                   expected: "at least one connect within \(windowMs) ms", actual: "none")
    let limit = 2 * windowMs / 1_000
    for (role, count) in attempts.sorted(by: { $0.key < $1.key }) {
        try run.expect(count <= limit, "the client's \(role) session reconnected more than 2 times per second while every attempt failed",
                       expected: "at most \(limit) \(role) connects in \(windowMs) ms", actual: "\(count) connects")
    }

    // The network recovers: no fault is armed any more, except perhaps the last one, which
    // swallows one more connect. A session counts unless its reply was swallowed (the Gateway
    // records that before it reports the session) or it was reset above; it may have come
    // about just before the window ended.
    let recovered: @Sendable (GatewayEvent) -> Bool = { event in
        guard case .sessionOpened(let session) = event, session.role == .node,
              session.connectionId != first, !reset.contains(session.connectionId) else { return false }
        return !gateway.transcript.entries.contains { $0.kind == .dropped && $0.connectionId == session.connectionId }
    }
    try await run.waitForEvent("a node session within 60 s after the network recovered", within: .seconds(60), from: broken,
                               where: recovered)
}
