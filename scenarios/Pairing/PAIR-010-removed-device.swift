import Conformance
import GatewayProtocol
import MockGateway

let pair010 = Scenario(
    "PAIR-010", .must,
    title: "a removed device is disconnected and asks for pairing again",
    requirement: "Removing a paired device closes its sessions (1008); the client reconnects by itself, keeps its identity, and its next connect gets PAIRING_REQUIRED with a fresh pairing request.",
    source: "docs/protocol.md §5.6, §5.9",
    discussion: """
        Pairs the client, removes the device, requires its node session to be closed with 1008, \
        lets the client's time pass (no connect stimulus) and requires the node session to reconnect \
        with the same device and be refused with PAIRING_REQUIRED under a new requestId, and no \
        session of the removed device in the meantime.
        """,
    tags: ["pairing", "reconnect"],
    profiles: .all
) { run in
    let session = try await run.pairClient()
    let deviceId = try run.deviceId(of: session)
    let earlierRequests = run.pairingRequestIds(deviceId: deviceId)

    let removal = try await run.mark { try await run.gateway.removeDevice(deviceId) }
    run.note("removed device \(deviceId)")
    let (closeCode, _) = try await run.expectClosed(session.connectionId, "the close of the removed device's node session", from: removal)
    try run.expectEqual(closeCode, 1008, "the close code of the removed device's session")

    // The closed node session itself must come back and be told to pair again.
    let reconnect = try await run.untilClient(.connect(.node, device: deviceId).named("the node session's reconnect after the removal"),
                                              from: removal, connectFallback: false)
    let refusal = try await run.expectRefused(reconnect.connectionId, with: .pairingRequired, "the removed device's reconnect is not told to pair")
    let requestId = refusal.details?["requestId"]?.stringValue ?? ""
    try run.expect(!requestId.isEmpty && !earlierRequests.contains(requestId), "the reconnect gets a fresh pairing request",
                   expected: "a requestId other than \(earlierRequests.sorted())", actual: requestId.isEmpty ? "no requestId" : requestId)
    try await run.expect(!run.pendingRequests(of: deviceId).isEmpty, "the removed device has a pending request again",
                         expected: "a pending request", actual: "none")
    let admitted = run.sessions(role: .node, deviceId: deviceId, from: removal)
    try run.expect(admitted.isEmpty, "the removed device is not admitted before a new approval",
                   expected: "no session", actual: "\(admitted.count) node sessions")
}
