import Conformance
import GatewayProtocol
import MockGateway

let ques003 = Scenario(
    "QUES-003", .must,
    title: "a question answered elsewhere is locked without a retry",
    requirement: "When another surface answered first, the client's answer gets QUESTION_ALREADY_TERMINAL; the client locks the card (answered elsewhere) and does not submit again.",
    source: "docs/protocol.md §7.9, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, opens a question and waits until it \
        reached the operator session. Arms a race so that a watch answers Production just before \
        the client's question.resolve is handled, then asks the client to answer Staging. Requires \
        exactly one question.resolve from the client (the loser), still one after a moment of client \
        time, and still one after the user answers the locked card again.
        """,
    tags: ["questions", "operator", "race"],
    needs: [.answerQuestion],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let id = try await run.openQuestion("Where should I deploy the build?", options: ["Staging", "Production"],
                                        expiresIn: .seconds(900)).id
    await run.gateway.raceQuestion(id: id, surfaceAnswers: ["q1": ["Production"]], order: .surfaceFirst)
    _ = try await run.client.reply(to: .answerQuestion(id: id, answer: "Staging"))
    let first = try await run.oneClientAnswer(to: id, "question.resolve with Staging")
    try run.expectEqual(first.result, .lost(winnerStatus: "answered"), "the client's answer lost to the watch's")
    try await run.expectAnswerStaysFinal(id, first: first, again: .answerQuestion(id: id, answer: "Staging"), subject: "question")
    try await run.expectQuestion(id, answers: ["q1": ["Production"]], "the recorded answer is still the watch's")
}
