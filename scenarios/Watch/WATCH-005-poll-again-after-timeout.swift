import Conformance
import GatewayProtocol
import MockGateway

let watch005 = Scenario(
    "WATCH-005", .must,
    title: "after an empty answer (the poll's 20 s), the Watch polls again",
    requirement: "When a poll is answered {ok: true, event: null} because 20 s passed without an event, the Watch polls again at once, so that it keeps its session and receives the next invoke.",
    source: "docs/protocol.md §13.3, §13.4",
    discussion: """
        Pairs the client as an Apple Watch with a node setup code (watch-pair) and waits for its \
        first poll. Lets the Gateway clock jump 21 s: the poll is answered event: null. Within 5 s \
        of client time the Watch must poll again, and an invoke of device.status must then \
        succeed through that poll.
        """,
    tags: ["watch", "invoke"],
    needs: [.watchPair],
    profiles: .current,
    options: Scenario.Options(needsSession: false)
) { run in
    let nodeId = try await run.watchSession()
    let poll = WatchDirectRules.pollPath
    let first = try await run.waitForMatch(.watchRequest(poll).named("the Watch's first poll"), from: .start)
    await run.advance(by: .seconds(21))
    let empty = try await run.waitForMatch(.watchAnswer(poll).filter { $0.status == 200 && $0.event == nil }
        .named("the poll answered event: null after 20 s"), from: first.next)
    try await run.waitForEvent(.watchRequest(poll).named("a new poll after the empty answer"), within: .seconds(5), from: empty.next)
    try await run.expectInvokeSucceeds(NodeCommandName.deviceStatus.rawValue, nodeId: nodeId, "device.status after the empty poll")
}
