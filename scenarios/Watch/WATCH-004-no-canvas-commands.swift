import Conformance
import GatewayProtocol
import MockGateway

let watch004 = Scenario(
    "WATCH-004", .must,
    title: "the Watch declares only the Watch commands, never canvas commands",
    requirement: "A Watch's connect declares a non-empty set of commands inside device.info, device.status and system.notify: never a canvas command, which the Watch route refuses.",
    source: "docs/protocol.md §13.2, §13.4",
    discussion: """
        Pairs the client as an Apple Watch with a node setup code (watch-pair) and reads the \
        commands its first connect declared: none may start with canvas., all must be Watch \
        commands, and the connect must open a session.
        """,
    tags: ["watch", "canvas"],
    needs: [.watchPair],
    profiles: .current,
    options: Scenario.Options(needsSession: false)
) { run in
    let (connect, _) = try await run.watchPair()
    let declared = connect.commands ?? []
    let canvas = declared.filter { $0.hasPrefix("canvas.") }
    try run.expect(canvas.isEmpty, "the Watch declares no canvas command", expected: "no canvas.* command",
                   actual: canvas.joined(separator: ", "))
    let outside = declared.filter { !WatchDirectRules.commands.contains($0) }
    try run.expect(!declared.isEmpty && outside.isEmpty, "the Watch declares only Watch commands",
                   expected: WatchDirectRules.commands.sorted().joined(separator: ", "),
                   actual: declared.isEmpty ? "no commands" : declared.joined(separator: ", "))
    try run.expectEqual(connect.status, 200, "the status of the Watch's connect")
}
