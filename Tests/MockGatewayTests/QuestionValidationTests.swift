import GatewayProtocol
import Testing
@testable import MockGateway

private let t0: Int64 = 1_767_225_600_000
private let runtime = OperatorCaller(scopes: [.admin], surface: "conn-agent")
private let phone = OperatorCaller(scopes: [.questions], surface: "conn-phone")

private func question(_ id: String = "q", options: [JSONValue] = [], multiSelect: Bool = false, isOther: Bool = false,
                      extra: [String: JSONValue] = [:]) -> JSONValue {
    var object: [String: JSONValue] = ["questionId": .string(id), "header": "Header", "question": "Question?",
                                       "options": .array(options), "multiSelect": .bool(multiSelect), "isOther": .bool(isOther)]
    object.merge(extra) { _, new in new }
    return .object(object)
}

private let twoColours: [JSONValue] = [["label": "Red"], ["label": "Blue"]]

/// Opens one question and submits `answers`; returns the resolve outcome and the store.
private func submit(_ questions: [JSONValue], _ answers: [String: JSONValue]) -> (OperatorOutcome, QuestionStore) {
    var store = QuestionStore(random: SeededRandom(seed: 2))
    let opened = store.handleRequest(params: ["id": "ask", "questions": .array(questions)], caller: runtime, nowMs: t0)
    if let error = opened.error { Issue.record("question.request failed: \(error.message)") }
    let outcome = store.handleResolve(params: ["id": "ask", "answers": ["answers": .object(answers)]], caller: phone, nowMs: t0 + 1)
    return (outcome, store)
}

private func invalidAnswer(_ message: String) -> ErrorShape {
    ErrorShape(code: "INVALID_REQUEST", message: message, details: ["reason": "QUESTION_INVALID_ANSWER"])
}

@Suite("Agent questions: shapes and answer validation")
struct QuestionValidationTests {
    @Test("single select accepts one value and refuses two")
    func singleSelect() {
        #expect(submit([question(options: twoColours)], ["q": ["Red"]]).0.payload?["status"] == "answered")
        let (outcome, store) = submit([question(options: twoColours)], ["q": ["Red", "Blue"]])
        #expect(outcome.error == invalidAnswer("question 'q' does not allow multiple answers"))
        #expect(store.record(id: "ask")?.status == .pending, "an invalid answer leaves the question pending")
    }

    @Test("multi select accepts several values")
    func multiSelect() {
        let (outcome, _) = submit([question(options: twoColours, multiSelect: true)], ["q": ["Red", "Blue"]])
        #expect(outcome.payload?["answers"] == ["answers": ["q": ["Red", "Blue"]]])
    }

    @Test("a value that is not an option is refused unless isOther allows free text")
    func unknownOption() {
        #expect(submit([question(options: twoColours)], ["q": ["Green"]]).0.error
            == invalidAnswer("question 'q' contains an unknown option"))
        #expect(submit([question(options: twoColours, isOther: true)], ["q": ["Green"]]).0.payload?["answers"]
            == ["answers": ["q": ["Green"]]])
    }

    @Test("a question without options takes free text")
    func freeText() {
        #expect(submit([question()], ["q": ["  anything  "]]).0.payload?["answers"] == ["answers": ["q": ["anything"]]])
    }

    @Test("labels are canonicalised to the option's value; trimmed labels match")
    func canonicalisation() {
        let options: [JSONValue] = [["label": "Staging", "value": "stg"], ["label": "Production", "value": "prod"]]
        #expect(submit([question(options: options)], ["q": [" Staging "]]).0.payload?["answers"] == ["answers": ["q": ["stg"]]])
        #expect(submit([question(options: options)], ["q": ["prod"]]).0.payload?["answers"] == ["answers": ["q": ["prod"]]])
    }

    @Test("secret answers are kept byte-exact")
    func secretsKeepBytes() {
        let (outcome, _) = submit([question(extra: ["isSecret": true])], ["q": [" s3cret "]])
        #expect(outcome.payload?["answers"] == ["answers": ["q": [" s3cret "]]])
    }

    @Test("every question needs an answer unless allowEmpty; blank values are refused")
    func requiredAnswers() {
        #expect(submit([question("a"), question("b")], ["a": ["x"]]).0.error == invalidAnswer("question 'b' requires an answer"))
        #expect(submit([question()], ["q": []]).0.error == invalidAnswer("question 'q' requires an answer"))
        #expect(submit([question()], ["q": ["   "]]).0.error == invalidAnswer("question 'q' contains an empty answer"))
        #expect(submit([question(extra: ["allowEmpty": true])], [:]).0.payload?["answers"] == ["answers": ["q": []]])
    }

    @Test("an answer for a question that was not asked is refused")
    func unknownQuestionId() {
        #expect(submit([question()], ["q": ["x"], "zzz": ["y"]]).0.error == invalidAnswer("question 'zzz' is not part of this request"))
    }

    @Test("answers must use the newest shape {answers:{answers:{qid:[…]}}}")
    func answerShape() {
        var store = QuestionStore(random: SeededRandom(seed: 2))
        _ = store.handleRequest(params: ["id": "ask", "questions": [question()]], caller: runtime, nowMs: t0)
        let middle = store.handleResolve(params: ["id": "ask", "answers": ["answers": ["q": ["answers": ["x"]]]]], caller: phone, nowMs: t0)
        #expect(middle.error?.message.hasPrefix("invalid question.resolve params:") == true)
        let earliest = store.handleResolve(params: ["id": "ask", "answers": ["q": ["text": "x"]]], caller: phone, nowMs: t0)
        #expect(earliest.error?.message.hasPrefix("invalid question.resolve params:") == true)
        let both = store.handleResolve(params: ["id": "ask", "cancel": true, "answers": ["answers": ["q": ["x"]]]], caller: phone, nowMs: t0)
        #expect(both.error?.code == "INVALID_REQUEST")
        #expect(store.record(id: "ask")?.status == .pending)
    }

    static let invalidShapes: [([JSONValue], String)] = [
        ([question(options: [["label": "Only"]])], "question 'q' must have either no options or 2 to 4 options"),
        ([question(options: Array(repeating: ["label": "x"], count: 5))], "question 'q' must have either no options or 2 to 4 options"),
        ([question(options: [["label": "Same"], ["label": "Same"]])], "question 'q' has duplicate option labels"),
        ([question("Bad-Id")], "questionId must match ^[a-z][a-z0-9_]*$"),
        ([question(extra: ["header": "Thirteen char"])], "question 'q' header must be 1 to 12 characters"),
        ([], "questions must hold 1 to 3 questions"),
        ([question("a"), question("b"), question("c"), question("d")], "questions must hold 1 to 3 questions"),
        ([question("a"), question("a")], "questions have duplicate questionId values"),
    ]

    @Test("question.request refuses malformed question shapes", arguments: invalidShapes)
    func requestShapes(questions: [JSONValue], detail: String) {
        var store = QuestionStore(random: SeededRandom(seed: 2))
        let outcome = store.handleRequest(params: ["questions": .array(questions)], caller: runtime, nowMs: t0)
        #expect(outcome.error == ErrorShape(code: "INVALID_REQUEST", message: "invalid question.request params: \(detail)"))
        #expect(store.pending.isEmpty)
    }

    @Test("questions accept 0 or 2-4 options and up to 3 questions")
    func validShapes() {
        var store = QuestionStore(random: SeededRandom(seed: 2))
        let four: [JSONValue] = (1...4).map { ["label": .string("o\($0)")] }
        let outcome = store.handleRequest(params: ["questions": [question("a"), question("b", options: twoColours),
                                                                 question("c", options: .init(four))]],
                                          caller: runtime, nowMs: t0)
        #expect(outcome.error == nil)
    }
}
