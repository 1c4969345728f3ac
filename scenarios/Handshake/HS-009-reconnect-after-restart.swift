import Conformance
import GatewayProtocol
import MockGateway

let hs009 = Scenario(
    "HS-009", .must,
    title: "after shutdown and close 1012 the client comes back",
    requirement: "After a shutdown event and close 1012 (service restart), the client reconnects once the Gateway accepts connections again.",
    source: "docs/protocol.md §11.4, §10.5",
    discussion: "Pairs the client automatically, then restarts the Gateway: shutdown {restartExpectedMs: 1000}, close 1012 on every socket, 1 s in which new sockets are refused, then connections are accepted again. Within 30 s of client time the client must open a new node session (durable pairing state survives the restart, so it is admitted).",
    tags: ["lifecycle", "reconnect"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let connectionId = try await run.nodeSession().connectionId
    let restart = await run.mark { await run.gateway.beginRestart(restartExpectedMs: 1_000) }
    let (closeCode, _) = try await run.expectClosed(connectionId, "the end of \(connectionId)", from: restart)
    try run.expectEqual(closeCode, 1012, "the node session ended with close 1012 (service restart)")
    await run.elapse(.seconds(1))
    let back = await run.mark { await run.gateway.resumeAfterRestart() }
    try await run.nodeSession("a new node session within 30 s after the Gateway accepted connections again",
                              from: back, within: .seconds(30))
}
