import Conformance
import GatewayProtocol
import MockGateway

let pair012 = Scenario(
    "PAIR-012", .must,
    title: "an expired pending request is not resurrected; the client's next retry asks anew",
    requirement: "A pending pairing request expires 5 minutes after the device's last retry and is gone for good: the client's next retry (by itself, or when the user reconnects) uses the same identity and creates a new request with a new requestId.",
    source: "docs/protocol.md §5.9, §11.3",
    discussion: """
        Waits for the refusal of the client's first connect, moves the Gateway clock 301 s ahead \
        (no retry in between, so the request expires), then lets the client's time pass: the next \
        retry of a session that was told to pair before the expiry must be told a requestId \
        created after the expiry, and no expired request may be refreshed. A client that pauses \
        until the user acts after PAIRING_REQUIRED (upstream's TypeScript client and OpenClawKit \
        do) gets the connect stimulus after 12 s without a retry, as in PAIR-001.
        """,
    tags: ["pairing", "expiry"],
    profiles: .all
) { run in
    let deviceId = try await run.firstPairingRequest().deviceId
    // The first connect has its answer before the Gateway's time jumps.
    try await run.firstPairingRefusal()
    let refusedBefore = Set(run.connects().filter { run.handshakeOutcome(of: $0.connectionId)?.refusal != nil }.map(\.role))

    let cursor = await run.mark { await run.advance(by: .seconds(301)) }
    let (expired, afterExpiry) = try await run.waitForMatch(.pairingExpired(device: deviceId)
        .named("the expiry of the device's pending request"), from: cursor)
    let known = run.pairingRequestIds(deviceId: deviceId)
    // The next retry of a session that was told to pair before the expiry (not a first ask of
    // another session) must create a new request.
    let retry = try await run.untilClient(
        .connect(device: deviceId).filter { refusedBefore.contains($0.role) }
            .named("a retry of a session refused before the expiry (\(refusedBefore.sorted()))"),
        from: afterExpiry)
    let outcome = try await run.handshakeOutcome(of: retry.connectionId)
    let told = try run.required(run.toldRequestId(on: retry.connectionId), "the retry after the expiry is not told to pair",
                                expected: "PAIRING_REQUIRED with a requestId", actual: outcome.summary)
    try run.expect(!known.contains(told) || run.matches(.pairingRequest(), from: afterExpiry).contains { $0.requestId == told },
                   "the retry after the expiry gets a new requestId", expected: "a request created after the expiry", actual: told)
    try run.expect(told != expired, "the retry after the expiry is not told the expired requestId \(expired)",
                   expected: "a new requestId", actual: told)
    let resurrected = run.events(from: cursor).contains { event in
        if case .pairingRefreshed(let info) = event { known.contains(info.requestId) && info.requestId != told } else { false }
    }
    try run.expect(!resurrected, "the expired request \(expired) is not refreshed again", expected: "no refresh", actual: "refreshed")
}
