import Conformance
import GatewayProtocol
import MockGateway

let inv007 = Scenario(
    "INV-007", .must,
    title: "foreground-only commands fail with NODE_BACKGROUND_UNAVAILABLE in the background",
    requirement: "While the app is in the background, foreground-only commands (canvas.*, camera.*, screen.*) are answered with ok:false and error code NODE_BACKGROUND_UNAVAILABLE.",
    source: "docs/protocol.md §6.4",
    discussion: """
        Pairs the client automatically, sends it to the background (enter-background) and \
        invokes each foreground-only command the client declares among canvas.*, camera.* and \
        screen.* (at most one per family). Each must be refused with NODE_BACKGROUND_UNAVAILABLE.
        """,
    tags: ["invoke", "background"],
    needs: [.enterBackground],
    profiles: .all,
    options: Scenario.Options(needsCommands: [["canvas.*", "camera.*", "screen.*"]], configureGateway: { $0.autoApproval = .auto })
) { run in
    // Decided from the first node connect, before waiting for a session.
    let commands = try await run.declaredCommands(oneOfEach: ["canvas.", "camera.", "screen."])
    let nodeId = try await run.nodeId()
    try await run.client.stimulate(.enterBackground)
    for command in commands {
        try await run.expectInvokeRefused(command, nodeId: nodeId, code: "NODE_BACKGROUND_UNAVAILABLE", "\(command) is refused in the background")
    }
}
