import Conformance
import GatewayProtocol
import MockGateway

let pair003 = Scenario(
    "PAIR-003", .should,
    title: "no reconnect storm while pairing is pending",
    requirement: "While its pairing request is pending, each session of the client reconnects at most twice per second and backs off (or pauses until an explicit reconnect) instead of retrying at a steady pace.",
    source: "docs/protocol.md §11.3, §5.8",
    discussion: """
        After the first PAIRING_REQUIRED, counts the client's connection attempts in each of 12 \
        seconds of its time, per session role: no second may hold more than 2, and the last 6 s may \
        not hold more attempts than the first 6 s.
        """,
    tags: ["pairing", "reconnect"],
    profiles: .all
) { run in
    _ = try await run.firstPairingRequest()
    let bins = await PairingSteps.attemptsPerSecond(run, seconds: 12)
    try PairingSteps.checkRate(run, bins, while: "while pairing is pending")
}
