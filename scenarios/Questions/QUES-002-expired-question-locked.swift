import Conformance
import GatewayProtocol
import MockGateway

let ques002 = Scenario(
    "QUES-002", .must,
    title: "an expired question is locked",
    requirement: "Once a question has expired (question.resolved with status expired, or its expiresAtMs has passed), the client locks its card and sends no answer.",
    source: "docs/protocol.md §7.9, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, opens a question that expires after \
        3 s and waits until it reached the operator session. Lets 4 s pass (for the client too), \
        waits for question.resolved {status: expired} to be sent to the client, then asks the \
        client to answer: it must send no question.resolve for the question.
        """,
    tags: ["questions", "operator", "expiry"],
    needs: [.answerQuestion],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let (id, operatorSession) = try await run.openQuestion("Where should I deploy the build?", options: ["Staging", "Production"],
                                                           expiresIn: .seconds(3))

    // Time passes for the client too (a jump of the Gateway's clock alone would leave a client
    // with its own clock racing the expiry event).
    await run.elapse(.seconds(4))
    try await run.awaitOperatorEvent("question.resolved", id: id, status: "expired", to: operatorSession)

    _ = try await run.client.reply(to: .answerQuestion(id: id, answer: "Staging"))
    try await run.expectNoClientAnswer(to: id, "the client answered an expired question",
                                       expected: "no question.resolve for \(id) after it expired")
}
