import Conformance
import GatewayProtocol
import MockGateway

/// How long PAIR-005 counts attempts, in seconds of client time, and how many one role may make
/// in that time (see the discussion for the margins).
let pair005WindowSeconds = 30
let pair005MaximumAttempts = 10

let pair005 = Scenario(
    "PAIR-005", .should,
    title: "a rejected request does not cause a reconnect storm",
    requirement: "When an operator rejects the client's pairing request (and each request it makes after that), each session of the client still reconnects at most twice per second and backs off or pauses: at most 10 attempts in 30 s.",
    source: "docs/protocol.md §5.10, §11.3",
    discussion: """
        Rejects the device's pending request, then, for 30 seconds of client time, rejects every new \
        request of the device at the start of each second while counting connection attempts per \
        session role: no second may hold more than 2, and the 30 s may hold at most 10. Margins: a \
        client that backs off (0.5 s doubling makes 5 attempts in 30 s; 1 s growing by 1.7 up to \
        8 s makes 6) stays well under 10, and one that retries at a steady pace of 2.5 s or faster \
        without backing off makes at least 12, so it fails on every run whatever the phase of its \
        retries against the seconds counted (a 12 s window with "the last half holds no more than \
        the first" let a steady 500 ms retry through now and then).
        """,
    tags: ["pairing", "reconnect"],
    profiles: .all,
    options: Scenario.Options(timeoutMs: 90_000)
) { run in
    let deviceId = try await run.firstPairingRequest().deviceId
    // The first connect has been told to pair before its request is rejected.
    try await run.firstPairingRefusal()
    var rejections = await run.rejectPending(of: deviceId)
    try run.expect(rejections > 0, "the client's pending request could be rejected", expected: "a pending request", actual: "none")
    let bins = await PairingSteps.attemptsPerSecond(run, seconds: pair005WindowSeconds) { rejections += await run.rejectPending(of: deviceId) }
    run.note("rejected \(rejections) requests in all")
    try PairingSteps.checkRate(run, bins, atMost: pair005MaximumAttempts, while: "after its pairing request was rejected")
}
