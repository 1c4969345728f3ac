import Conformance
import GatewayProtocol
import MockGateway

let pair001 = Scenario(
    "PAIR-001", .must,
    title: "an unpaired client is told to pair, and gets in after approval",
    requirement: "An unpaired client's connect is refused with NOT_PAIRED / details.code PAIRING_REQUIRED and close 1008; after an operator approves its pending request, the client connects again with the same identity and receives hello-ok.",
    source: "docs/protocol.md §5.8-5.10",
    discussion: """
        Waits for the fresh client's first pairing request and the PAIRING_REQUIRED refusal, approves \
        the device's pending request (its replacement, if the client's other session superseded it), \
        then lets the client reconnect by itself or sends the connect stimulus, and requires a node \
        session with hello-ok for the approved device.
        """,
    tags: ["pairing"],
    profiles: .all
) { run in
    let deviceId = try await run.firstPairingRequest().deviceId
    let refusal = try await run.waitForEvent(.refusal(.pairingRequired), from: .start)
    try run.expectEqual(refusal.error.code, ErrorCode.notPaired.rawValue, "the refusal's error.code")
    try run.expectEqual(refusal.closeCode, 1008, "the refused connection's close code")

    let cursor = run.mark()
    try await run.approveNewest(deviceId: deviceId)
    let session = try await run.sessionWithConnectFallback(device: deviceId, from: cursor)
    try run.expect(session.issuedDeviceToken != nil, "hello-ok carries auth.deviceToken for the approved node",
                   expected: "a device token", actual: "none")
}
