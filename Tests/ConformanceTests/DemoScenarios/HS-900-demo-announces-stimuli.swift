import Conformance

// A demo scenario: proves that a file in this folder is indexed into `allScenarios` by the
// ScenarioIndexPlugin without any registration step.
let hs900 = Scenario(
    "HS-900", .must,
    title: "Demo: the client announces what it supports",
    requirement: "The client starts and announces at least one stimulus.",
    source: "demo",
    discussion: "Starts the client and checks the stimuli it announced.",
    tags: ["demo"],
    profiles: .current
) { run in
    try run.expect(!run.client.supportedStimuli.isEmpty, "the client announces stimuli",
                   expected: "at least one stimulus", actual: "none")
}
