import Conformance
import GatewayProtocol
import MockGateway

let ques001 = Scenario(
    "QUES-001", .must,
    title: "pending questions are reloaded after a reconnect",
    requirement: "After its operator session reconnects, the client reloads the pending questions with question.list (events sent while it was away are lost), so a question asked meanwhile can be answered.",
    source: "docs/protocol.md §7.9, §7.11",
    discussion: """
        Pairs the client's node and operator sessions at once, disconnects the client and, while it \
        is away, opens a question. Reconnects the client and requires a question.list request on \
        its new operator session, then asks the client to answer the question and requires that \
        the answer reached the Gateway.
        """,
    tags: ["questions", "operator", "reconnect"],
    needs: [.disconnect, .connect, .answerQuestion],
    profiles: .current,
    options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })
) { run in
    let operatorSession = try await run.operatorSession()
    try await run.disconnect(until: .closed(operatorSession.connectionId))
    let id = try await run.gateway.createQuestion("Where should I deploy the build?", options: ["Staging", "Production"],
                                                  expiresIn: .seconds(900)).id

    let reconnected = try await run.reconnect(.operator, "the operator session reconnecting")
    try await run.waitForEvent(.request("question.list", on: reconnected.connectionId), from: .start)

    try await run.expectClientAccepts(.answerQuestion(id: id, answer: "Staging"), "the client answers the question asked while it was away")
    try await run.expectQuestion(id, answers: ["q1": ["Staging"]], "the recorded answer")
}
