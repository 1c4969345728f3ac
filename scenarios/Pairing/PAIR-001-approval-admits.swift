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
    let request = try await run.firstPairingRequest()
    let deviceId = request.deviceId
    let refusal = try await run.waitForEvent("the PAIRING_REQUIRED refusal of the first connect", from: .start) { event in
        if case .handshakeRejected(_, let error, let closeCode) = event,
           error.detailCode == ConnectErrorDetailCode.pairingRequired.rawValue { (error, closeCode) } else { nil }
    }
    try run.expectEqual(refusal.0.code, ErrorCode.notPaired.rawValue, "the refusal's error.code")
    try run.expectEqual(refusal.1, 1008, "the refused connection's close code")

    let cursor = run.mark()
    try await run.approveNewest(deviceId: deviceId)
    let session = try await run.untilClient("hello-ok for a node session of the approved device \(deviceId)", from: cursor) { event in
        if case .sessionOpened(let info) = event, info.role == GatewayRole.node.rawValue, info.deviceId == deviceId { info } else { nil }
    }
    try run.expect(session.issuedDeviceToken != nil, "hello-ok carries auth.deviceToken for the approved node",
                   expected: "a device token", actual: "none")
}
