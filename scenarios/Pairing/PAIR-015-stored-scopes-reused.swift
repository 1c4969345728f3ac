import Conformance
import GatewayProtocol
import MockGateway

let pair015 = Scenario(
    "PAIR-015", .should,
    title: "the scopes of hello-ok.auth.scopes are stored with the token and asked for again",
    requirement: "An operator client stores hello-ok.auth.scopes next to the device token it was issued and, when it reconnects with that token (after a relaunch too), asks for exactly those scopes rather than its built-in defaults.",
    source: "docs gateway/protocol.md \"Auth\"; connect-hello.ts @6eec7e0e; docs/protocol.md §4.4",
    discussion: """
        Waits for the client's operator session, asks it for operator.admin as well \
        (request-scopes), which the loopback Gateway approves silently, and reads the scopes of \
        the hello-ok that follows. Then restarts the client and requires its first operator \
        connect to ask for exactly those scopes and to get a session.
        """,
    tags: ["pairing", "tokens", "scopes"],
    needs: [.requestScopes],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    _ = try await run.operatorSession("the client's operator session", within: .seconds(20))
    let addedScope = "operator.admin"
    let cursor = try await run.mark { try await run.client.reply(to: .requestScopes([addedScope])) }
    let (upgraded, granted) = try await run.waitForEvent("an operator hello-ok granting \(addedScope)", within: .seconds(20),
                                                         from: cursor) { event -> (String, [String])? in
        guard case .frameOut(let id, .response(let response)) = event, response.ok,
              response.payload?["type"]?.stringValue == HelloOK.typeValue,
              let scopes = response.payload?["auth"]?["scopes"]?.arrayValue?.compactMap(\.stringValue),
              scopes.contains(addedScope) else { return nil }
        return (id, scopes)
    }
    run.note("hello-ok on \(upgraded) granted \(granted)")

    let restart = try await run.mark { try await run.client.restart() }
    let reconnect = try await run.nextConnect(role: .operator, "the operator connect after the restart", from: restart)
    try run.expect(Set(reconnect.scopes) == Set(granted),
                   "the operator reconnect asks for the scopes stored with its token (hello-ok.auth.scopes)",
                   expected: granted.sorted().joined(separator: ", "), actual: reconnect.scopes.sorted().joined(separator: ", "))
    _ = try await run.operatorSession("an operator session after the restart", from: restart, within: .seconds(20))
}
