import Conformance
import GatewayProtocol
import MockGateway

let ques005 = Scenario(
    "QUES-005", .must,
    title: "answers respect the question's shape",
    requirement: "Answers respect the question's shape: a single-select question gets exactly one value, a multi-select question may get several, free text goes only to a question with isOther (or without options), sent in the newest shape {answers: {<questionId>: [values]}}.",
    source: "docs/protocol.md §7.8-7.9",
    discussion: """
        Pairs the client's node and operator sessions at once. Opens a single-select question and \
        asks the client to answer it with two options: the client may refuse, but it must send no \
        question.resolve (the Gateway would reject it as QUESTION_INVALID_ANSWER). Then requires \
        that a single option, two options of a multi-select question and free text for an isOther \
        question are each answered and recorded as given.
        """,
    tags: ["questions", "operator"],
    needs: [.answerQuestion],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let session = try await run.operatorSession()

    let single = try await run.openQuestion("Where should I deploy the build?", options: ["Staging", "Production"], to: session)
    _ = try await run.client.reply(to: .answerQuestion(id: single, answer: ["Staging", "Production"]))
    try await run.expectNoClientAnswer(to: single, "the client sent several values for a single-select question",
                                       expected: "no question.resolve for two options of a single-select question")
    try await run.expectAnswerRecorded(single, with: "Staging", recorded: ["Staging"], "a single-select question with one option")

    let multi = try await run.openQuestion("Which checks should run?", options: ["Lint", "Tests", "Docs"], multiSelect: true, to: session)
    try await run.expectAnswerRecorded(multi, with: ["Lint", "Docs"], recorded: ["Lint", "Docs"], "a multi-select question with two options")

    let other = try await run.openQuestion("Where should I deploy the build?", options: ["Staging", "Production"], allowOther: true, to: session)
    try await run.expectAnswerRecorded(other, with: ["other": "Canary"], recorded: ["Canary"], "an isOther question with free text")
}
