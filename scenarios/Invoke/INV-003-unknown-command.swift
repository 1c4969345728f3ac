import Conformance
import GatewayProtocol
import MockGateway

let inv003 = Scenario(
    "INV-003", .must,
    title: "an unknown command is answered with ok:false and an error code",
    requirement: "An undeclared or unknown command is answered with a node.invoke.result with ok:false and an error code, never with silence.",
    source: "docs/protocol.md §6.3-6.4",
    discussion: """
        Pairs the client automatically and invokes a command no client declares. The client must \
        answer that invoke (same id) with ok:false and an error carrying a code; the Gateway must \
        not be left waiting until the invoke's timeout.
        """,
    tags: ["invoke"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let nodeId = try await run.nodeId()
    let command = "conformance.unknown.command"
    let params = try await run.invokeResultParams(command, nodeId: nodeId, params: ["probe": true])
    let shown = String(params.jsonString.prefix(300))
    try run.expectEqual(params["ok"]?.boolValue, false, "ok of the result for an unknown command")
    let code = params["error"]?["code"]?.stringValue ?? ""
    try run.expect(!code.isEmpty, "the refusal of an unknown command carries an error code",
                   expected: "error.code, e.g. INVALID_REQUEST", actual: shown)
}
