import Conformance
import GatewayProtocol
import MockGateway

let appr001 = Scenario(
    "APPR-001", .must,
    title: "only the decisions in allowedDecisions are offered and sent",
    requirement: "The client offers only the decisions listed in the approval's allowedDecisions and resolves with one of them; it never sends a decision the prompt did not offer (the unified Gateway would force-deny the approval as a malformed verdict).",
    source: "docs/protocol.md §7.2, §7.4, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, creates an exec approval that \
        offers allow-once and deny only, and waits until the prompt reached the operator session. \
        Asks the client to resolve it with allow-always (not offered): the client may refuse the \
        request, but it must send no resolve. Then asks for allow-once and requires that the \
        client's only resolve attempt carries allow-once and that it ended the approval as allowed.
        """,
    tags: ["approvals", "operator"],
    needs: [.resolveApproval],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let id = try await run.openApproval(command: "npm publish", allowedDecisions: [.allowOnce], expiresIn: .seconds(1_800)).id
    _ = try await run.client.reply(to: .resolveApproval(id: id, decision: "allow-always"))
    try await run.expectNoClientAnswer(to: id, "the client sent a decision the approval does not offer",
                                       expected: "no resolve request (allowedDecisions: allow-once, deny)")

    try await run.expectClientAccepts(.resolveApproval(id: id, decision: "allow-once"), "the client resolves with an offered decision")
    try await run.expectEqual(run.clientResolveAttempts(id: id).map(\.requested), ["allow-once"], "the client's resolve requests for \(id)")
    try await run.expectApproval(id, endsAs: "allowed allow-once", "the approval ends allowed with the client's decision")
}
