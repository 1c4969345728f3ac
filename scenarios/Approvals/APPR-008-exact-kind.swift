import Conformance
import GatewayProtocol
import MockGateway

let appr008 = Scenario(
    "APPR-008", .must,
    title: "approval.resolve carries the record's exact kind",
    requirement: "When the client resolves an approval with approval.resolve, kind is the record's own kind (exec, plugin or system-agent); the unified Gateway force-denies a resolve with another kind as a malformed verdict.",
    source: "docs/protocol.md §7.4",
    discussion: """
        Pairs the client's node and operator sessions at once and opens a plugin approval that \
        offers allow-once and deny; waits until its prompt (plugin.approval.requested) reached \
        the operator session. Asks the client to allow it: every approval.resolve the client \
        sends for it must carry kind plugin, and the approval must end allowed (a wrong kind \
        would have denied it with reason malformed-verdict).
        """,
    tags: ["approvals", "operator"],
    needs: [.resolveApproval],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let operatorSession = try await run.operatorSession()
    let record = try await run.gateway.createApproval(ApprovalDraft(
        presentation: .plugin(PluginApprovalPresentation(title: "Read the calendar", description: "calendar.read for the agent",
                                                         pluginId: "calendar", toolName: "calendar.read")),
        allowedDecisions: [.allowOnce], expiresInMs: 1_800_000))
    try await run.awaitOperatorEvent("plugin.approval.requested", id: record.id, to: operatorSession)
    let start = run.mark()
    let reply = try await run.client.reply(to: .resolveApproval(id: record.id, decision: "allow-once"))
    let kinds = run.matches(.resolveRequest(id: record.id), from: start).filter { $0.request.method == "approval.resolve" }
        .map { $0.params["kind"]?.stringValue ?? "(none)" }
    try run.expect(!kinds.isEmpty, "the client resolved the plugin approval with approval.resolve",
                   expected: "an approval.resolve for \(record.id)", actual: "none (reply \(reply))")
    try run.expect(kinds.allSatisfy { $0 == "plugin" }, "approval.resolve carries the record's kind",
                   expected: "kind plugin", actual: "kind \(kinds.joined(separator: ", "))")
    try await run.expectApproval(record.id, endsAs: "allowed allow-once", "the plugin approval ends allowed with the client's decision")
}
