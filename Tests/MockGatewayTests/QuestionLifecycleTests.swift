import GatewayProtocol
import Testing
@testable import MockGateway

private let t0: Int64 = 1_767_225_600_000
private let runtime = OperatorCaller(scopes: [.admin], surface: "conn-agent", clientId: "gateway-client")
private let phone = OperatorCaller(scopes: [.read, .questions], surface: "conn-phone", deviceId: "dev-phone",
                                   clientId: "openclaw-ios", displayName: "iPhone")
private let fifteenMinutes: Int64 = 15 * 60 * 1000

private let destination: JSONValue = [
    "questionId": "destination", "header": "Deploy to", "question": "Where should I deploy the build?",
    "options": [["label": "Staging", "description": "Safe, resets nightly"],
                ["label": "Production", "description": "Customer facing"]],
    "multiSelect": false, "isOther": true,
]

private func makeStore() -> QuestionStore { QuestionStore(random: SeededRandom(seed: 5)) }

@discardableResult
private func ask(_ store: inout QuestionStore, id: String = "ask_7f3a", extra: [String: JSONValue] = [:],
                 at nowMs: Int64 = t0) throws -> OperatorOutcome {
    var params: [String: JSONValue] = ["id": .string(id), "questions": [destination], "agentId": "main",
                                       "sessionKey": "agent:main:main", "runId": "run-123"]
    params.merge(extra) { _, new in new }
    let outcome = store.handleRequest(params: .object(params), caller: runtime, nowMs: nowMs)
    try #require(outcome.payload != nil, "\(String(describing: outcome.error))")
    return outcome
}

private func answer(_ store: inout QuestionStore, id: String = "ask_7f3a", _ values: [String: JSONValue],
                    by caller: OperatorCaller = phone, at nowMs: Int64, extra: [String: JSONValue] = [:]) -> OperatorOutcome {
    var params: [String: JSONValue] = ["id": .string(id), "answers": ["answers": .object(values)]]
    params.merge(extra) { _, new in new }
    return store.handleResolve(params: .object(params), caller: caller, nowMs: nowMs)
}

@Suite("Agent questions: lifecycle")
struct QuestionLifecycleTests {
    @Test("question.request answers {id, expiresAtMs} with the 15-minute default and publishes the full record")
    func requestPublishesRecord() throws {
        var store = makeStore()
        let outcome = try ask(&store)
        #expect(outcome.payload == ["id": "ask_7f3a", "expiresAtMs": .int(t0 + fifteenMinutes)])
        let event = try #require(outcome.events.first)
        #expect(event.name == "question.requested")
        #expect(event.audience == .sessionOrBroadcast(sessionKey: "agent:main:main"))
        #expect(event.payload == [
            "id": "ask_7f3a", "questions": [destination], "agentId": "main", "sessionKey": "agent:main:main",
            "runId": "run-123", "createdAtMs": .int(t0), "expiresAtMs": .int(t0 + fifteenMinutes), "status": "pending",
        ])
    }

    @Test("a custom timeoutMs sets the deadline; without an id a random one is chosen")
    func customTimeout() throws {
        var store = makeStore()
        let outcome = store.handleRequest(params: ["questions": [destination], "timeoutMs": 90_000], caller: runtime, nowMs: t0)
        #expect(outcome.payload?["expiresAtMs"] == .int(t0 + 90_000))
        let id = try #require(outcome.payload?["id"]?.stringValue)
        #expect(id.count == 36)
        #expect(store.record(id: id)?.agentId == nil)
    }

    @Test("question.resolve answers {status:answered, answers}, publishes question.resolved and completes waiters")
    func answerResolves() throws {
        var store = makeStore()
        try ask(&store)
        let waiter = try #require(store.handleWaitAnswer(params: ["id": "ask_7f3a"], caller: runtime, nowMs: t0 + 1).waiter)
        let outcome = answer(&store, ["destination": ["Staging"]], at: t0 + 2)
        #expect(outcome.payload == ["status": "answered", "answers": ["answers": ["destination": ["Staging"]]]])
        let event = try #require(outcome.events.first)
        #expect(event.name == "question.resolved")
        #expect(event.payload == ["id": "ask_7f3a", "status": "answered", "answers": ["answers": ["destination": ["Staging"]]]])
        let settled = try #require(outcome.effects.compactMap { if case .settled(let s) = $0 { s } else { nil } }.first)
        #expect(waiter.finalReply(for: settled) == ["status": "answered", "answers": ["answers": ["destination": ["Staging"]]]])
        #expect(store.record(id: "ask_7f3a")?.resolvedBy == "iPhone")
        #expect(store.handleGet(params: ["id": "ask_7f3a"], caller: phone, nowMs: t0 + 3).payload?["question"]?["answers"]
            == ["answers": ["destination": ["Staging"]]])
    }

    @Test("resolutionId reaches only waiters that asked for it, never the record or the events")
    func resolutionId() throws {
        var store = makeStore()
        try ask(&store)
        let plain = try #require(store.handleWaitAnswer(params: ["id": "ask_7f3a"], caller: runtime, nowMs: t0).waiter)
        let asking = try #require(store.handleWaitAnswer(params: ["id": "ask_7f3a", "includeResolutionId": true],
                                                         caller: runtime, nowMs: t0).waiter)
        let outcome = answer(&store, ["destination": ["Production"]], at: t0 + 1, extra: ["resolutionId": "res-9", "resolvedBy": "ios"])
        let settled = try #require(outcome.effects.compactMap { if case .settled(let s) = $0 { s } else { nil } }.first)
        #expect(asking.finalReply(for: settled)?["resolutionId"] == "res-9")
        #expect(plain.finalReply(for: settled)?["resolutionId"] == nil)
        #expect(outcome.events.first?.payload["resolutionId"] == nil)
        #expect(store.record(id: "ask_7f3a")?.json["resolutionId"] == nil)
        #expect(store.record(id: "ask_7f3a")?.resolvedBy == "ios")
        let late = store.handleWaitAnswer(params: ["id": "ask_7f3a", "includeResolutionId": true], caller: runtime, nowMs: t0 + 2)
        #expect(late.payload?["resolutionId"] == "res-9")
    }

    @Test("a second answer is QUESTION_ALREADY_TERMINAL \"question '<id>' is already answered\"")
    func secondAnswerLoses() throws {
        var store = makeStore()
        try ask(&store)
        _ = answer(&store, ["destination": ["Staging"]], at: t0 + 1)
        let loser = answer(&store, ["destination": ["Production"]], at: t0 + 2)
        #expect(loser.error == ErrorShape(code: "INVALID_REQUEST", message: "question 'ask_7f3a' is already answered",
                                          details: ["reason": "QUESTION_ALREADY_TERMINAL"]))
        #expect(store.record(id: "ask_7f3a")?.answers == ["destination": ["Staging"]])
        #expect(store.resolveAttempts.map(\.result) == [.applied, .lost(winnerStatus: "answered")])
    }

    @Test("cancel answers {status:cancelled} and publishes question.resolved {id, status:cancelled}")
    func cancel() throws {
        var store = makeStore()
        try ask(&store)
        let outcome = store.handleResolve(params: ["id": "ask_7f3a", "cancel": true], caller: phone, nowMs: t0 + 1)
        #expect(outcome.payload == ["status": "cancelled"])
        #expect(outcome.events.first?.payload == ["id": "ask_7f3a", "status": "cancelled"])
        #expect(answer(&store, ["destination": ["Staging"]], at: t0 + 2).error?.message == "question 'ask_7f3a' is already cancelled")
    }

    @Test("a question expires at expiresAtMs on any read and publishes question.resolved {status:expired}")
    func expiryOnRead() throws {
        var store = makeStore()
        try ask(&store)
        #expect(store.nextDeadlineMs == t0 + fifteenMinutes)
        #expect(store.handleGet(params: ["id": "ask_7f3a"], caller: phone, nowMs: t0 + fifteenMinutes - 1)
            .payload?["question"]?["status"] == "pending")
        let outcome = store.handleGet(params: ["id": "ask_7f3a"], caller: phone, nowMs: t0 + fifteenMinutes)
        #expect(outcome.payload?["question"]?["status"] == "expired")
        #expect(outcome.events.map(\.payload) == [["id": "ask_7f3a", "status": "expired"]])
    }

    @Test("a late answer after expiry is QUESTION_ALREADY_TERMINAL during the 15 s grace, QUESTION_NOT_FOUND after")
    func lateAnswer() throws {
        var store = makeStore()
        try ask(&store)
        let expiredAt = t0 + fifteenMinutes
        let late = answer(&store, ["destination": ["Staging"]], at: expiredAt)
        #expect(late.error == ErrorShape(code: "INVALID_REQUEST", message: "question 'ask_7f3a' is already expired",
                                         details: ["reason": "QUESTION_ALREADY_TERMINAL"]))
        #expect(late.events.map(\.name) == ["question.resolved"], "the expiry discovered on the way is still published")
        #expect(answer(&store, ["destination": ["Staging"]], at: expiredAt + 14_999).error?.details?["reason"]
            == "QUESTION_ALREADY_TERMINAL")
        let gone = answer(&store, ["destination": ["Staging"]], at: expiredAt + 15_000)
        #expect(gone.error == ErrorShape(code: "INVALID_REQUEST", message: "question 'ask_7f3a' was not found",
                                         details: ["reason": "QUESTION_NOT_FOUND"]))
        #expect(store.handleGet(params: ["id": "ask_7f3a"], caller: phone, nowMs: expiredAt + 15_000).error?.details?["reason"]
            == "QUESTION_NOT_FOUND")
    }

    @Test("expire(nowMs:) settles waiters with {status:expired}")
    func expireSettlesWaiters() throws {
        var store = makeStore()
        try ask(&store, extra: ["timeoutMs": 1_000])
        let waiter = try #require(store.handleWaitAnswer(params: ["id": "ask_7f3a"], caller: runtime, nowMs: t0).waiter)
        let effects = store.expire(nowMs: t0 + 1_000)
        let settled = try #require(effects.compactMap { if case .settled(let s) = $0 { s } else { nil } }.first)
        #expect(waiter.finalReply(for: settled) == ["status": "expired"])
    }

    @Test("question.waitAnswer with timeoutMs gives the actor a deadline and the {status:pending} reply")
    func waitAnswerTimeout() throws {
        var store = makeStore()
        try ask(&store)
        let waiter = try #require(store.handleWaitAnswer(params: ["id": "ask_7f3a", "timeoutMs": 5_000], caller: runtime,
                                                         nowMs: t0 + 10).waiter)
        #expect(waiter.deadlineMs == t0 + 5_010)
        #expect(waiter.timeoutReply == ["status": "pending"])
        #expect(store.handleWaitAnswer(params: ["id": "missing"], caller: runtime, nowMs: t0).error?.details?["reason"]
            == "QUESTION_NOT_FOUND")
    }

    @Test("question.list returns only pending questions, oldest first")
    func list() throws {
        var store = makeStore()
        try ask(&store, id: "b", at: t0)
        try ask(&store, id: "a", at: t0)
        try ask(&store, id: "c", at: t0 + 1)
        _ = answer(&store, id: "b", ["destination": ["Staging"]], at: t0 + 2)
        let outcome = store.handleList(params: [:], caller: phone, nowMs: t0 + 3)
        #expect(outcome.payload?["questions"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a", "c"])
    }

    @Test("a reused id is QUESTION_ID_IN_USE while the record is known, and free again after the grace")
    func idInUse() throws {
        var store = makeStore()
        try ask(&store)
        let reuse = store.handleRequest(params: ["id": "ask_7f3a", "questions": [destination]], caller: runtime, nowMs: t0 + 1)
        #expect(reuse.error == ErrorShape(code: "INVALID_REQUEST", message: "question 'ask_7f3a' already exists",
                                          details: ["reason": "QUESTION_ID_IN_USE"]))
        _ = answer(&store, ["destination": ["Staging"]], at: t0 + 2)
        #expect(store.handleRequest(params: ["id": "ask_7f3a", "questions": [destination]], caller: runtime, nowMs: t0 + 3).error?
            .details?["reason"] == "QUESTION_ID_IN_USE")
        #expect(store.handleRequest(params: ["id": "ask_7f3a", "questions": [destination]], caller: runtime,
                                    nowMs: t0 + 2 + 15_000).payload != nil)
    }

    @Test("an ended run cancels its pending questions and new ones are QUESTION_REQUESTER_INACTIVE")
    func requesterInactive() throws {
        var store = makeStore()
        try ask(&store)
        let effects = store.endRun("run-123", nowMs: t0 + 1)
        #expect(store.record(id: "ask_7f3a")?.status == .cancelled)
        #expect(store.record(id: "ask_7f3a")?.resolvedBy == "requester-inactive")
        #expect(effects.contains { if case .publish(let e) = $0 { e.payload["status"] == "cancelled" } else { false } })
        let refused = store.handleRequest(params: ["id": "ask_2", "questions": [destination], "runId": "run-123"],
                                          caller: runtime, nowMs: t0 + 2)
        #expect(refused.error == ErrorShape(code: "INVALID_REQUEST",
                                            message: "the agent run that requested this question is no longer active",
                                            details: ["reason": "QUESTION_REQUESTER_INACTIVE"]))
    }

    @Test("scripted surfaces answer, cancel and expire with the wire rules and are recorded")
    func scripting() throws {
        var store = makeStore()
        let opened = store.open(QuestionDraft(id: "s1", questions: [QuestionItem(
            questionId: "pick", header: "Pick", question: "Pick one",
            options: [QuestionOption(label: "A", value: "a"), QuestionOption(label: "B", value: "b")])],
            expiresInMs: 60_000), nowMs: t0)
        #expect(try opened.get().expiresAtMs == t0 + 60_000)
        let answered = try store.answer(id: "s1", answers: ["pick": ["A"]], as: .surface("watch"), nowMs: t0 + 1).get()
        #expect(answered.answers == ["pick": ["a"]])
        #expect(store.answer(id: "s1", answers: ["pick": ["B"]], nowMs: t0 + 2).failure()?.details?["reason"] == "QUESTION_ALREADY_TERMINAL")
        _ = try store.open(QuestionDraft(id: "s2", questions: [QuestionItem(questionId: "q", header: "Q", question: "Why?")]),
                           nowMs: t0).get()
        #expect(try store.cancel(id: "s2", nowMs: t0 + 1).get().status == .cancelled)
        _ = try store.open(QuestionDraft(id: "s3", questions: [QuestionItem(questionId: "q", header: "Q", question: "Why?")]),
                           nowMs: t0).get()
        #expect(try store.expireNow(id: "s3", nowMs: t0 + 1).get().status == .expired)
        #expect(store.resolveAttempts.map(\.surface) == ["watch", "script", "script"])
    }

    @Test("through OperatorState: the legacy profile has no questions (\"unknown method: question.list\")")
    func legacyProfileHasNoQuestions() {
        var state = OperatorState(features: .legacy, random: SeededRandom(seed: 1))
        let outcome = state.handle(method: "question.list", params: [:], caller: phone, nowMs: t0)
        #expect(outcome?.error == ErrorShape(code: "INVALID_REQUEST", message: "unknown method: question.list"))
        #expect(!state.offeredMethods.contains("question.list"))
        #expect(!state.offeredMethods.contains("approval.get"))
        #expect(state.offeredMethods.contains("exec.approval.resolve"))
    }

    @Test("through OperatorState: question methods need operator.questions and nodes are refused")
    func stateAuthorizes() throws {
        var state = OperatorState(features: .current, random: SeededRandom(seed: 1))
        let reader = OperatorCaller(scopes: [.read], surface: "conn-reader")
        #expect(state.handle(method: "question.list", params: [:], caller: reader, nowMs: t0)?.error?.details?["missingScope"]
            == "operator.questions")
        let node = OperatorCaller(role: .node, scopes: [], surface: "conn-node")
        #expect(state.handle(method: "question.list", params: [:], caller: node, nowMs: t0)?.error?.message == "unauthorized role: node")
        #expect(state.handle(method: "question.list", params: [:], caller: phone, nowMs: t0)?.payload == ["questions": []])
        #expect(state.handle(method: "node.list", params: [:], caller: phone, nowMs: t0) == nil)
    }
}
