import Conformance
import GatewayProtocol
import MockGateway

let inv009 = Scenario(
    "INV-009", .should,
    title: "back in the foreground, the client pulls and acknowledges the queued actions",
    requirement: "After a foreground-only command was refused with NODE_BACKGROUND_UNAVAILABLE and queued by the Gateway, the client, once back in the foreground, calls node.pending.pull and acknowledges the queued action with node.pending.ack.",
    source: "docs/protocol.md §6.4, §6.9",
    discussion: """
        Pairs the client automatically. The Gateway queues refused foreground-only commands only \
        for iOS and iPadOS nodes (client.platform starting with ios or ipados), so the scenario is \
        unsupported for other platforms and for a client that declares no camera.*, screen.*, \
        talk.* or canvas.* command. Sends the client to the background (enter-background) and \
        invokes one such command; the client must refuse it with NODE_BACKGROUND_UNAVAILABLE, and \
        the Gateway queues it. Then enter-foreground: within 10 s the client must call \
        node.pending.pull on its node session and then node.pending.ack with the queued action's id, \
        after which nothing is left in the queue.
        """,
    tags: ["invoke", "background"],
    needs: [.enterBackground, .enterForeground],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let nodeId = try await run.nodeId()
    let node = try await run.connectedNode(nodeId)
    let platform = node.platform.lowercased()
    guard platform.hasPrefix("ios") || platform.hasPrefix("ipados") else {
        try run.unsupported("the Gateway queues foreground actions only for iOS and iPadOS nodes (platform \"\(node.platform)\")")
    }
    guard let command = ["camera.", "screen.", "talk.", "canvas."].lazy.compactMap({ family in
        node.commands.filter { $0.hasPrefix(family) }.sorted().first
    }).first else {
        try run.unsupported("the client declares no camera.*, screen.*, talk.* or canvas.* command")
    }
    try await run.client.stimulate(.enterBackground)
    let queuedFrom = run.mark()
    try await run.expectInvokeRefused(command, nodeId: nodeId, idempotencyKey: "inv-009-\(command)", code: "NODE_BACKGROUND_UNAVAILABLE",
                                      "\(command) was not refused in the background, so nothing was queued")
    let actionId = try await run.waitForEvent("the Gateway queues \(command)", from: queuedFrom) { event -> String? in
        if case .pendingActionQueued(nodeId, let id, command) = event { id } else { nil }
    }

    let foreground = try await run.mark { try await run.client.stimulate(.enterForeground) }
    let pulledOn = try await run.waitForEvent(.request(.nodePendingPull).named("node.pending.pull within 10 s after enter-foreground"),
                                              within: .seconds(10), from: foreground).connectionId
    let session = run.sessions(role: .node).last { $0.connectionId == pulledOn }
    try run.expect(session != nil, "the client pulled the queued actions on its node session",
                   expected: "node.pending.pull on a node session", actual: "node.pending.pull on \(pulledOn)")
    try await run.waitForEvent(.request(.nodePendingAck).filter { $0.params["ids"]?.arrayValue?.contains(.string(actionId)) == true }
        .named("node.pending.ack naming action \(actionId) within 10 s"), within: .seconds(10), from: foreground)
    let left = await run.gateway.pendingActions(nodeId: nodeId)
    try run.expect(left.isEmpty, "the queued actions are acknowledged", expected: "an empty queue",
                   actual: left.map { "\($0.command) \($0.id)" }.joined(separator: ", "))
}
