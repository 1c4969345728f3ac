import Conformance
import GatewayProtocol
import MockGateway

let hs007 = Scenario(
    "HS-007", .must,
    title: "unknown events, fields and features are ignored",
    requirement: "The client ignores unknown hello-ok members and features, unknown event names and unknown fields in known events, and keeps its session.",
    source: "docs/protocol.md §2.3, §4.2",
    discussion: "Pairs the client automatically; its hello-ok advertises methods, events and snapshot members (sessionDefaults, authMode, pluginSurfaceUrls or canvasHostUrl) a minimal client does not know, but no top-level member beyond the documented ones, since the fake Gateway cannot add any yet. On the node session it then sends events with unknown names (with and without seq, with nested payloads) and a tick carrying unknown fields, and finally invokes a read-only probe command the client declares (device.info, device.status, camera.list, debug.counter, or one named with --probe-command): the invoke must reach the same connection and be answered, proving the session survived.",
    tags: ["handshake", "compatibility"],
    profiles: .all,
    options: Scenario.Options(needsCommands: [ScenarioRun.probeCommands], configureGateway: { $0.autoApproval = .auto })
) { run in
    let (probe, session) = try await run.probeAndNodeSession()
    let (gateway, connectionId) = (run.gateway, session.connectionId)
    await gateway.sendEvent("gateway.future.announcement", payload: [
        "version": 7, "nested": ["list": [1, "two", ["three": .null]], "flag": true],
    ], to: connectionId, sequenced: true)
    await gateway.sendEvent("plugin.future.signal", payload: ["reason": "unannounced"], to: connectionId, sequenced: false)
    await gateway.sendEvent("tick", payload: ["ts": .int(gateway.clock.nowMs), "uptimeMs": 12_345, "future": ["field": "value"]],
                            to: connectionId, sequenced: true)

    try await run.expectProbeAnswers(probe, on: session, "after the unknown events")
}
