import Conformance
import GatewayProtocol
import MockGateway

let pair016 = Scenario(
    "PAIR-016", .should,
    title: "AUTH_SCOPE_MISMATCH is not a bad token: the token is kept",
    requirement: "When a connect with a valid device token is refused with AUTH_SCOPE_MISMATCH (it asked for scopes the token does not cover), the client keeps the token (re-pairing or an approval is the way to more scopes) and presents it again on its next connect of that role.",
    source: "docs gateway/protocol.md \"Auth\"; docs/protocol.md §5.6",
    discussion: """
        Runs a Gateway with a shared token the client does not have, pairs the client with a \
        limited setup code (an operator token without operator.admin), lets it act on the hello-ok \
        (its bootstrap node session stays open for 150 ms) and restarts it, so that its \
        operator session uses the handed-off operator token. Then asks it for operator.admin \
        (request-scopes), which the token does not cover: the operator connect is refused with \
        AUTH_SCOPE_MISMATCH. Restarts the client and requires its next operator connect to present \
        the same operator token, and an operator session.
        """,
    tags: ["pairing", "tokens", "scopes"],
    needs: [.setupCode, .requestScopes],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.auth = .token("pair016-token-the-client-lacks") })
) { run in
    let paired = try await run.pairWithSetupCode(profile: .limited)
    // Let the client read hello-ok and store the issued tokens before it is restarted (as PAIR-013).
    try await run.expectStaysOpen(paired.session.connectionId, "close of the bootstrap node session")
    let relaunch = try await run.mark { try await run.client.restart() }
    let operatorSession = try await run.operatorSession("an operator session with the handed-off token", from: relaunch, within: .seconds(20))
    let operatorToken = try run.presentedDeviceToken(of: operatorSession)

    try await run.reply(to: .requestScopes(["operator.admin"]), until: .refusal(.authScopeMismatch), within: .seconds(20))
    let restart = try await run.mark { try await run.client.restart() }
    let reconnect = try await run.nextConnect(role: .operator, "the operator connect after the restart", from: restart)
    try run.expectPresents(reconnect, operatorToken, "the operator connect after AUTH_SCOPE_MISMATCH presents the kept token",
                           expected: "the operator token of \(operatorSession.connectionId)")
    _ = try await run.operatorSession("an operator session after the restart", from: restart, within: .seconds(20))
}
