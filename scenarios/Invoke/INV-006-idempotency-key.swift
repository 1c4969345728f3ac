import Conformance
import GatewayProtocol
import MockGateway

let inv006 = Scenario(
    "INV-006", .should,
    title: "a repeated idempotencyKey returns the first result instead of running again",
    requirement: "An invoke that repeats an earlier invoke's idempotencyKey is answered with the first invoke's result instead of running the command a second time.",
    source: "docs/protocol.md §6.3",
    discussion: """
        Pairs the client automatically and invokes the test command debug.counter (each run \
        returns a higher count; the scenario is unsupported for a client that does not declare \
        it) twice with the same idempotencyKey, one after the other. The second invoke has a new \
        id and must get the same payload as the first; a different payload means the command ran \
        again.
        """,
    tags: ["invoke"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [["debug.counter"]], configureGateway: { $0.autoApproval = .auto })
) { run in
    try await run.requireDeclared("debug.counter")
    let nodeId = try await run.nodeId()
    let key = "conformance-inv006-\(run.random(in: 1_000...9_999))"
    var payloads: [String] = []
    for attempt in 1...2 {
        let result = try await run.expectInvokeSucceeds("debug.counter", nodeId: nodeId, idempotencyKey: key,
                                                        "invoke \(attempt) of debug.counter with idempotencyKey \(key)")
        payloads.append(result.payloadJSON ?? result.payload?.jsonString ?? "")
    }
    try run.expectEqual(payloads[1], payloads[0], "the repeated idempotencyKey returns the first result (the command did not run again)")
}
