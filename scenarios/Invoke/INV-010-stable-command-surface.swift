import Conformance
import GatewayProtocol
import MockGateway

let inv010 = Scenario(
    "INV-010", .should,
    title: "a reconnect declares no command the node did not declare before",
    requirement: "A node declares the same connect.commands on every reconnect unless one of its features changed: a command added on a reconnect widens its command surface, which a Gateway holds back until an operator approves a node pairing update, so a spurious addition makes a working command unusable.",
    source: "docs/protocol.md §6.7",
    discussion: "Pairs the client automatically and reads the commands of its first node connect. Then it resets the node connection without a close frame and waits up to 30 s of client time for the next node connect; that connect must not declare any command the first one did not (dropping a command only narrows the surface and is allowed). Nothing about the client's features changes in between.",
    tags: ["invoke", "commands", "reconnect"],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let session = try await run.nodeSession()
    let declared = try await run.nextConnect(role: .node, "the client's first node connect", from: .start).commands
    let again = try await run.resetAndReconnect(session).connect
    let added = again.commands.filter { !declared.contains($0) }
    try run.expect(added.isEmpty, "the reconnect declares only commands the first connect declared",
                   expected: "a subset of [\(declared.joined(separator: ", "))]",
                   actual: "also [\(added.joined(separator: ", "))]")
}
