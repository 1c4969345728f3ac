import Conformance
import GatewayProtocol
import MockGateway

let inv011 = Scenario(
    "INV-011", .should,
    title: "after a 401 from the canvas page, the client refreshes its capability and loads the page",
    requirement: "When its canvas page answers 401 because the capability expired, the client calls node.pluginSurface.refresh (node.canvas.capability.refresh on a protocol-3-era Gateway) and loads the page from the fresh URL instead of failing it.",
    source: "docs/protocol.md §6.10",
    discussion: """
        Pairs the client automatically. Unsupported for a client that declares no canvas.present, \
        and for one that does not load its canvas URL when asked to present the canvas. Expires \
        the node's canvas capability (as if its ten minutes had passed), then invokes \
        canvas.present. The client's first request to the canvas host gets 401; within the \
        invoke's time it must call the refresh method on its node session and load the page again \
        with the fresh capability (200), and the invoke must succeed.
        """,
    tags: ["invoke", "canvas"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [[NodeCommandName.canvasPresent.rawValue]], configureGateway: { $0.autoApproval = .auto })
) { run in
    let nodeId = try await run.nodeId()
    let command = NodeCommandName.canvasPresent.rawValue
    // What the client declared (its connect), not what the Gateway registered: the policy keeps
    // canvas commands off the registration of a node that is not macOS, and the scripted
    // invoke below is sent anyway (docs/protocol.md §6.7).
    guard try await run.declaredCommands().contains(command) else {
        try run.unsupported("the client declares no \(command)")
    }
    await run.gateway.expireCanvasCapabilities(nodeId: nodeId)
    let from = run.mark()
    let outcome = await run.gateway.invoke(nodeId: nodeId, command: command, params: [:], idempotencyKey: "inv-010",
                                           wait: run.stepTimeout)
    let requests = run.events(from: from).compactMap { event -> CanvasRequestInfo? in
        if case .canvasRequest(let info) = event { info } else { nil }
    }
    guard let refusal = requests.firstIndex(where: { $0.status == 401 }) else {
        try run.unsupported("the client did not load its canvas URL on \(command)")
    }
    let refreshed = run.matches(.request(.nodePluginSurfaceRefresh), from: from).count
        + run.matches(.request(.nodeCanvasCapabilityRefresh), from: from).count
    try run.expect(refreshed > 0, "after the 401 the client refreshed its canvas capability",
                   expected: "node.pluginSurface.refresh (or node.canvas.capability.refresh)", actual: "no refresh request")
    let loaded = requests[(refusal + 1)...].contains { $0.status == 200 && $0.authorizedBy == "capability" && $0.nodeId == nodeId }
    try run.expect(loaded, "the client loaded the canvas page with the fresh capability", expected: "a 200 from the canvas host",
                   actual: requests.map { "\($0.status) \($0.path)" }.joined(separator: ", "))
    guard case .result(let result) = outcome, result.ok else {
        try run.fail("\(command) did not succeed after the refresh", expected: "ok:true", actual: "\(outcome)")
    }
}
