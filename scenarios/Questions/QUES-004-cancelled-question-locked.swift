import Conformance
import GatewayProtocol
import MockGateway

let ques004 = Scenario(
    "QUES-004", .must,
    title: "a cancelled question is locked",
    requirement: "Once the client knows a question was cancelled (question.resolved with status cancelled, or a QUESTION_ALREADY_TERMINAL reply saying so), it locks the card and sends no answer.",
    source: "docs/protocol.md §7.9, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, opens a question, waits until it \
        reached the operator session, cancels it from another surface and waits for \
        question.resolved {status: cancelled} to be sent to the client. The user then answers \
        twice. An answer sent before the client read the event is tolerated (the Gateway refuses it \
        and says why); once the client knows, it must send nothing: at most one question.resolve, \
        none of them applied.
        """,
    tags: ["questions", "operator"],
    needs: [.answerQuestion],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let (id, operatorSession) = try await run.openQuestion("Where should I deploy the build?", options: ["Staging", "Production"],
                                                           expiresIn: .seconds(900))

    try await run.gateway.cancelQuestion(id: id, surface: "agent")
    try await run.awaitOperatorEvent("question.resolved", id: id, status: "cancelled", to: operatorSession)

    _ = try await run.client.reply(to: .answerQuestion(id: id, answer: "Staging"))
    _ = try await run.client.reply(to: .answerQuestion(id: id, answer: "Production"))
    let attempts = await run.clientResolveAttempts(id: id)
    try await run.expectNoClientAnswer(to: id, since: Array(attempts.prefix(1)), "the client kept answering a cancelled question",
                                       expected: "at most one question.resolve for \(id) (before the cancellation reached the client)")
    try await run.expectEqual(run.gateway.question(id: id)?.status, .cancelled, "the question stays cancelled")
}
