import Conformance
import GatewayProtocol
import MockGateway

let appr002 = Scenario(
    "APPR-002", .must,
    title: "a lost approval race is accepted, shown as final and not retried",
    requirement: "When another surface resolved the approval first, the client accepts the loser answer (approval.resolve → applied:false with the recorded winner; exec.approval.resolve → APPROVAL_ALREADY_RESOLVED), locks the card on that outcome and never resolves again.",
    source: "docs/protocol.md §7.4, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, creates an exec approval and waits \
        until the prompt reached the operator session. Arms a race so that a watch answers \
        allow-always just before the client's request is handled, then asks the client to deny. \
        Requires exactly one resolve attempt from the client (the loser), still one after a \
        moment of client time, and still one after the user taps the card again: a terminal card \
        offers no decisions.
        """,
    tags: ["approvals", "operator", "race"],
    needs: [.resolveApproval],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let id = try await run.openApproval(command: "npm publish", expiresIn: .seconds(1_800)).id
    await run.gateway.raceApproval(id: id, surfaceDecision: .allowAlways, order: .surfaceFirst)
    _ = try await run.client.reply(to: .resolveApproval(id: id, decision: "deny"))
    let first = try await run.oneClientAnswer(to: id, "deny")
    try run.expectEqual(first.result, .lost(winnerStatus: "allowed"), "the client's resolve lost to the watch's allow-always")
    try await run.expectAnswerStaysFinal(id, first: first, again: .resolveApproval(id: id, decision: "allow-once"), subject: "approval")
    try await run.expectEqual(run.gateway.approval(id: id)?.decision, .allowAlways, "the recorded winner is still the watch's decision")
}
