import Conformance
import GatewayProtocol
import MockGateway

let inv002 = Scenario(
    "INV-002", .must,
    title: "results carry payloadJSON or payload; errors carry code and message",
    requirement: "A successful node.invoke.result carries its result as payloadJSON (a JSON text in a string) or as payload; a failed one carries error.code and error.message.",
    source: "docs/protocol.md §6.4",
    discussion: """
        Pairs the client automatically, invokes a harmless command the client declares \
        (device.info, device.status, camera.list, debug.counter, or one named with --probe-command; it succeeds) and, when declared, \
        system.notify without a title or body (which fails), and reads the node.invoke.result \
        requests as they \
        arrived on the wire, before the Gateway normalises them: the success must have a string \
        payloadJSON holding JSON, or a non-null payload; the failure must have ok:false and an \
        error object with a non-empty string code and message.
        """,
    tags: ["invoke"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let invokes = try await run.probeAndFailingInvokes()
    let nodeId = try await run.nodeId()
    for (command, succeeds) in invokes {
        let params = try await run.invokeResultParams(command, nodeId: nodeId, params: run.probeParams(for: command))
        let shown = String(params.jsonString.prefix(300))
        try run.expectEqual(params["ok"]?.boolValue, succeeds, "ok of the \(command) result")
        if succeeds {
            let payloadJSON = params["payloadJSON"]
            let payload = params["payload"]
            if let text = payloadJSON?.stringValue {
                try run.expect((try? JSONValue(parsing: text)) != nil, "payloadJSON of the \(command) result is JSON text",
                               expected: "a string holding JSON", actual: String(text.prefix(200)))
            } else {
                try run.expect(payloadJSON == nil || payloadJSON?.isNull == true,
                               "payloadJSON of the \(command) result is a string",
                               expected: "payloadJSON as a string (or a payload value)", actual: shown)
                try run.expect(payload != nil && payload?.isNull == false, "the \(command) result carries its result",
                               expected: "payloadJSON (a string) or payload", actual: shown)
            }
        } else {
            let code = params["error"]?["code"]?.stringValue ?? ""
            let message = params["error"]?["message"]?.stringValue ?? ""
            try run.expect(!code.isEmpty, "the failed \(command) result carries error.code",
                           expected: "error {code, message} with a non-empty string code", actual: shown)
            try run.expect(!message.isEmpty, "the failed \(command) result carries error.message",
                           expected: "error {code, message} with a non-empty string message", actual: shown)
        }
    }
}
