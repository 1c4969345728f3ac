import Conformance
import GatewayProtocol
import MockGateway

let hs016 = Scenario(
    "HS-016", .must,
    title: "a client that speaks protocol 3 reaches a protocol-3 Gateway; one that does not stops",
    requirement: "Moved to an older Gateway that speaks only protocol 3, a client whose range includes 3 connects at protocol 3 (offering 3 at once, or falling back after PROTOCOL_MISMATCH with expectedProtocol 3); a client that does not speak 3 stops instead of repeating the refused range.",
    source: "docs/protocol.md §3.6, §11.3",
    discussion: """
        Pairs the client automatically on a current Gateway (protocol 4) and reads the range of \
        its first node connect. A second Gateway of the protocol-3 generation (profile protocol3: \
        hello-ok.protocol 3, a range without 3 refused with PROTOCOL_MISMATCH, expectedProtocol 3) \
        is started and the client is switched to it. When the first range included 3 the client \
        speaks 3: a node session on the older Gateway, announced with protocol 3, must follow \
        within 15 s (a client that pinned the version it negotiated before is refused). \
        Otherwise, within 10 s no node connect may repeat a range without 3 after the refusal.
        """,
    tags: ["handshake", "switch"],
    needs: [.switchGateway],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.nodeSession()
    guard let first = run.matches(.connect(.node), from: .start).first else {
        throw ScenarioFailure("the client's first node connect (precondition)", expected: "a node connect", actual: "none")
    }
    run.note("the client's first node connect offered \(first.protocolRange.low)..\(first.protocolRange.high)")

    let older = try await run.startGateway(profile: .protocol3) { $0.autoApproval = .auto }
    let switched = run.mark(on: older)
    try await run.client.stimulate(.switchGateway(url: older.url))
    if first.offers(protocol: 3) {
        let session = try await run.waitForEvent(.session(.node).named("a node session on the protocol-3 Gateway"),
                                                 within: .seconds(15), from: switched, on: older)
        try run.expectEqual(session.protocolVersion, 3, "the protocol of the node session on the older Gateway")
        return
    }
    await run.elapse(.seconds(10))
    let connects = run.matches(.connect(.node), from: switched, on: older)
    let refusedAt = run.matches(.refusal(.protocolMismatch), from: switched, on: older).first?.connectionId
    guard let refusedAt, let index = connects.firstIndex(where: { $0.connectionId == refusedAt }) else { return }
    let repeats = connects[(index + 1)...].filter { !$0.offers(protocol: 3) }
    try run.expect(repeats.isEmpty, "the client repeated a range without 3 after PROTOCOL_MISMATCH with expectedProtocol 3",
                   expected: "no such connect within 10 s", actual: repeats.map(\.connectionId).joined(separator: ", "))
}
