import Conformance

let pres900 = Scenario(
    "PRES-900", .should,
    title: "Demo: a background wake is acknowledged",
    requirement: "The client acts on a background wake without opening a second Gateway.",
    source: "demo",
    tags: ["demo", "presence"],
    needs: [.backgroundWake],
    profiles: .legacy
) { run in
    try await run.client.stimulate(.backgroundWake(trigger: "silent_push"))
    try run.expectEqual(run.gateways.count, 1, "one Gateway")
}
