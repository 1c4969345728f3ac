import Conformance
import GatewayProtocol
import MockGateway

let life004 = Scenario(
    "LIFE-004", .must,
    title: "binary and fragmented messages from the Gateway are understood",
    requirement: "Binary as well as text WebSocket messages from the Gateway are read as JSON frames, and fragmented messages are reassembled.",
    source: "docs/protocol.md §1.1",
    discussion: "Pairs the client automatically, then sends every event as a binary message and invokes a read-only probe command the client declares (device.info, device.status, camera.list, debug.counter, or one named with --probe-command); then every event fragmented into three continuation frames with pings in between; then both at once. Each invoke must be answered on the same connection.",
    tags: ["lifecycle", "transport"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let (probe, session) = try await run.probeAndNodeSession()
    // Every event until the reset at the end (other broadcasts may come in between).
    for (binary, fragmented) in [(true, false), (false, true), (true, true)] {
        let form = [binary ? "binary" : "text", fragmented ? "fragmented" : nil].compactMap { $0 }.joined(separator: ", ")
        await run.sendNextEvents(binary: binary, fragmented: fragmented)
        try await run.expectProbeAnswers(probe, on: session, "sent as a \(form) message")
    }
    await run.sendNextEvents(binary: false, fragmented: false)
}
