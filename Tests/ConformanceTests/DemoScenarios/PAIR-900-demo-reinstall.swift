import Conformance

let pair900 = Scenario(
    "PAIR-900", .must,
    title: "Demo: the client can be reinstalled",
    requirement: "The client acts on reset-identity.",
    source: "demo",
    tags: ["demo"],
    needs: [.resetIdentity],
    profiles: .all
) { run in
    try await run.client.stimulate(.resetIdentity)
}
