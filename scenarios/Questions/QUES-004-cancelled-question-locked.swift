import Conformance
import GatewayProtocol
import MockGateway

let ques004 = Scenario(
    "QUES-004", .must,
    title: "a cancelled question is locked",
    requirement: "Once the client knows a question was cancelled (question.resolved with status cancelled, or a QUESTION_ALREADY_TERMINAL reply saying so), it locks the card and sends no answer.",
    source: "approvals-and-questions.md B.4, B.3, D.5",
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
    let operatorSession = try await run.waitForEvent("the client's operator session (hello-ok with role operator)") { event in
        if case .sessionOpened(let info) = event, info.role == "operator" { info } else { nil }
    }
    let question = try await run.gateway.createQuestion("Where should I deploy the build?", options: ["Staging", "Production"],
                                                        expiresIn: .seconds(900))
    let id = question.id
    try await run.waitForEvent("question.requested for \(id) on the operator session", where: { event in
        guard case .frameOut(let connectionId, .event(let frame)) = event, connectionId == operatorSession.connectionId else { return false }
        return frame.event == "question.requested" && frame.payload?["id"]?.stringValue == id
    })

    try await run.gateway.cancelQuestion(id: id, surface: "agent")
    try await run.waitForEvent("question.resolved {status: cancelled} for \(id) on the operator session", where: { event in
        guard case .frameOut(let connectionId, .event(let frame)) = event, connectionId == operatorSession.connectionId else { return false }
        return frame.event == "question.resolved" && frame.payload?["id"]?.stringValue == id
            && frame.payload?["status"]?.stringValue == "cancelled"
    })

    _ = try await run.client.reply(to: .answerQuestion(id: id, answer: "Staging"))
    _ = try await run.client.reply(to: .answerQuestion(id: id, answer: "Production"))
    let attempts = await run.gateway.resolveAttempts().filter { $0.channel != .script && ($0.recordId ?? $0.requestedId) == id }
    try run.expect(attempts.count <= 1, "the client kept answering a cancelled question",
                   expected: "at most one question.resolve for \(id) (before the cancellation reached the client)",
                   actual: attempts.map { "\($0.requested) → \($0.result)" }.joined(separator: "; "))
    let final = await run.gateway.question(id: id)
    try run.expectEqual(final?.status, .cancelled, "the question stays cancelled")
}
