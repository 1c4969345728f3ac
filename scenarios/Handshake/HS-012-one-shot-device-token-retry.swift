import Conformance
import GatewayProtocol
import MockGateway

let hs012 = Scenario(
    "HS-012", .should,
    title: "AUTH_TOKEN_MISMATCH: one retry with auth.deviceToken on a trusted endpoint",
    requirement: "When a connect with a stale shared token is refused with AUTH_TOKEN_MISMATCH and canRetryWithDeviceToken, a client on a trusted endpoint (loopback, or wss:// with a pinned certificate) retries once with its stored device token in auth.deviceToken next to auth.token, and no more than once per refusal; on any other endpoint it must not send the device token.",
    source: "docs gateway/protocol.md \"Auth\"; packages/gateway-client/src/client.ts @166b22ca (isTrustedDeviceRetryEndpoint); docs/protocol.md §5.2",
    discussion: """
        Runs a Gateway with a shared token the client is given and waits for a node session that \
        authenticated with it (and was issued a device token). Then changes the shared secret to a \
        value the client does not know, which closes the session with 4001; the client's next node \
        connect is refused with AUTH_TOKEN_MISMATCH. Requires the following node connect to carry \
        the issued node token as auth.deviceToken, at most one such retry per refusal, and a node \
        session within 30 s. The harness's Gateways are all on loopback, so only the trusted half \
        of the rule is exercised here.
        """,
    tags: ["handshake", "auth", "tokens"],
    profiles: .all,
    options: Scenario.Options(sharedToken: "hs012-shared-token", configureGateway: { $0.autoApproval = .auto })
) { run in
    let session = try await run.nodeSession("a node session", within: .seconds(20))
    guard let nodeToken = session.issuedDeviceToken ?? run.sessions(role: .node).compactMap(\.issuedDeviceToken).last else {
        try run.fail("the node session was issued no device token", expected: "hello-ok.auth.deviceToken", actual: "none")
    }
    let cursor = await run.mark { await run.gateway.changeSharedSecret(.token("hs012-rotated-token-the-client-lacks")) }
    let resumed = try await run.nodeSession("a node session after the shared secret changed", from: cursor, within: .seconds(30))
    let nodeConnects = run.connects(from: cursor).filter(\.isNode)
    guard let index = nodeConnects.firstIndex(where: {
        run.handshakeOutcome(of: $0.connectionId)?.refusal?.detailCode == ConnectErrorDetailCode.authTokenMismatch.rawValue
    }) else {
        try run.fail("no node connect was refused with AUTH_TOKEN_MISMATCH after the shared secret changed",
                     expected: "a refusal of the stale shared token",
                     actual: nodeConnects.map { run.handshakeOutcome(of: $0.connectionId)?.summary ?? "no outcome" }
                         .joined(separator: ", "))
    }
    guard index + 1 < nodeConnects.count else {
        try run.fail("no node connect followed the AUTH_TOKEN_MISMATCH refusal", expected: "the one-shot retry", actual: "none")
    }
    let retry = nodeConnects[index + 1]
    let presented = retry.params["auth"]?["deviceToken"]?.stringValue
    try run.expect(presented == nodeToken, "the node connect after AUTH_TOKEN_MISMATCH is the one-shot retry with the stored node token",
                   expected: "auth.deviceToken = the node token issued at \(session.connectionId)",
                   actual: retry.params["auth"]?.jsonString ?? "no auth")
    let refusals = nodeConnects.filter { run.handshakeOutcome(of: $0.connectionId)?.refusal != nil }.count
    let retries = nodeConnects.filter { $0.params["auth"]?["deviceToken"] != nil }.count
    try run.expect(retries <= max(1, refusals), "the client retries with auth.deviceToken more than once per refusal",
                   expected: "at most one device-token retry per refusal", actual: "\(retries) for \(refusals) refusals")
    try run.expectEqual(resumed.authMethod, "device-token", "how the resumed node session authenticated")
}
