import Conformance
import GatewayProtocol
import MockGateway

let appr004 = Scenario(
    "APPR-004", .must,
    title: "an expired approval is never resolved",
    requirement: "Once an approval has expired (its expiresAtMs has passed on the Gateway clock, as the prompt, an event or a read-back shows), the client locks it and sends no resolve.",
    source: "docs/protocol.md §7.5, §7.2, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, creates an exec approval that \
        expires after 5 s and waits until the prompt reached the operator session. Lets 6 s of \
        the run's time pass (virtual time for an in-process client, real time for a client with its \
        own clock, so that both sides see the deadline pass), so the Gateway expires the approval \
        (the legacy family announces no expiry; the deadline is in the prompt). Then asks the \
        client to allow once: it may refuse or read the record back, but it must send no resolve \
        request.
        """,
    tags: ["approvals", "operator", "expiry"],
    needs: [.resolveApproval],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let id = try await run.openApproval(command: "git push --force", expiresIn: .seconds(5)).id

    // Time passes for the client too: a client with its own clock cannot see a Gateway-only jump.
    await run.elapse(.seconds(6))
    try await run.waitForEvent(.recordResolved(id, status: "expired"))

    _ = try await run.client.reply(to: .resolveApproval(id: id, decision: "allow-once"))
    try await run.expectNoClientAnswer(to: id, "the client tried to resolve an expired approval",
                                       expected: "no resolve request for \(id) after its expiresAtMs")
}
