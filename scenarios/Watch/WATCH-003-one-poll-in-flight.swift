import Conformance
import GatewayProtocol
import MockGateway

let watch003 = Scenario(
    "WATCH-003", .must,
    title: "the Watch keeps one poll in flight: none of its polls is superseded (409)",
    requirement: "A Watch sends its next poll only after the previous one was answered, so the Gateway never answers one of its polls 409 superseded poll, and it still receives every invoke.",
    source: "docs/protocol.md §13.3, §13.4",
    discussion: """
        Pairs the client as an Apple Watch with a node setup code (watch-pair), lets 65 s of \
        Gateway time pass (three polls answered empty after their 20 s), then invokes \
        device.info. No poll of the run may have been answered 409 (a second poll while one \
        waited), and the invoke must succeed through a poll and a result.
        """,
    tags: ["watch", "invoke"],
    needs: [.watchPair],
    profiles: .current,
    options: Scenario.Options(needsSession: false)
) { run in
    let nodeId = try await run.watchSession()
    await run.elapse(.seconds(65))
    try await run.expectInvokeSucceeds(NodeCommandName.deviceInfo.rawValue, nodeId: nodeId, "device.info through the Watch's polls")
    let superseded = run.matches(.supersededPoll)
    try run.expect(superseded.isEmpty, "the Watch never had two polls waiting at once", expected: "no poll answered 409",
                   actual: "\(superseded.count) poll\(superseded.count == 1 ? "" : "s") answered 409 superseded poll")
}
