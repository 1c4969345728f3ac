import Foundation
import GatewayProtocol

/// One choice of a question (`{label, description?}`; the manager also knows an optional `value`).
public struct QuestionOption: Sendable, Hashable {
    /// The label shown and usually sent back.
    public var label: String
    /// A longer explanation.
    public var description: String?
    /// The canonical answer value, when it differs from the label.
    public var value: String?

    /// Creates an option.
    public init(label: String, description: String? = nil, value: String? = nil) {
        self.label = label
        self.description = description
        self.value = value
    }

    /// What an answer naming this option is stored as (`value ?? label`).
    public var canonicalValue: String { value ?? label }

    var json: JSONValue {
        var object: [String: JSONValue] = ["label": .string(label)]
        if let description { object["description"] = .string(description) }
        if let value { object["value"] = .string(value) }
        return .object(object)
    }
}

/// One question of a `question.request` (docs/protocol.md §7.8, newest generation).
public struct QuestionItem: Sendable, Hashable {
    /// `^[a-z][a-z0-9_]*$`.
    public var questionId: String
    /// A short header, at most 12 characters.
    public var header: String
    /// The question text.
    public var question: String
    /// A link to show (2026.8).
    public var url: String?
    /// No options (free text) or 2-4 options.
    public var options: [QuestionOption]
    /// Several options may be chosen.
    public var multiSelect: Bool
    /// Free text is allowed besides the options.
    public var isOther: Bool
    /// The answer is a secret (kept byte-exact, never trimmed).
    public var isSecret: Bool
    /// The question may be left unanswered (⚠️ UNCONFIRMED in a schema; read by the manager).
    public var allowEmpty: Bool
    /// `presentation: "form"` (⚠️ UNCONFIRMED in a schema): answers kept byte-exact.
    public var isForm: Bool
    /// Every member as the requester sent it, echoed in records and events.
    public var wire: [String: JSONValue]

    /// Creates a question; `wire` is built from the typed fields.
    public init(questionId: String, header: String, question: String, options: [QuestionOption] = [],
                multiSelect: Bool = false, isOther: Bool = false, isSecret: Bool = false, allowEmpty: Bool = false,
                url: String? = nil) {
        self.questionId = questionId
        self.header = header
        self.question = question
        self.url = url
        self.options = options
        self.multiSelect = multiSelect
        self.isOther = isOther
        self.isSecret = isSecret
        self.allowEmpty = allowEmpty
        self.isForm = false
        var wire: [String: JSONValue] = [
            "questionId": .string(questionId), "header": .string(header), "question": .string(question),
            "options": .array(options.map(\.json)), "multiSelect": .bool(multiSelect), "isOther": .bool(isOther),
        ]
        if isSecret { wire["isSecret"] = true }
        if allowEmpty { wire["allowEmpty"] = true }
        if let url { wire["url"] = .string(url) }
        self.wire = wire
    }

    /// Parses and validates one question object of `question.request`.
    init(parsing value: JSONValue) throws(ParamError) {
        guard let object = value.objectValue else { throw ParamError(detail: "each question must be an object") }
        func text(_ key: String, required: Bool) throws(ParamError) -> String? {
            guard let member = object[key], member != .null else {
                if required { throw ParamError(detail: "question \(key) is required") }
                return nil
            }
            guard let string = member.stringValue else { throw ParamError(detail: "question \(key) must be a string") }
            return string
        }
        func flag(_ key: String) throws(ParamError) -> Bool {
            guard let member = object[key], member != .null else { return false }
            guard let bool = member.boolValue else { throw ParamError(detail: "question \(key) must be a boolean") }
            return bool
        }
        guard let questionId = try text("questionId", required: true), Self.isValidQuestionId(questionId) else {
            throw ParamError(detail: "questionId must match ^[a-z][a-z0-9_]*$")
        }
        guard let header = try text("header", required: true), !header.isEmpty, header.count <= 12 else {
            throw ParamError(detail: "question '\(questionId)' header must be 1 to 12 characters")
        }
        guard let question = try text("question", required: true), !question.isEmpty else {
            throw ParamError(detail: "question '\(questionId)' question must be a non-empty string")
        }
        var options: [QuestionOption] = []
        if let rawOptions = object["options"], rawOptions != .null {
            guard let items = rawOptions.arrayValue else { throw ParamError(detail: "question '\(questionId)' options must be an array") }
            for item in items {
                guard let option = item.objectValue, let label = option["label"]?.stringValue, !label.isEmpty else {
                    throw ParamError(detail: "question '\(questionId)' options need a non-empty label")
                }
                options.append(QuestionOption(label: label, description: option["description"]?.stringValue,
                                              value: option["value"]?.stringValue))
            }
        }
        guard options.isEmpty || (2...4).contains(options.count) else {
            throw ParamError(detail: "question '\(questionId)' must have either no options or 2 to 4 options")
        }
        guard Set(options.map(\.label)).count == options.count else {
            throw ParamError(detail: "question '\(questionId)' has duplicate option labels")
        }
        self.questionId = questionId
        self.header = header
        self.question = question
        self.url = try text("url", required: false)
        self.options = options
        self.multiSelect = try flag("multiSelect")
        self.isOther = try flag("isOther")
        self.isSecret = try flag("isSecret")
        self.allowEmpty = try flag("allowEmpty")
        self.isForm = object["presentation"]?.stringValue == "form"
        self.wire = object
    }

    /// The question id grammar `^[a-z][a-z0-9_]*$`.
    public static func isValidQuestionId(_ id: String) -> Bool {
        guard let first = id.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// Answers are kept byte-exact for secret and form questions, otherwise trimmed.
    var preservesAnswerBytes: Bool { isSecret || isForm }

    /// The stored form of one answer value (upstream `canonicalizeQuestionAnswer`): an exact
    /// option `value` stays; a label (trimmed unless byte-exact) becomes the option's
    /// `value ?? label`; anything else is kept (trimmed unless byte-exact).
    func canonicalize(_ answer: String) -> String {
        if options.contains(where: { $0.value != nil && $0.value == answer }) { return answer }
        let candidate = preservesAnswerBytes ? answer : answer.trimmingCharacters(in: .whitespacesAndNewlines)
        let matches = options.filter {
            (preservesAnswerBytes ? $0.label : $0.label.trimmingCharacters(in: .whitespacesAndNewlines)) == candidate
        }
        return matches.count == 1 ? matches[0].canonicalValue : candidate
    }
}

/// The lifecycle status of a question.
public enum QuestionStatus: String, Sendable, Hashable, CaseIterable {
    /// Awaiting an answer.
    case pending
    /// Answered.
    case answered
    /// Cancelled (`question.resolve {cancel:true}`, or the requesting run ended).
    case cancelled
    /// The deadline passed.
    case expired

    /// Whether the record is final.
    public var isTerminal: Bool { self != .pending }
}

/// One agent question (`ask_user`), as `question.get` and `question.requested` carry it.
public struct QuestionRecord: Sendable, Hashable {
    /// The id.
    public let id: String
    /// 1-3 questions.
    public var questions: [QuestionItem]
    /// The asking agent.
    public var agentId: String?
    /// The asking session (scopes the events).
    public var sessionKey: String?
    /// The asking run.
    public var runId: String?
    /// Creation time (Gateway clock).
    public var createdAtMs: Int64
    /// The deadline; a read at or after it expires the question.
    public var expiresAtMs: Int64
    /// The status.
    public var status: QuestionStatus
    /// The canonical answers by question id (answered only).
    public var answers: [String: [String]]?
    /// Who answered or cancelled.
    public var resolvedBy: String?
    /// When it became terminal; starts the 15 s grace (not on the wire).
    public var terminalAtMs: Int64?

    /// Creates a pending record.
    public init(id: String, questions: [QuestionItem], agentId: String? = nil, sessionKey: String? = nil,
                runId: String? = nil, createdAtMs: Int64, expiresAtMs: Int64) {
        self.id = id
        self.questions = questions
        self.agentId = agentId
        self.sessionKey = sessionKey
        self.runId = runId
        self.createdAtMs = createdAtMs
        self.expiresAtMs = expiresAtMs
        self.status = .pending
    }

    /// `{answers: {<questionId>: [values]}}`: the newest answer shape.
    public static func answersJSON(_ answers: [String: [String]]) -> JSONValue {
        ["answers": .object(answers.mapValues { .array($0.map(JSONValue.string)) })]
    }

    /// The full record (`question.requested`, `question.get`).
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(id),
            "questions": .array(questions.map { .object($0.wire) }),
            "createdAtMs": .int(createdAtMs),
            "expiresAtMs": .int(expiresAtMs),
            "status": .string(status.rawValue),
        ]
        if let agentId { object["agentId"] = .string(agentId) }
        if let sessionKey { object["sessionKey"] = .string(sessionKey) }
        if let runId { object["runId"] = .string(runId) }
        if status == .answered, let answers { object["answers"] = Self.answersJSON(answers) }
        if let resolvedBy { object["resolvedBy"] = .string(resolvedBy) }
        return .object(object)
    }

    /// `question.resolved`: `{id, status:"answered", answers}` | `{id, status:"cancelled"}` |
    /// `{id, status:"expired"}`.
    public var resolvedEventPayload: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "status": .string(status.rawValue)]
        if status == .answered { object["answers"] = Self.answersJSON(answers ?? [:]) }
        return .object(object)
    }

    /// The `question.resolve` reply and the terminal `question.waitAnswer` result:
    /// `{status, answers?}`, plus `resolutionId` only when the waiter asked for it.
    public func waitAnswerResult(resolutionId: String? = nil) -> JSONValue {
        guard status == .answered else { return ["status": .string(status.rawValue)] }
        var object: [String: JSONValue] = ["status": "answered", "answers": Self.answersJSON(answers ?? [:])]
        if let resolutionId { object["resolutionId"] = .string(resolutionId) }
        return .object(object)
    }
}

/// The question errors (`INVALID_REQUEST` with `details.reason`, from `QuestionManagerError`;
/// docs/protocol.md §7.9), in one place.
public enum QuestionErrors {
    private static func invalid(_ message: String, reason: String? = nil) -> ErrorShape {
        ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message,
                   details: reason.map { ["reason": .string($0)] })
    }

    /// `question '<id>' was not found` (`QUESTION_NOT_FOUND`).
    public static func notFound(_ id: String) -> ErrorShape {
        invalid("question '\(id)' was not found", reason: "QUESTION_NOT_FOUND")
    }

    /// `question '<id>' is already <status>` (`QUESTION_ALREADY_TERMINAL`).
    public static func alreadyTerminal(_ id: String, status: QuestionStatus) -> ErrorShape {
        invalid("question '\(id)' is already \(status.rawValue)", reason: "QUESTION_ALREADY_TERMINAL")
    }

    /// `question '<questionId>' <problem>` (`QUESTION_INVALID_ANSWER`); the question stays pending.
    public static func invalidAnswer(_ questionId: String, _ problem: String) -> ErrorShape {
        invalid("question '\(questionId)' \(problem)", reason: "QUESTION_INVALID_ANSWER")
    }

    /// `question '<id>' already exists` (`QUESTION_ID_IN_USE`).
    public static func idInUse(_ id: String) -> ErrorShape {
        invalid("question '\(id)' already exists", reason: "QUESTION_ID_IN_USE")
    }

    /// The asking run has ended (`QUESTION_REQUESTER_INACTIVE`).
    public static let requesterInactive = invalid(
        "the agent run that requested this question is no longer active", reason: "QUESTION_REQUESTER_INACTIVE")

    /// `invalid <method> params: <detail>`.
    public static func invalidParams(_ method: String, _ detail: String) -> ErrorShape {
        invalid("invalid \(method) params: \(detail)")
    }
}
