import Conformance
import GatewayProtocol
import MockGateway

let hs014 = Scenario(
    "HS-014", .must,
    title: "close 4001 gateway auth changed: reconnect with the current credentials",
    requirement: "When the Gateway closes a session with 4001 \"gateway auth changed\" (its shared secret was changed or reloaded), the client does not take the close as final: it reconnects, reading its credentials afresh, and gets a session of that role again.",
    source: "connect-auth.ts @9b6c33a7 (deviceTokenSharedGatewaySessionGeneration); docs/protocol.md §10.5",
    discussion: """
        Runs a Gateway with a shared token the client is given and waits for a node session that \
        authenticated with it. Then reloads the shared secret (the same value, a new generation), \
        which closes every session of the old generation with 4001, and requires a new session \
        of each closed role within 30 s.
        """,
    tags: ["handshake", "reconnect", "auth"],
    profiles: .all,
    options: Scenario.Options(sharedToken: "hs014-shared-token", configureGateway: { $0.autoApproval = .auto })
) { run in
    let session = try await run.nodeSession("a node session", within: .seconds(20))
    try run.expectEqual(session.authMethod, "token", "how the node session authenticated")
    let cursor = await run.mark { await run.gateway.changeSharedSecret(.token("hs014-shared-token")) }
    let (code, _) = try await run.expectClosed(session.connectionId, "the close of the node session \(session.connectionId)",
                                               from: cursor, within: .seconds(5))
    try run.expectEqual(code, Int(GatewayCloseCode.gatewayAuthChanged.rawValue), "the close code of the node session")
    let after = run.mark()
    _ = try await run.nodeSession("a new node session after close 4001", from: after, within: .seconds(30))
    // Every other session closed with 4001 comes back too.
    let closed = run.events(from: cursor).compactMap { event -> String? in
        if case .connectionClosed(let id, 4001, _) = event, id != session.connectionId { id } else { nil }
    }
    let otherRoles = Set(run.sessions().filter { closed.contains($0.connectionId) }.map(\.role))
    for role in otherRoles.sorted(by: { $0.rawValue < $1.rawValue }) {
        try await run.waitForEvent(.session(role).named("a new \(role) session after close 4001"), within: .seconds(30), from: after)
    }
}
