import Conformance
import GatewayProtocol
import MockGateway

let pair004 = Scenario(
    "PAIR-004", .must,
    title: "the issued device token is stored and presented after a relaunch",
    requirement: "After approval the client stores hello-ok.auth.deviceToken and presents it (auth.token or auth.deviceToken) on its next connect, also after a relaunch.",
    source: "docs/protocol.md §5.2, §5.4",
    discussion: """
        Pairs the client, notes the node token its hello-ok carried, restarts the client (keeping \
        its state) and requires the first node connect after the restart to present that token with \
        the same device identity, and to be admitted.
        """,
    tags: ["pairing", "tokens"],
    needs: [.restart],
    profiles: .all
) { run in
    let (_, deviceId, token) = try await run.pairClientAndKeepToken()
    let cursor = try await run.mark { try await run.client.restart() }
    let connect = try await run.untilClient(.connect(.node).named("the first node connect after the restart"), from: cursor)
    try run.expectEqual(connect.deviceId, deviceId, "the device.id of the first node connect after the restart")
    try run.expectPresents(connect, token, "the first node connect after the restart presents the stored device token",
                           expected: "auth.token or auth.deviceToken = the token from hello-ok")
    try await run.expectAdmitted(connect, "the node connect that presented the token is admitted")
}
