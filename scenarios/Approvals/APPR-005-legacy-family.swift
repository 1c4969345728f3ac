import Conformance
import GatewayProtocol
import MockGateway

let appr005 = Scenario(
    "APPR-005", .must,
    title: "a Gateway without approval.* is served through exec.approval.*",
    requirement: "When hello-ok.features.methods offers neither approval.get nor approval.resolve but offers exec.approval.get and exec.approval.resolve, the client reads and resolves exec approvals with the exec.approval.* methods and never calls approval.*.",
    source: "docs/protocol.md §7.6, §7.11",
    discussion: """
        Runs against the legacy profile, whose hello-ok advertises only the exec.approval.* family. \
        Pairs the client's node and operator sessions at once, creates an exec approval, waits until \
        the prompt reached the operator session and asks the client to allow once. Requires that \
        the client sent no approval.* request, that its resolve came through exec.approval.resolve \
        and that it ended the approval as allowed.
        """,
    tags: ["approvals", "operator", "legacy"],
    needs: [.resolveApproval],
    profiles: .legacy,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let id = try await run.openApproval(command: "make deploy", expiresIn: .seconds(1_800)).id

    let cursor = run.mark()
    let reply = try await run.client.reply(to: .resolveApproval(id: id, decision: "allow-once"))
    let unified = run.matches(.anyRequest, from: cursor).map(\.request.method).filter { $0.hasPrefix("approval.") }
    try run.expectNone(unified, "the client called unified approval methods that this Gateway does not advertise",
                       expected: "only exec.approval.* requests", separator: ", ")
    try run.expectEqual(reply, .ok, "the client resolves through the legacy family")
    try await run.expectEqual(run.clientResolveAttempts(id: id).map { "\($0.channel.rawValue) \($0.requested)" },
                              ["exec.approval.resolve allow-once"], "the client's resolve requests for \(id)")
    try await run.expectApproval(id, status: .allowed, "the approval ends allowed")
}
