import Conformance
import GatewayProtocol
import MockGateway

let ques002 = Scenario(
    "QUES-002", .must,
    title: "an expired question is locked",
    requirement: "Once a question has expired (question.resolved with status expired, or its expiresAtMs has passed), the client locks its card and sends no answer.",
    source: "approvals-and-questions.md B.4, B.3, D.5",
    discussion: """
        Pairs the client's node and operator sessions at once, opens a question that expires after \
        20 s and waits until it reached the operator session. Moves the Gateway clock 21 s on and \
        waits for question.resolved {status: expired} to be sent to the client, then asks the \
        client to answer: it must send no question.resolve for the question.
        """,
    tags: ["questions", "operator", "expiry"],
    needs: [.answerQuestion],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let operatorSession = try await OperatorSteps.operatorSession(run)
    let id = try await OperatorSteps.openQuestion(run, "Where should I deploy the build?", options: ["Staging", "Production"],
                                                  expiresIn: .seconds(20), to: operatorSession)

    await run.advance(by: .seconds(21))
    try await OperatorSteps.awaitEvent(run, "question.resolved", id: id, status: "expired", to: operatorSession)

    _ = try await run.client.reply(to: .answerQuestion(id: id, answer: "Staging"))
    let attempts = await run.gateway.resolveAttempts().filter { $0.channel != .script && ($0.recordId ?? $0.requestedId) == id }
    try run.expect(attempts.isEmpty, "the client answered an expired question",
                   expected: "no question.resolve for \(id) after it expired",
                   actual: attempts.map { "\($0.requested) → \($0.result)" }.joined(separator: "; "))
}
