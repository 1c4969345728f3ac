import Conformance
import GatewayProtocol
import MockGateway

let pair013 = Scenario(
    "PAIR-013", .must,
    title: "setup code: bootstrap once, then only the issued device tokens",
    requirement: "With a setup code the client connects with auth.bootstrapToken, is approved silently (hello-ok with auth.deviceToken and the auth.deviceTokens hand-off), stores the issued tokens and uses them from then on, never presenting the single-use bootstrap token again.",
    source: "docs/protocol.md §5.13, §5.4",
    discussion: """
        Runs a Gateway with a shared token the client does not have, so that it cannot connect \
        before it gets the setup code. Sends the setup-code stimulus and requires a node session \
        authenticated with the bootstrap token, approved silently (no pairing request) and issued a \
        node token plus a deviceTokens hand-off. Then restarts the client and requires its node \
        session to present the issued node token, its operator connects (if any) a handed-off token, \
        and no connect after the first bootstrap session to present the bootstrap token.
        """,
    tags: ["pairing", "tokens", "setup-code"],
    needs: [.setupCode],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.auth = .token("pair013-token-the-client-lacks") })
) { run in
    let (code, session, cursor) = try await run.pairWithSetupCode()
    try run.expectEqual(session.authMethod, "bootstrap-token", "how the setup-code node session authenticated")
    try run.expectEqual(session.presentedToken, code.bootstrapToken, "the token the setup-code connect presented")
    let deviceId = try run.deviceId(of: session)
    let nodeToken = try run.required(session.issuedDeviceToken, "the setup-code session got no device token",
                                     expected: "hello-ok.auth.deviceToken", actual: "none")
    let requests = run.pairingRequestIds(deviceId: deviceId)
    try run.expect(requests.isEmpty, "the setup-code connect is approved silently", expected: "no pairing request",
                   actual: "requests \(requests.sorted())")
    let hello = run.matches(.helloOK(on: session.connectionId)).first
    let handOff = hello?["auth"]?["deviceTokens"]?.arrayValue?.compactMap { $0["deviceToken"]?.stringValue } ?? []
    try run.expect(!handOff.isEmpty, "hello-ok hands off the operator token in auth.deviceTokens",
                   expected: "auth.deviceTokens with a token", actual: hello?["auth"]?.jsonString ?? "no auth")

    try await run.expectStaysOpen(session.connectionId, "close of the bootstrap node session")
    let hasOperator = run.connects(from: cursor).contains { $0.role == GatewayRole.operator.rawValue }
    let restart = try await run.mark { try await run.client.restart() }
    let relaunched = try await run.sessionWithConnectFallback(device: deviceId, from: restart, "a node session after the restart")
    if hasOperator {
        try await run.sessionWithConnectFallback(.operator, device: deviceId, from: restart, "an operator session after the restart")
    }
    let afterBootstrap = run.connects(from: cursor).drop { $0.connectionId != session.connectionId }.dropFirst()
    for connect in afterBootstrap {
        try run.expect(!connect.presents(code.bootstrapToken), "no connect after the bootstrap session presents the bootstrap token",
                       expected: "the issued device tokens", actual: "auth.bootstrapToken on the \(connect.role) connect \(connect.connectionId)")
    }
    try run.expectEqual(relaunched.presentedToken, nodeToken, "the token the node presents after the restart")
    // An operator connect racing the bootstrap session may still go without a token; after the
    // restart, the stored hand-off token is the operator's credential.
    for connect in run.connects(from: restart) where connect.role == GatewayRole.operator.rawValue {
        try run.expect(connect.presentedTokens.contains(where: handOff.contains), "the operator session uses the handed-off operator token",
                       expected: "one of auth.deviceTokens", actual: connect.params["auth"]?.jsonString ?? "no auth")
    }
}
