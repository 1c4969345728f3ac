import Conformance
import GatewayProtocol
import MockGateway

let inv001 = Scenario(
    "INV-001", .must,
    title: "every invoke gets exactly one result with its id and the client's nodeId",
    requirement: "Every node.invoke.request gets exactly one node.invoke.result with the same id and the client's own nodeId.",
    source: "docs/protocol.md §6.3-6.4",
    discussion: """
        Pairs the client automatically, then invokes a harmless command the client declares \
        (device.info, device.status or debug.counter) and, when declared, one that fails \
        (system.notify without a title or body); unsupported for a client that declares none of \
        them. Each invoke must be answered by \
        a node.invoke.result carrying the request's id and the client's node id (its device id), \
        which the Gateway matches to the invoke; no second result for either id may follow.
        """,
    tags: ["invoke"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let probe = try await run.probeCommand()
    let declared = try await run.declaredCommands()
    let nodeId = try await run.nodeId()
    var answered: [(id: String, cursor: EventCursor)] = []
    for command in [probe] + (declared.contains("system.notify") ? ["system.notify"] : []) {
        let start = run.mark()
        async let outcome = run.gateway.invoke(nodeId: nodeId, command: command, params: [:], wait: run.stepTimeout)
        let id = try await run.waitForEvent("the node.invoke.request for \(command)", from: start) { event in
            if case .invokeSent(let id, _, let sent, _) = event, sent == command { id } else { nil }
        }
        let (resultNodeId, matched) = try await run.waitForEvent("a node.invoke.result for \(command) (id \(id))", from: start) { event in
            if case .invokeResult(let resultId, let resultNodeId, _, let matched, _) = event, resultId == id {
                (resultNodeId, matched)
            } else {
                nil
            }
        }
        try run.expectEqual(resultNodeId, nodeId, "the result of \(command) carries the client's own nodeId")
        try run.expect(matched, "the Gateway matches the result of \(command) to its invoke",
                       expected: "a result the Gateway accepts for invoke \(id)", actual: "a result the Gateway ignored")
        answered.append((id, run.mark()))
        _ = await outcome
    }
    // A duplicate follows its first result closely; the second invoke's round trip already gave
    // the first one time to show up.
    for (index, invoke) in answered.enumerated() {
        let id = invoke.id
        try await run.expectNoEvent(within: .milliseconds(index == answered.count - 1 ? 150 : 0),
                                    "second node.invoke.result for invoke \(id)", from: invoke.cursor) { event in
            if case .invokeResult(let resultId, _, _, _, _) = event { resultId == id } else { false }
        }
    }
}
