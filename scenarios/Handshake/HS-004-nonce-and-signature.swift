import Conformance
import GatewayProtocol
import MockGateway

let hs004 = Scenario(
    "HS-004", .must,
    title: "connect echoes the challenge nonce and signs the v3 or v2 payload",
    requirement: "device.nonce equals this connection's connect.challenge nonce, and device.signature is a valid Ed25519 signature over the v3 or v2 payload built with that nonce.",
    source: "docs/protocol.md §3.9-3.11",
    discussion: "Waits for the client's first connection and its connect request, then checks that device.nonce is that connection's challenge nonce and verifies device.signature against the v3 payload and, failing that, the v2 payload rebuilt from the connect params with the challenge nonce (the legacy v1 payload, which has no nonce, is not accepted).",
    tags: ["handshake", "identity"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false)
) { run in
    let (connectionId, nonce) = try await run.waitForEvent(.connectionOpened.named("the client's first connection")).fields
    let request = try await run.waitForEvent(.request(.connect, on: connectionId)).request
    let params: ConnectParams
    switch ConnectParams.validate(request.params) {
    case .success(let valid): params = valid
    case .failure(let problem):
        try run.fail("the connect params are not schema-valid", expected: "valid connect params", actual: problem.message)
    }
    guard let device = params.device else {
        try run.fail("connect carries no device identity", expected: "params.device", actual: "no device block")
    }
    try run.expectEqual(device.nonce, nonce, "device.nonce echoes this connection's challenge nonce")
    let verified = [DeviceAuthPayload.Version.v3, .v2].first { version in
        guard let payload = DeviceAuthPayload.build(version, for: params, nonce: nonce) else { return false }
        return DeviceIdentity.verify(signature: device.signature, payload: payload, publicKey: device.publicKey)
    }
    try run.expect(verified != nil, "device.signature verifies over neither the v3 nor the v2 payload with this connection's nonce",
                   expected: "a valid signature over \(DeviceAuthPayload.build(.v3, for: params, nonce: nonce) ?? "the v3 payload") (or its v2 form)",
                   actual: "signature \(device.signature)")
}
