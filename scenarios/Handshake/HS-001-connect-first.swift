import Conformance
import GatewayProtocol
import MockGateway

let hs001 = Scenario(
    "HS-001", .must,
    title: "connect is the first request and answers this connection's challenge",
    requirement: "The client waits for connect.challenge and sends connect as its first request, echoing the challenge nonce in device.nonce.",
    source: "docs/protocol.md §3.1-3.2, §3.11",
    discussion: "Waits for the client's first connection and checks that its first frame is a connect request whose device.nonce is the nonce the Gateway sent on that connection.",
    tags: ["handshake"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false)
) { run in
    let (connectionId, nonce) = try await run.waitForEvent(.connectionOpened.named("the client's first connection")).fields
    let request = try await run.firstRequest(on: connectionId)
    try run.expectEqual(request.method, "connect", "the first request is connect")
    let sentNonce = request.params?["device"]?["nonce"]?.stringValue
    try run.expectEqual(sentNonce, nonce, "device.nonce echoes this connection's challenge nonce")
}
