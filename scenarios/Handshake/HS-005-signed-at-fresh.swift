import Conformance
import GatewayProtocol
import MockGateway

let hs005 = Scenario(
    "HS-005", .must,
    title: "device.signedAt is fresh on the Gateway clock",
    requirement: "device.signedAt equals the challenge ts or lies within 2 minutes of the Gateway clock when connect arrives.",
    source: "docs/protocol.md §3.11",
    discussion: "Waits for the client's first connection, reads the ts of its connect.challenge, then checks device.signedAt of the connect request: it must equal that ts (what the newest Swift client sends) or differ from the Gateway clock by at most 2 minutes (DEVICE_SIGNATURE_SKEW_MS); otherwise a real Gateway answers DEVICE_AUTH_SIGNATURE_EXPIRED.",
    tags: ["handshake", "identity"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false)
) { run in
    let connectionId = try await run.waitForEvent(.connectionOpened.named("the client's first connection")).connectionId
    let challenge = EventMatcher.sentEvent(.connectChallenge, on: connectionId)
    let challengeTs = try await run.waitForEvent(challenge.map { $0.payload?["ts"]?.int64Value })
    let request = try await run.waitForEvent(.request(.connect, on: connectionId)).request
    let gatewayNowMs = run.gateway.clock.nowMs
    let signedAt = try run.required(request.params?["device"]?["signedAt"]?.int64Value, "connect carries no integer device.signedAt",
                                    expected: "an integer in milliseconds", actual: request.params?["device"]?["signedAt"]?.jsonString ?? "absent")
    let skewMs = (signedAt - gatewayNowMs).magnitude
    try run.expect(
        signedAt == challengeTs || skewMs <= UInt64(DeviceProofVerifier.signatureSkewMs),
        "device.signedAt is more than 2 minutes away from the Gateway clock",
        expected: "the challenge ts \(challengeTs), or within 120000 ms of the Gateway clock \(gatewayNowMs)",
        actual: "signedAt \(signedAt) (\(signedAt - gatewayNowMs) ms from the Gateway clock)")
}
