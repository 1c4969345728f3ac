import GatewayProtocol
import Testing
@testable import ReferenceNode

struct ApprovalBookTests {
    private let gateway = "ws://gw:1"

    private func book(decisions: [String] = ["allow-once", "deny"], expiresAtMs: Int64 = 10_000) -> ApprovalBook {
        var book = ApprovalBook(currentGateway: gateway)
        book.apply(event: "exec.approval.requested", payload: [
            "id": "a1", "approvalKind": "exec", "createdAtMs": 0, "expiresAtMs": .int(expiresAtMs),
            "request": ["command": "rm -rf build", "allowedDecisions": .array(decisions.map(JSONValue.string))],
        ])
        return book
    }

    private func snapshot(_ status: String, decision: String? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["id": "a1", "status": .string(status), "expiresAtMs": 10_000,
                                           "presentation": ["kind": "exec", "commandText": "x", "allowedDecisions": ["allow-once", "deny"]]]
        if let decision { object["decision"] = .string(decision) }
        return .object(object)
    }

    @Test func theFamilyFollowsTheAdvertisedMethods() {
        let configuration = TestSupport.configuration()
        #expect(ApprovalFamily.choose(methods: ["approval.get", "approval.resolve", "exec.approval.get", "exec.approval.resolve"],
                                      configuration: configuration) == .unified)
        #expect(ApprovalFamily.choose(methods: ["exec.approval.get", "exec.approval.resolve"], configuration: configuration) == .legacy)
        #expect(ApprovalFamily.choose(methods: ["approval.get", "exec.approval.get", "exec.approval.resolve"],
                                      configuration: configuration) == .unavailable)
        #expect(ApprovalFamily.choose(methods: ["exec.approval.get", "exec.approval.resolve"],
                                      configuration: TestSupport.configuration([.legacyOnlyUnifiedApprovals])) == .unified)
    }

    @Test func onlyAllowedDecisionsAreOfferedAndSent() {
        var approvals = book()
        #expect(approvals.card("a1")?.offeredDecisions == ["allow-once", "deny"])
        let refused = approvals.prepareResolve(id: "a1", decision: "allow-always", family: .unified, gatewayNowMs: 0,
                                               configuration: TestSupport.configuration())
        guard case .refuse = refused else { Issue.record("allow-always must be refused"); return }
        var mutant = book()
        let sent = mutant.prepareResolve(id: "a1", decision: "allow-always", family: .unified, gatewayNowMs: 0,
                                         configuration: TestSupport.configuration([.ignoreAllowedDecisions]))
        guard case .send = sent else { Issue.record("the mutant sends anything"); return }
    }

    @Test func malformedDecisionListsAreDropped() {
        #expect(ApprovalBook.validDecisions(["allow-once"]) == nil)
        #expect(ApprovalBook.validDecisions(["deny", "deny"]) == nil)
        #expect(ApprovalBook.validDecisions(["deny", "maybe"]) == nil)
        #expect(ApprovalBook.validDecisions(["allow-always", "deny"]) == ["allow-always", "deny"])
    }

    @Test func theUnifiedResolveCarriesKindAndTheCardLocksWhileInFlight() {
        var approvals = book()
        let configuration = TestSupport.configuration()
        let plan = approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0, configuration: configuration)
        #expect(plan == .send(method: "approval.resolve", params: ["id": "a1", "kind": "exec", "decision": "deny"]))
        #expect(approvals.card("a1")?.isLocked == true)
        guard case .refuse = approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0,
                                                      configuration: configuration) else { Issue.record("locked"); return }
        let follow = approvals.completeResolve(id: "a1", decision: "deny", family: .unified,
                                               result: .success(["applied": true, "approval": snapshot("denied", decision: "deny")]),
                                               configuration: configuration)
        #expect(follow == .applied)
        #expect(approvals.card("a1")?.phase == .terminal(status: "denied", decision: "deny"))
    }

    @Test func theLegacyResolveHasNoKind() {
        var approvals = book()
        let plan = approvals.prepareResolve(id: "a1", decision: "allow-once", family: .legacy, gatewayNowMs: 0,
                                            configuration: TestSupport.configuration())
        #expect(plan == .send(method: "exec.approval.resolve", params: ["id": "a1", "decision": "allow-once"]))
    }

    @Test func aLostReplyLocksTheCardUntilAReadBack() {
        var approvals = book()
        let configuration = TestSupport.configuration()
        _ = approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0, configuration: configuration)
        let follow = approvals.completeResolve(id: "a1", decision: "deny", family: .unified, result: .failure(.connectionLost),
                                               configuration: configuration)
        #expect(follow == .readBack)
        #expect(approvals.readBackCandidates == ["a1"])
        guard case .refuse = approvals.prepareResolve(id: "a1", decision: "allow-once", family: .unified, gatewayNowMs: 0,
                                                      configuration: configuration) else { Issue.record("must stay locked"); return }
        approvals.applyReadBack(id: "a1", family: .unified, result: .failure(.gateway(ErrorShape(code: "INVALID_REQUEST", message: "approval not found"))))
        #expect(approvals.card("a1")?.phase == .uncertain)
        approvals.applyReadBack(id: "a1", family: .unified, result: .success(["approval": snapshot("pending")]))
        #expect(approvals.card("a1")?.phase == .pending)
        #expect(approvals.card("a1")?.note == "The previous decision was not recorded. Review and try again.")
    }

    @Test func aReadBackOfATerminalRecordShowsTheWinner() {
        var approvals = book()
        let configuration = TestSupport.configuration()
        _ = approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0, configuration: configuration)
        _ = approvals.completeResolve(id: "a1", decision: "deny", family: .unified, result: .failure(.timedOut), configuration: configuration)
        approvals.applyReadBack(id: "a1", family: .unified, result: .success(["approval": snapshot("denied", decision: "deny")]))
        #expect(approvals.card("a1")?.phase == .terminal(status: "denied", decision: "deny"))
    }

    @Test func theNoReadbackMutantUnlocksAtOnce() {
        var approvals = book()
        let configuration = TestSupport.configuration([.noReadbackAfterLostAck])
        _ = approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0, configuration: configuration)
        _ = approvals.completeResolve(id: "a1", decision: "deny", family: .unified, result: .failure(.connectionLost), configuration: configuration)
        #expect(approvals.card("a1")?.phase == .pending)
        #expect(approvals.readBackCandidates.isEmpty)
    }

    @Test func aLoserAnswerIsFinalAndTheMutantRetries() {
        let loserReply: JSONValue = ["applied": false, "approval": snapshot("allowed", decision: "allow-once")]
        var approvals = book()
        let configuration = TestSupport.configuration()
        _ = approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0, configuration: configuration)
        let follow = approvals.completeResolve(id: "a1", decision: "deny", family: .unified, result: .success(loserReply),
                                               configuration: configuration)
        #expect(follow == .lost(note: "This approval was already allowed."))
        #expect(approvals.card("a1")?.phase == .terminal(status: "allowed", decision: "allow-once"))

        var legacy = book()
        _ = legacy.prepareResolve(id: "a1", decision: "deny", family: .legacy, gatewayNowMs: 0, configuration: configuration)
        let error = ErrorShape(code: "INVALID_REQUEST", message: "approval already resolved", details: ["reason": "APPROVAL_ALREADY_RESOLVED"])
        #expect(legacy.completeResolve(id: "a1", decision: "deny", family: .legacy, result: .failure(.gateway(error)),
                                       configuration: configuration) == .lost(note: "Approval was resolved elsewhere."))

        var mutant = book()
        let retrying = TestSupport.configuration([.retryAfterLosingRace])
        _ = mutant.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0, configuration: retrying)
        #expect(mutant.completeResolve(id: "a1", decision: "deny", family: .unified, result: .success(loserReply),
                                       configuration: retrying) == .retry(decision: "deny"))
    }

    @Test func anAppliedReplyWithAnotherDecisionIsReadBack() {
        var approvals = book()
        let configuration = TestSupport.configuration()
        _ = approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0, configuration: configuration)
        #expect(approvals.completeResolve(id: "a1", decision: "deny", family: .unified,
                                          result: .success(["applied": true, "approval": snapshot("allowed", decision: "allow-once")]),
                                          configuration: configuration) == .readBack)
    }

    @Test func expiredApprovalsAreLockedByDeadlineOrEventUnlessTheMutantIgnoresIt() {
        let configuration = TestSupport.configuration()
        var byClock = book(expiresAtMs: 10_000)
        guard case .refuse = byClock.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 10_000,
                                                    configuration: configuration) else { Issue.record("expired at the deadline"); return }
        var byEvent = book()
        byEvent.apply(event: "session.approval", payload: ["phase": "terminal", "approval": snapshot("expired")])
        guard case .refuse = byEvent.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0,
                                                    configuration: configuration) else { Issue.record("expired by event"); return }
        var mutant = book()
        mutant.apply(event: "session.approval", payload: ["phase": "terminal", "approval": snapshot("expired")])
        guard case .send = mutant.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0,
                                                 configuration: TestSupport.configuration([.resolveExpiredApproval])) else {
            Issue.record("the mutant resolves anyway"); return
        }
    }

    @Test func cancelledAndResolvedEventsLockTheCard() {
        var approvals = book()
        approvals.apply(event: "exec.approval.resolved", payload: ["id": "a1", "decision": "allow-once", "ts": 1])
        #expect(approvals.card("a1")?.isLocked == true)
        var cancelled = book()
        cancelled.apply(event: "session.approval", payload: ["phase": "terminal", "approval": snapshot("cancelled")])
        #expect(cancelled.card("a1")?.phase == .terminal(status: "cancelled", decision: nil))
        cancelled.apply(event: "exec.approval.requested", payload: ["id": "a1", "request": ["allowedDecisions": ["deny"]]])
        #expect(cancelled.card("a1")?.isLocked == true)
    }

    @Test func promptsOfAnOldGatewayCannotBeResolvedAfterASwitch() {
        var approvals = book()
        approvals.switchGateway(to: "ws://other:2")
        #expect(approvals.visibleCards.isEmpty)
        #expect(approvals.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0,
                                         configuration: TestSupport.configuration())
            == .refuse("This approval belongs to a different gateway."))
        var mutant = book()
        mutant.switchGateway(to: "ws://other:2")
        guard case .send = mutant.prepareResolve(id: "a1", decision: "deny", family: .unified, gatewayNowMs: 0,
                                                 configuration: TestSupport.configuration([.resolveOldGatewayPrompt])) else {
            Issue.record("the mutant resolves the old prompt"); return
        }
        var back = book()
        back.switchGateway(to: "ws://other:2")
        back.switchGateway(to: gateway)
        #expect(back.card("a1") != nil)
    }

    @Test func anUnknownIdAsksForAFetch() {
        var approvals = ApprovalBook(currentGateway: gateway)
        #expect(approvals.prepareResolve(id: "zz", decision: "deny", family: .unified, gatewayNowMs: 0,
                                         configuration: TestSupport.configuration()) == .fetchCard)
        approvals.applyFetched(id: "zz", family: .legacy, payload: ["id": "zz", "allowedDecisions": ["allow-once", "deny"], "expiresAtMs": 5])
        #expect(approvals.card("zz")?.allowedDecisions == ["allow-once", "deny"])
    }
}

struct QuestionBookTests {
    private let gateway = "ws://gw:1"

    private func record(multiSelect: Bool = false, isOther: Bool = false, expiresAtMs: Int64 = 10_000,
                        options: [String] = ["Staging", "Production"]) -> JSONValue {
        [
            "id": "q1", "status": "pending", "createdAtMs": 0, "expiresAtMs": .int(expiresAtMs),
            "questions": [[
                "questionId": "destination", "header": "Deploy", "question": "Where?",
                "options": .array(options.map { ["label": .string($0)] }), "multiSelect": .bool(multiSelect), "isOther": .bool(isOther),
            ]],
        ]
    }

    private func book(_ record: JSONValue) -> QuestionBook {
        var book = QuestionBook(currentGateway: gateway)
        book.apply(event: "question.requested", payload: record)
        return book
    }

    @Test func aSingleSelectAnswerIsSentInTheNewestShape() {
        var questions = book(record())
        let plan = questions.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 0, configuration: TestSupport.configuration())
        #expect(plan == .send(params: ["id": "q1", "answers": ["answers": ["destination": ["Staging"]]]]))
        #expect(questions.card("q1")?.status == .submitting)
    }

    @Test func singleSelectRefusesSeveralValuesUnlessTheMutantSendsThem() {
        var questions = book(record())
        guard case .refuse = questions.prepareAnswer(id: "q1", answer: ["Staging", "Production"], gatewayNowMs: 0,
                                                     configuration: TestSupport.configuration()) else {
            Issue.record("single select takes one value"); return
        }
        var mutant = book(record())
        guard case .send = mutant.prepareAnswer(id: "q1", answer: ["Staging", "Production"], gatewayNowMs: 0,
                                                configuration: TestSupport.configuration([.singleSelectMultiAnswer])) else {
            Issue.record("the mutant sends both"); return
        }
    }

    @Test func multiSelectAndFreeTextFollowTheShape() {
        var multi = book(record(multiSelect: true))
        guard case .send = multi.prepareAnswer(id: "q1", answer: ["destination": ["Staging", "Production"]], gatewayNowMs: 0,
                                               configuration: TestSupport.configuration()) else { Issue.record("multi"); return }
        var closed = book(record())
        guard case .refuse = closed.prepareAnswer(id: "q1", answer: ["other": "Mars"], gatewayNowMs: 0,
                                                  configuration: TestSupport.configuration()) else { Issue.record("no free text"); return }
        var other = book(record(isOther: true))
        #expect(other.prepareAnswer(id: "q1", answer: ["other": "Mars"], gatewayNowMs: 0, configuration: TestSupport.configuration())
            == .send(params: ["id": "q1", "answers": ["answers": ["destination": ["Mars"]]]]))
        var empty = book(record())
        guard case .refuse = empty.prepareAnswer(id: "q1", answer: " ", gatewayNowMs: 0,
                                                 configuration: TestSupport.configuration()) else { Issue.record("blank"); return }
    }

    @Test func expiredQuestionsAreNeverAnsweredUnlessTheMutantDoes() {
        var byEvent = book(record())
        byEvent.apply(event: "question.resolved", payload: ["id": "q1", "status": "expired"])
        #expect(byEvent.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 0, configuration: TestSupport.configuration())
            == .refuse("question expired"))
        var byClock = book(record(expiresAtMs: 100))
        #expect(byClock.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 100, configuration: TestSupport.configuration())
            == .refuse("question expired"))
        var mutant = book(record())
        mutant.apply(event: "question.resolved", payload: ["id": "q1", "status": "expired"])
        guard case .send = mutant.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 0,
                                                configuration: TestSupport.configuration([.answerExpiredQuestion])) else {
            Issue.record("the mutant answers"); return
        }
    }

    @Test func cancelledQuestionsAreLockedUnlessTheMutantAnswers() {
        var questions = book(record())
        questions.apply(event: "question.resolved", payload: ["id": "q1", "status": "cancelled"])
        #expect(questions.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 0, configuration: TestSupport.configuration())
            == .refuse("question was cancelled"))
        var mutant = book(record())
        mutant.apply(event: "question.resolved", payload: ["id": "q1", "status": "cancelled"])
        guard case .send = mutant.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 0,
                                                configuration: TestSupport.configuration([.answerCancelledQuestion])) else {
            Issue.record("the mutant answers"); return
        }
    }

    @Test func alreadyTerminalLocksWithoutRetryingAndTheMutantRetries() {
        let error = ErrorShape(code: "INVALID_REQUEST", message: "question 'q1' is already answered", details: ["reason": "QUESTION_ALREADY_TERMINAL"])
        var questions = book(record())
        let configuration = TestSupport.configuration()
        guard case .send(let params) = questions.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 0, configuration: configuration) else {
            Issue.record("send"); return
        }
        #expect(questions.completeAnswer(id: "q1", params: params, result: .failure(.gateway(error)), configuration: configuration) == .done)
        #expect(questions.card("q1")?.status == .answeredElsewhere)
        var mutant = book(record())
        let retrying = TestSupport.configuration([.retryTerminalQuestion])
        _ = mutant.prepareAnswer(id: "q1", answer: "Staging", gatewayNowMs: 0, configuration: retrying)
        #expect(mutant.completeAnswer(id: "q1", params: params, result: .failure(.gateway(error)), configuration: retrying)
            == .retry(params: params))
    }

    @Test func aReloadAddsNewQuestionsAndAsksAboutVanishedOnes() {
        var questions = book(record())
        var second = record()
        if case .object(var object) = second { object["id"] = "q2"; second = .object(object) }
        let missing = questions.applyList(["questions": [second]])
        #expect(missing == ["q1"])
        #expect(questions.card("q2")?.status == .pending)
        questions.applyGet(id: "q1", result: .failure(.gateway(ErrorShape(code: "INVALID_REQUEST", message: "gone",
                                                                           details: ["reason": "QUESTION_NOT_FOUND"]))))
        #expect(questions.card("q1")?.status == .unavailable)
    }

    @Test func aTerminalCardIsNeverReplacedByAPendingRecord() {
        var questions = book(record())
        questions.apply(event: "question.resolved", payload: ["id": "q1", "status": "cancelled"])
        questions.apply(record: record())
        #expect(questions.card("q1")?.status == .cancelled)
    }
}
