import Conformance
import GatewayProtocol
import MockGateway

let hs015 = Scenario(
    "HS-015", .must,
    title: "a connect.challenge without an integer ts is not signed",
    requirement: "A connect.challenge whose ts is missing or not an integer is invalid: the client sends no connect on that connection (it does not sign with its own clock), and it gets a session on a later connection whose challenge is valid, signing with signedAt = that challenge's ts.",
    source: "docs gateway/protocol.md \"Handshake\"; docs/protocol.md §3.2",
    discussion: """
        Makes the Gateway send the first connection's challenge without ts, starts the client and \
        requires no connect request on that connection. The connection ends (the Gateway's \
        handshake timeout, or the client gives up on it); the client must then reconnect and get \
        a node session within 40 s (a client that waits for the user instead, as upstream's \
        TypeScript client does, gets the connect stimulus then, as in PAIR-001), and that \
        session's connect must sign with the challenge ts.
        """,
    tags: ["handshake", "challenge"],
    profiles: .all,
    options: Scenario.Options(startsClient: false, configureGateway: { $0.autoApproval = .auto })
) { run in
    await run.gateway.sendNextChallengesWithoutTs(1)
    try await run.client.start()
    let (malformed, afterFirst) = try await run.waitForMatch("the client's first connection") { event in
        if case .connectionOpened(let id, _, _) = event { id } else { nil }
    }
    // A client may wait for the user after an invalid challenge (upstream's TypeScript client
    // does): it gets the connect stimulus when it does not reconnect by itself.
    let session = try await run.sessionWithConnectFallback(from: afterFirst, "a node session on a connection with a valid challenge",
                                                           within: .seconds(40))
    let onMalformed = run.connects().filter { $0.connectionId == malformed }
    try run.expect(onMalformed.isEmpty, "the client sent a connect after a challenge without ts",
                   expected: "no connect on \(malformed), whose challenge had no ts",
                   actual: onMalformed.map { "\($0.role) connect signed at \($0.params["device"]?["signedAt"]?.jsonString ?? "?")" }
                       .joined(separator: ", "))
    // The session's connect signs with its own challenge's ts.
    let challengeTs = run.events().lazy.compactMap { event -> Int64? in
        if case .frameOut(let id, .event(let frame)) = event, id == session.connectionId,
           frame.event == GatewayEventName.connectChallenge.rawValue { frame.payload?["ts"]?.int64Value } else { nil }
    }.first
    let signedAt = run.connect(on: session.connectionId)?.params["device"]?["signedAt"]?.int64Value
    try run.expect(challengeTs != nil && signedAt == challengeTs, "the session's connect signs with signedAt = the challenge ts",
                   expected: challengeTs.map(String.init) ?? "a challenge ts", actual: signedAt.map(String.init) ?? "no signedAt")
}
