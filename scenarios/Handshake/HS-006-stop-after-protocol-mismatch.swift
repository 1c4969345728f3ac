import Conformance
import GatewayProtocol
import MockGateway

let hs006 = Scenario(
    "HS-006", .must,
    title: "no automatic reconnect after PROTOCOL_MISMATCH",
    requirement: "After a connect is refused with PROTOCOL_MISMATCH and close 1002, the client does not reconnect automatically with that role.",
    source: "docs/protocol.md §3.6, §11.3",
    discussion: "Runs against a Gateway that speaks only protocol 5, so no client of today can negotiate. Waits until a connect is refused with PROTOCOL_MISMATCH (close 1002), lets 10 s of client time pass (enough for several rounds of any normal backoff), then requires that no further connect request arrived for a role after that role was refused: the mismatch is non-recoverable and only the user may reconnect. A client with several sessions (node and operator) may be refused once per session.",
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
    let start = run.mark()
    let (refusedId, closeCode) = try await run.waitForEvent("a connect refused with PROTOCOL_MISMATCH") { event -> (String, Int)? in
        if case .handshakeRejected(let id, let error, let closeCode) = event,
           error.detailCode == ConnectErrorDetailCode.protocolMismatch.rawValue { (id, closeCode) } else { nil }
    }
    try run.expectEqual(closeCode, 1002, "the Gateway closed the refused connection \(refusedId) with 1002")

    // A rule about time: no automatic reconnect of a refused role within 10 s.
    await run.elapse(.seconds(10))

    // Replays the log: which role each connection asked for, which roles were refused, and
    // which connects came after their role's refusal.
    var roleOfConnection: [String: String] = [:]
    var refusedRoles: Set<String> = []
    var retries: [String] = []
    for event in run.events(from: start) {
        switch event {
        case .frameIn(let id, .request(let request)?, _) where request.method == GatewayMethod.connect.rawValue:
            let role = request.params?["role"]?.stringValue ?? GatewayRole.operator.rawValue
            roleOfConnection[id] = role
            if refusedRoles.contains(role) { retries.append("\(role) connect on \(id)") }
        case .handshakeRejected(let id, let error, _) where error.detailCode == ConnectErrorDetailCode.protocolMismatch.rawValue:
            if let role = roleOfConnection[id] { refusedRoles.insert(role) }
        default:
            break
        }
    }
    try run.expect(retries.isEmpty, "the client reconnected automatically after PROTOCOL_MISMATCH",
                   expected: "no connect of a refused role within 10 s after the refusal",
                   actual: "\(retries.count) more: \(retries.prefix(3).joined(separator: ", "))\(retries.count > 3 ? ", ..." : "")")
}
