import Conformance
import GatewayProtocol
import MockGateway

let inv005 = Scenario(
    "INV-005", .should,
    title: "a command that cannot finish is answered with an error before timeoutMs",
    requirement: "A command that cannot finish within the invoke's timeoutMs is answered with ok:false and an error before timeoutMs passes.",
    source: "docs/protocol.md §6.3",
    discussion: """
        Pairs the client automatically and invokes the test command debug.slow (it answers only \
        after durationMs, here 10 minutes; the scenario is unsupported for a client that does not \
        declare it) with timeoutMs 5000, then lets 5 s of time pass. The client must answer with \
        ok:false and an error code while the Gateway still waits for the invoke, that is before \
        the Gateway's own deadline drops it.
        """,
    tags: ["invoke", "time"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [["debug.slow"], ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.requireDeclared("debug.slow")
    let probe = try await run.probeCommand()
    let nodeId = try await run.nodeId()
    let timeoutMs = 5_000
    let start = run.mark()
    async let outcome = run.gateway.invoke(nodeId: nodeId, command: "debug.slow", params: ["durationMs": 600_000],
                                           timeoutMs: timeoutMs, wait: run.stepTimeout + run.deadline(ms: timeoutMs))
    let id = try await run.waitForEvent(.invokeSent("debug.slow"), from: start)
    // A quick invoke behind it on the same socket: once it is answered, the client has taken the
    // slow one and started its timer.
    await run.invokeProbe(probe, nodeId: nodeId)

    // The answer must come before timeoutMs: the wait ends just before it, so the Gateway's own
    // deadline cannot race the client's answer.
    let result = try await run.waitForEvent(.invokeResult(id: id).named("a result for debug.slow (id \(id)) before timeoutMs \(timeoutMs)"),
                                            within: .milliseconds(Int64(timeoutMs - 1)), from: start)
    try run.expect(result.matched, "the result for debug.slow arrives before the invoke's timeoutMs",
                   expected: "a result within \(timeoutMs) ms of the request", actual: "a result after the Gateway gave up on the invoke")
    try run.expect(!result.ok, "a command that cannot finish is answered with an error", expected: "ok:false", actual: "ok:true")
    if case .result(let result) = await outcome {
        try run.expect(!(result.error?.code ?? "").isEmpty, "the timeout error carries a code",
                       expected: "error.code (e.g. UNAVAILABLE)", actual: result.error.map { "error \($0.code ?? "without a code"): \($0.message ?? "")" } ?? "no error")
    }
}
