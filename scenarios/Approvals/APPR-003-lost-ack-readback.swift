import Conformance
import GatewayProtocol
import MockGateway

let appr003 = Scenario(
    "APPR-003", .must,
    title: "a lost resolve reply is followed by a read-back, not by another decision",
    requirement: "When the reply to a resolve is lost, the outcome is unknown: the client keeps the card locked and reads the record back (approval.get, or exec.approval.get on a legacy Gateway) before it allows another decision; it never simply resolves again.",
    source: "docs/protocol.md §7.4-7.5, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, creates an exec approval and waits \
        until the prompt reached the operator session. Arms the Gateway to apply the next resolve \
        but drop its reply and cut the connection, then asks the client to allow once. The user \
        then taps deny while the outcome is unknown: a second resolve fails the run unless a \
        read-back of the approval (approval.get or exec.approval.get with its id) came before it. \
        Finally requires that the client read the record back at all.
        """,
    tags: ["approvals", "operator", "faults"],
    needs: [.resolveApproval],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let id = try await run.openApproval(command: "rm -rf ./build", expiresIn: .seconds(1_800)).id

    // Whichever family the client uses, its resolve is applied and the reply never arrives.
    let resolveMethods = run.profile.hasUnifiedApprovals ? ["approval.resolve", "exec.approval.resolve"] : ["exec.approval.resolve"]
    for method in resolveMethods { await run.gateway.dropNextResponse(to: method) }
    let cursor = try await run.mark { _ = try await run.client.reply(to: .resolveApproval(id: id, decision: "allow-once")) }
    try await run.expectEqual(run.clientResolveAttempts(id: id).map(\.requested), ["allow-once"], "the client's resolve requests for \(id)")
    try await run.expectApproval(id, status: .allowed, "the Gateway applied the decision whose reply was dropped")

    // The user taps again while the outcome is unknown (this also brings the operator session back).
    _ = try await run.client.reply(to: .resolveApproval(id: id, decision: "deny"))
    let getMethods: Set<String> = ["approval.get", "exec.approval.get"]
    let readBack = EventMatcher.anyRequest.filter { getMethods.contains($0.request.method) && $0.params["id"]?.stringValue == id }
        .named("a read-back of \(id) (approval.get or exec.approval.get) after the lost reply")
    // Only a read-back after the lost resolve counts (a client may fetch the record before it).
    let log = run.gateway.events.elements(from: cursor.position)
    let resolves = log.indices.filter { index in
        guard case .operatorRecord(let change) = log[index] else { return false }
        return change.id == id && change.action == .resolveAttempt && change.method != ResolveAttempt.Channel.script.rawValue
    }
    let lost = try run.required(resolves.first, "the client's first resolve is missing from the event log",
                                expected: "a resolve attempt for \(id)", actual: "none")
    if resolves.count > 1 {
        let readBackIndex = log[(lost + 1)...].firstIndex { readBack.match($0) != nil }
        try run.expect(readBackIndex.map { $0 < resolves[1] } ?? false,
                       "the client decided again after the lost reply without reading the record back",
                       expected: "approval.get or exec.approval.get for \(id) between the lost resolve and any other",
                       actual: "a second resolve (\(log[resolves[1]])) with no read-back before it")
    }

    try await run.waitForEvent(readBack, from: EventCursor(position: cursor.position + lost + 1))
}
