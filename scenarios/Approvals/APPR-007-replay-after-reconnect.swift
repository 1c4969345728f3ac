import Conformance
import GatewayProtocol
import MockGateway

let appr007 = Scenario(
    "APPR-007", .should,
    title: "the approval replay after a reconnect is authoritative",
    requirement: "After every (re)connect the client subscribes to its session's approvals (sessions.messages.subscribe with includeApprovals:true; the opt-in is per call) and treats an approvalReplay with truncated:false as its whole pending set: an approval it showed as pending that the replay no longer lists is not resolved any more, and an approval the replay lists can be resolved.",
    source: "docs/protocol.md §7.3",
    discussion: """
        Pairs the client's node and operator sessions at once and waits for the operator \
        session's sessions.messages.subscribe with includeApprovals:true; its key is the session \
        the approvals are bound to. Opens approval A on that session and waits until its prompt \
        reached the client. Then disconnect: while the client is away, A is denied from another \
        surface and approval B is opened on the same session. After connect, the client must \
        subscribe again (with includeApprovals:true) and gets approvalReplay {approvals:[B], \
        truncated:false}. A second later, asked to allow A, it must send no resolve for A (the replay said A is \
        no longer pending); asked to allow B, it must resolve B, which ends allowed.
        """,
    tags: ["approvals", "operator", "reconnect"],
    needs: [.disconnect, .connect, .resolveApproval],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let first = try await run.operatorSession()
    let key = try await run.approvalSubscription(on: first.connectionId, from: .start,
                                                 "sessions.messages.subscribe with includeApprovals:true on the operator session")
    let stale = try await run.gateway.createApproval(ApprovalDraft.exec("npm publish", allowedDecisions: [.allowOnce],
                                                                        expiresInMs: 1_800_000, sessionKey: key))
    try await run.awaitOperatorEvent("exec.approval.requested", id: stale.id, to: first)

    try await run.disconnect(until: .closed(first.connectionId))
    _ = await run.gateway.resolveApproval(id: stale.id, decision: .deny, surface: "control-ui")
    let fresh = try await run.gateway.createApproval(ApprovalDraft.exec("git push", allowedDecisions: [.allowOnce],
                                                                        expiresInMs: 1_800_000, sessionKey: key))

    let second = try await run.reconnect(.operator, "the operator session after connect")
    _ = try await run.approvalSubscription(on: second.connectionId, from: .start,
                                           "sessions.messages.subscribe with includeApprovals:true again after the reconnect")

    // A person taps a card only after the list is on screen: give the client a second to apply
    // the replay it was just sent.
    await run.elapse(.seconds(1))
    let afterReplay = try await run.mark { _ = try await run.client.reply(to: .resolveApproval(id: stale.id, decision: "allow-once")) }
    try run.expectNone(run.matches(.resolveRequest(id: stale.id), from: afterReplay).map(\.request.method),
                       "the client resolved an approval the authoritative replay no longer lists",
                       expected: "no resolve for \(stale.id) (denied elsewhere while the client was away)", separator: ", ")
    try await run.expectClientAccepts(.resolveApproval(id: fresh.id, decision: "allow-once"), "the client resolves the approval the replay lists")
    try await run.expectApproval(fresh.id, endsAs: "allowed allow-once", "the replayed approval ends allowed with the client's decision")
}
