import Conformance
import GatewayProtocol
import MockGateway

let life003 = Scenario(
    "LIFE-003", .must,
    title: "a reply that takes 2 s is waited for",
    requirement: "A Gateway that answers slowly (2 s) does not make the client give up on a request early: the connect reply arriving after 2 s is accepted on the same socket.",
    source: "gateway-protocol.md §9.3",
    discussion: "Holds every Gateway reply back, then starts the client; its connect is answered 2 s late on the run's time line (virtual time in a simulated run, real time for a client process). The client must neither close nor replace that socket: an invoke sent afterwards goes to the same connection and is answered. Known request timeouts are far longer (Swift 30 s for connect and 15 s per request, TypeScript 30 s).",
    tags: ["lifecycle", "timeouts"],
    profiles: .all,
    options: Scenario.Options(startsClient: false, needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let gateway = run.gateway
    // The reply is held for 2 s on the run's time line (virtual in a simulated run).
    await gateway.delayResponses(by: run.scaled(.seconds(2)))
    try await run.client.start()
    let probe = try await run.probeCommand()
    let session = try await run.nodeSession("the client's node connect (its hello-ok held back for 2 s)")
    let connectionId = session.connectionId
    guard let nodeId = session.deviceId else { try run.fail("the node session has no device id") }
    // The held reply goes out 2 s after the connect (the session is recorded when it is queued).
    await run.elapse(.milliseconds(2_500))
    await gateway.delayResponses(by: nil)

    // The invoke is queued behind the held hello-ok, so it arrives after it.
    let start = run.mark()
    async let outcome = gateway.invoke(nodeId: nodeId, command: probe, params: run.probeParams(for: probe), wait: run.stepTimeout)
    let sentOn = try await run.waitForEvent("the node.invoke.request after the slow connect reply", from: start) { event in
        if case .invokeSent(_, _, _, let id) = event { id } else { nil }
    }
    try run.expectEqual(sentOn, connectionId, "the node still uses the connection whose connect reply was slow")
    let result = await outcome
    guard case .result = result else {
        try run.fail("the client gave up on the connection whose connect reply took 2 s",
                     expected: "a node.invoke.result on \(connectionId)", actual: "\(result)")
    }
    try await run.expectNoEvent(within: .zero, "close of \(connectionId)", from: start) { event in
        if case .connectionClosed(let id, _, _) = event { id == connectionId } else { false }
    }
}
