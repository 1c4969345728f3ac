import Conformance
import GatewayProtocol
import MockGateway

let pair005 = Scenario(
    "PAIR-005", .should,
    title: "a rejected request does not cause a reconnect storm",
    requirement: "When an operator rejects the client's pairing request (and each request it makes after that), each session of the client still reconnects at most twice per second and backs off or pauses.",
    source: "docs/protocol.md §5.10, §11.3",
    discussion: """
        Rejects the device's pending request, then, for 12 seconds of client time, rejects every new \
        request of the device at the start of each second while counting connection attempts per \
        session role: no second may hold more than 2, and the last 6 s may not hold more than the \
        first 6 s.
        """,
    tags: ["pairing", "reconnect"],
    profiles: .all
) { run in
    let deviceId = try await run.firstPairingRequest().deviceId
    let gateway = run.gateway
    @Sendable func rejectPending() async -> Int {
        var rejected = 0
        for request in await gateway.pendingPairingRequests() where request.deviceId == deviceId {
            do {
                try await gateway.reject(requestId: request.requestId)
                run.note("rejected pairing request \(request.requestId)")
                rejected += 1
            } catch {
                run.note("could not reject \(request.requestId): \(error)")
            }
        }
        return rejected
    }
    // The first connect has been told to pair before its request is rejected.
    try await run.waitForEvent("the PAIRING_REQUIRED refusal of the first connect", from: .start) { event in
        if case .handshakeRejected(_, let error, _) = event { error.detailCode == ConnectErrorDetailCode.pairingRequired.rawValue }
        else { false }
    }
    var rejections = await rejectPending()
    try run.expect(rejections > 0, "the client's pending request could be rejected", expected: "a pending request", actual: "none")
    let bins = await PairingSteps.attemptsPerSecond(run, seconds: 12) { rejections += await rejectPending() }
    run.note("rejected \(rejections) requests in all")
    try PairingSteps.checkRate(run, bins, while: "after its pairing request was rejected")
}
