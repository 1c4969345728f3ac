import Conformance
import GatewayProtocol
import MockGateway

let appr006 = Scenario(
    "APPR-006", .must,
    title: "prompts of a previous Gateway are not resolved on the new one",
    requirement: "After the client switches Gateways, approval prompts that came from the old Gateway belong to it: the client refuses to resolve them and never sends their ids to the new Gateway, while prompts of the new Gateway resolve normally.",
    source: "docs/protocol.md §7.11, §7.4",
    discussion: """
        Pairs the client's sessions with the run's Gateway, creates an exec approval there and waits \
        until the prompt reached the operator session. Starts a second Gateway and switches the \
        client to it; once its operator session is open there, asks the client to allow the old \
        prompt: no resolve for that id may reach either Gateway. Then creates an approval on the new \
        Gateway and requires that the client resolves it there.
        """,
    tags: ["approvals", "operator", "switch-gateway"],
    needs: [.resolveApproval, .switchGateway],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let oldId = try await run.openApproval(command: "terraform apply", expiresIn: .seconds(1_800)).id

    // Let the client present the prompt before the user switches away.
    await run.elapse(.milliseconds(200))
    let (newGateway, newSession) = try await run.switchToOtherGateway(.operator, "the client's operator session on the new Gateway")

    _ = try await run.client.reply(to: .resolveApproval(id: oldId, decision: "allow-once"))
    var stray: [String] = []
    for (name, gateway) in [("old", run.gateway), ("new", newGateway)] {
        stray += await run.clientResolveAttempts(id: oldId, on: gateway)
            .map { "\($0.channel.rawValue) \($0.requested) on the \(name) Gateway → \($0.result)" }
    }
    try run.expectNone(stray, "the client resolved a prompt of the previous Gateway", expected: "no resolve request for \(oldId) after the switch")
    try await run.expectApproval(oldId, status: .pending, "the old Gateway's approval is still pending")

    let newId = try await run.openApproval(command: "terraform plan", expiresIn: .seconds(1_800),
                                           to: newSession, on: newGateway, sessionName: "new operator session")
    try await run.expectClientAccepts(.resolveApproval(id: newId, decision: "allow-once"), "the client resolves a prompt of the new Gateway")
    try await run.expectApproval(newId, status: .allowed, "the new Gateway's approval ends allowed", on: newGateway)
}
