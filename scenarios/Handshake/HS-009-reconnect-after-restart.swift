import Conformance
import GatewayProtocol
import MockGateway

let hs009 = Scenario(
    "HS-009", .must,
    title: "after shutdown and close 1012 the client comes back",
    requirement: "After a shutdown event and close 1012 (service restart), the client reconnects once the Gateway accepts connections again.",
    source: "gateway-protocol.md §2.10, §9.5",
    discussion: "Pairs the client automatically, then restarts the Gateway: shutdown {restartExpectedMs: 1000}, close 1012 on every socket, 1 s in which new sockets are refused, then connections are accepted again. Within 30 s of client time the client must open a new node session (durable pairing state survives the restart, so it is admitted).",
    tags: ["lifecycle", "reconnect"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let connectionId = try await run.waitForEvent("the client's node session") { event -> String? in
        if case .sessionOpened(let session) = event, session.role == GatewayRole.node.rawValue { session.connectionId } else { nil }
    }
    let restart = run.mark()
    await run.gateway.beginRestart(restartExpectedMs: 1_000)
    let closeCode = try await run.waitForEvent("the end of \(connectionId)", from: restart) { event -> Int? in
        if case .connectionClosed(let id, let code, _) = event, id == connectionId { code } else { nil }
    }
    try run.expectEqual(closeCode, 1012, "the node session ended with close 1012 (service restart)")
    await run.elapse(.seconds(1))
    await run.gateway.resumeAfterRestart()
    let back = run.mark()

    let reconnected: @Sendable (GatewayEvent) -> Bool = { event in
        if case .sessionOpened(let session) = event { session.role == GatewayRole.node.rawValue } else { false }
    }
    // Client time passes in small steps until the node is back (at most 30 s); then the client
    // gets real time to finish what the last step started.
    for _ in 0..<60 where !run.gateway.events.elements(from: back.position).contains(where: reconnected) {
        await run.elapse(.milliseconds(500))
    }
    try await run.waitForEvent("a new node session within 30 s after the Gateway accepted connections again",
                               from: back, where: reconnected)
}
