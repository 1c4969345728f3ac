import Conformance
import GatewayProtocol
import MockGateway

let vw001 = Scenario(
    "VW-001", .must,
    title: "voice wake triggers changed on another device replace the local list",
    requirement: "The voice wake triggers are the Gateway's: when voicewake.changed brings a list set on another device, the client shows that list instead of its own and never writes its own list back over it with voicewake.set.",
    source: "docs/protocol.md §9.4",
    discussion: """
        Pairs the client and has the user set the trigger words to "alpha", "beta" in the \
        settings; the Gateway must then hold that list (the client saved it with voicewake.set). \
        Another device then sets "gamma", "delta" (the Gateway stores it and broadcasts \
        voicewake.changed). The client's settings must show "gamma", "delta" (the adapter may \
        wait up to 5 s of client time for the event), the Gateway must still hold that list, and \
        the client must have sent no voicewake.set since the other device's change.
        """,
    tags: ["voice-wake", "operator", "events"],
    needs: [.setVoiceWakeTriggers, .expectVoiceWakeTriggers],
    profiles: .all,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    _ = try await run.operatorSession()
    try await run.client.stimulate(.setVoiceWakeTriggers(["alpha", "beta"]))
    try await run.expectEqual(run.gateway.voiceWakeTriggers(), ["alpha", "beta"], "the triggers the Gateway holds after the user's edit")

    let cursor = run.mark()
    let elsewhere = ["gamma", "delta"]
    await run.gateway.setVoiceWakeTriggers(elsewhere)
    try await run.expectClientShows(.expectVoiceWakeTriggers(elsewhere), "the client kept its own voice wake triggers after voicewake.changed")
    try run.expectNoRequest(.voicewakeSet, from: cursor, "the client wrote its voice wake triggers back over the other device's")
    try await run.expectEqual(run.gateway.voiceWakeTriggers(), elsewhere, "the triggers the Gateway holds after the other device's change")
}
