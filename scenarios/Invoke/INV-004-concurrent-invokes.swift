import Conformance
import GatewayProtocol
import MockGateway

let inv004 = Scenario(
    "INV-004", .must,
    title: "concurrent invokes are answered independently and their ids never mix",
    requirement: "Concurrent invokes are answered independently: a quick command is not held up by a slow one still running, and every result carries the id of the invoke it answers.",
    source: "docs/protocol.md §6.3",
    discussion: """
        Pairs the client automatically, invokes the test command debug.slow (answers after \
        durationMs of client time; the scenario is unsupported for a client that does not \
        declare it) and, while it runs, a quick read-only probe command the client declares (device.info, \
        device.status, camera.list, debug.counter, or one named with --probe-command). The quick result must arrive first, under its own id and \
        not carrying the slow command's payload; then the scenario lets the slow command finish and requires its result \
        under the debug.slow invoke's id, with its own payload (not the other invoke's).
        """,
    tags: ["invoke"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [["debug.slow"], ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.requireDeclared("debug.slow")
    let quickCommand = try await run.probeCommand()
    let nodeId = try await run.nodeId()
    let slowMs = 2_000
    let start = run.mark()
    async let slow = run.gateway.invoke(nodeId: nodeId, command: "debug.slow", params: ["durationMs": .int(Int64(slowMs))],
                                        timeoutMs: 60_000, wait: run.stepTimeout * 2)
    let slowId = try await run.waitForEvent(.invokeSent("debug.slow"), from: start)
    async let quick = run.gateway.invoke(nodeId: nodeId, command: quickCommand, params: run.probeParams(for: quickCommand), wait: run.stepTimeout)
    let quickId = try await run.waitForEvent(.invokeSent(quickCommand))
    let ids: Set<String> = [slowId, quickId]
    let names = [slowId: "debug.slow", quickId: quickCommand]

    // The quick command finishes while the slow one still runs.
    let first = try await run.waitForEvent(.invokeResult().filter { ids.contains($0.id) }
        .named("a result for \(quickCommand) while debug.slow still runs"), from: start).id
    try run.expect(first == quickId, "the first result answers \(quickCommand), the invoke that could finish",
                   expected: "a result with id \(quickId) (\(quickCommand))",
                   actual: "a result with id \(first) (\(names[first] ?? "?"))")
    let afterQuick = run.mark()
    if case .result(let result) = await quick {
        // Only the shape is known for a client's own device.info or device.status; what
        // identifies a mix-up is the other invoke's payload under this id.
        let text = result.payloadJSON ?? result.payload?.jsonString ?? ""
        try run.expect(!text.contains("sleptMs"), "the \(quickCommand) invoke got its own payload, not the debug.slow one",
                       expected: "a \(quickCommand) payload", actual: String(text.prefix(200)))
    }

    // The slow command finishes after its durationMs; its result must carry its own id.
    let slowMatch = try? await run.waitForEvent(.invokeResult(id: slowId), within: .milliseconds(Int64(slowMs)) + run.stepTimeout,
                                                from: afterQuick).matched
    let laterQuick = run.matches(.invokeResult(id: quickId), from: afterQuick)
    let slowResult = try run.required(slowMatch, "the debug.slow invoke got no result under its own id",
                                      expected: "a result with id \(slowId) (debug.slow)",
                                      actual: laterQuick.isEmpty ? "no result" : "a result under the id of \(quickCommand) (\(quickId)): the ids mixed")
    try run.expect(laterQuick.isEmpty, "\(quickCommand) is answered exactly once",
                   expected: "one result with id \(quickId)", actual: "\(laterQuick.count + 1) results with that id")
    try run.expect(slowResult, "the Gateway matches the debug.slow result to its invoke",
                   expected: "a result accepted for \(slowId)", actual: "a result the Gateway ignored")
    guard case .result(let result) = await slow else {
        try run.fail("the Gateway got no result for debug.slow", expected: "a result", actual: "none")
    }
    try run.expect(result.ok && (result.payloadJSON?.contains("sleptMs") == true || result.payload?["sleptMs"] != nil),
                   "the debug.slow invoke got the debug.slow payload",
                   expected: "ok:true with the debug.slow payload (sleptMs)",
                   actual: result.payloadJSON.map { String($0.prefix(200)) } ?? result.payload?.jsonString ?? "ok:\(result.ok)")
}
