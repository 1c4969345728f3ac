import Conformance
import GatewayProtocol
import MockGateway

/// How many reconnects of a refused role a client that is not an app may make in HS-006's 10 s
/// (see the discussion for the margins).
let hs006MaximumRetries = 5

let hs006 = Scenario(
    "HS-006", .must,
    title: "no automatic reconnect after PROTOCOL_MISMATCH (apps); no faster than backoff (other clients)",
    requirement: "After a connect is refused with PROTOCOL_MISMATCH and close 1002, an app (client.id openclaw-ios, openclaw-android, openclaw-macos) does not reconnect automatically with that role; any other client reconnects no faster than a backoff.",
    source: "docs/protocol.md §3.4, §3.6, §11.3",
    discussion: """
        Runs against a Gateway that speaks only protocol 5, so no client of today can negotiate. \
        Waits until a connect is refused with PROTOCOL_MISMATCH (close 1002) (a precondition: a \
        client refused for another reason first is told so, with the codes it got), lets 10 s of \
        client time pass, then judges every role that was refused by the kind of client that \
        asked, from the refused connect's client.id: an app must send no further connect for that \
        role (the mismatch is non-recoverable; OpenClawKit and the Android app stop); any other \
        client (upstream's TypeScript Gateway client, used by the CLI and `openclaw node run`, \
        keeps reconnecting with a backoff from 1 s: packages/gateway-client/src/client.ts@009f87da \
        does not pause on PROTOCOL_MISMATCH, only the Control UI sets protocolMismatchIsTerminal) \
        may reconnect, at most 5 times in those 10 s. Margins: a backoff doubling from 1 s makes \
        3 reconnects in 10 s, one doubling from 0.25 s makes 5; a client that retries at a steady \
        pace of 1.6 s or faster makes at least 6. The kind is shown in the transcript and in a \
        failure. A client with several sessions (node and operator) may be refused once per session.
        """,
    tags: ["handshake", "reconnect"],
    profiles: .all,
    // Judges the handshake itself: it runs even when the client never gets a session.
    options: Scenario.Options(needsSession: false, configureGateway: { configuration in
        // A Gateway from the future: protocol 5 only, for operators and nodes alike.
        configuration.profile.protocolVersion = 5
        configuration.profile.minimumClientProtocol = 5
        configuration.profile.minimumNodeProtocol = 5
    })
) { run in
    // The whole log: the runner started the client before this script, so its first connects
    // may already be in it.
    let start = EventCursor.start
    let mismatch = EventMatcher.refusal(.protocolMismatch)
    let refusal = try await run.precondition(mismatch.description) { try await run.waitForEvent(mismatch, from: start) }
    try run.expectEqual(refusal.closeCode, 1002, "the Gateway closed the refused connection \(refusal.connectionId) with 1002")

    // A rule about time: what the client does in the 10 s after the refusal.
    await run.elapse(.seconds(10))

    // Replays the log: which role each connection asked for, which roles were refused (and by
    // which kind of client), and which connects came after their role's refusal.
    var attemptOf: [String: ConnectAttempt] = [:]
    var refusedKinds: [String: (kind: ClientKind, clientId: String)] = [:]
    var retries: [String: [String]] = [:]
    for event in run.events(from: start) {
        if let attempt = ConnectAttempt(event) {
            attemptOf[attempt.connectionId] = attempt
            if refusedKinds[attempt.role] != nil { retries[attempt.role, default: []].append(attempt.connectionId) }
        } else if let refused = mismatch.match(event), let attempt = attemptOf[refused.connectionId],
                  refusedKinds[attempt.role] == nil {
            refusedKinds[attempt.role] = (ClientKind(attempt), attempt.clientId ?? "no client.id")
        }
    }
    for (role, refused) in refusedKinds.sorted(by: { $0.key < $1.key }) {
        let again = retries[role] ?? []
        let kind = "client kind: \(refused.kind) (client.id \(refused.clientId))"
        run.note("\(role) refused with PROTOCOL_MISMATCH; \(kind); \(again.count) reconnect\(again.count == 1 ? "" : "s") in 10 s")
        let listed = again.prefix(3).joined(separator: ", ") + (again.count > 3 ? ", ..." : "")
        switch refused.kind {
        case .app:
            try run.expect(again.isEmpty, "the app reconnected its \(role) session automatically after PROTOCOL_MISMATCH (\(kind))",
                           expected: "no \(role) connect within 10 s after the refusal",
                           actual: "\(again.count) \(role) connect\(again.count == 1 ? "" : "s"): \(listed)")
        case .other:
            try run.expect(again.count <= hs006MaximumRetries,
                           "the \(role) session reconnected faster than a backoff after PROTOCOL_MISMATCH (\(kind))",
                           expected: "at most \(hs006MaximumRetries) \(role) connects within 10 s after the refusal",
                           actual: "\(again.count): \(listed)")
        }
    }
}
