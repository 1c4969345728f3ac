import GatewayProtocol

/// A new question as the scripting API (or `question.request`) describes it.
public struct QuestionDraft: Sendable, Hashable {
    /// An explicit id; a random UUID when `nil`.
    public var id: String?
    /// 1-3 questions.
    public var questions: [QuestionItem]
    /// The asking agent.
    public var agentId: String?
    /// The asking session.
    public var sessionKey: String?
    /// The asking run.
    public var runId: String?
    /// Lifetime; `nil` uses the 15-minute default.
    public var expiresInMs: Int64?

    /// Creates a draft.
    public init(id: String? = nil, questions: [QuestionItem], agentId: String? = "main", sessionKey: String? = nil,
                runId: String? = nil, expiresInMs: Int64? = nil) {
        self.id = id
        self.questions = questions
        self.agentId = agentId
        self.sessionKey = sessionKey
        self.runId = runId
        self.expiresInMs = expiresInMs
    }
}

/// Every agent question of the fake Gateway: process-local, like upstream's `QuestionManager`
/// (docs/protocol.md §7.7).
///
/// Rules: any read, wait or resolve first expires pending questions whose deadline has come
/// (`expiresAtMs <= now`) and publishes `question.resolved {status:"expired"}`; terminal records
/// stay readable for 15 s (`QUESTION_RESOLVED_ENTRY_GRACE_MS`) and are then forgotten
/// (`QUESTION_NOT_FOUND`); the first answer wins, later ones get `QUESTION_ALREADY_TERMINAL`; an
/// invalid answer leaves the question pending.
public struct QuestionStore: Sendable {
    /// `DEFAULT_QUESTION_TIMEOUT_MS`: 15 minutes.
    public static let defaultTimeoutMs: Int64 = 15 * 60 * 1000
    /// `QUESTION_RESOLVED_ENTRY_GRACE_MS`: 15 seconds.
    public static let resolvedGraceMs: Int64 = 15_000
    /// The longest timer JavaScript can arm; longer timeouts are clamped to it.
    public static let maximumTimeoutMs: Int64 = 2_147_483_647

    /// Records by exact id (terminal ones during their grace).
    private(set) var records: [ExactID: QuestionRecord] = [:]
    /// Every resolve attempt, in order.
    public private(set) var resolveAttempts: [ResolveAttempt] = []
    /// Runs that ended; their new questions are refused and their pending ones were cancelled.
    public private(set) var endedRunIds: Set<String> = []
    /// The `resolutionId` of each answered question, for late `includeResolutionId` waiters;
    /// never part of the record or its events.
    private var resolutionIds: [ExactID: String] = [:]
    private var random: SeededRandom

    /// Creates an empty store.
    public init(random: SeededRandom = SeededRandom(seed: 0)) {
        self.random = random
    }

    /// The record with this id (terminal records included during their grace).
    public func record(id: String) -> QuestionRecord? { records[ExactID(id)] }

    /// Pending questions, oldest first (ties by id), as `question.list` orders them.
    public var pending: [QuestionRecord] {
        records.values.filter { $0.status == .pending }
            .sorted { ($0.createdAtMs, $0.id) < ($1.createdAtMs, $1.id) }
    }

    /// The earliest instant at which `expire(nowMs:)` has work.
    public var nextDeadlineMs: Int64? {
        // Read in place (the Gateway's timer asks after every frame).
        records.values.lazy.compactMap { record in
            record.status == .pending ? record.expiresAtMs : record.terminalAtMs.map { $0 + Self.resolvedGraceMs }
        }.min()
    }

    // MARK: - Lifecycle

    /// Opens a question as the agent runtime would, and announces it (`question.requested`).
    /// Fails with `QUESTION_ID_IN_USE` for an id still known (pending or in its grace),
    /// `QUESTION_REQUESTER_INACTIVE` for an ended run, or invalid params for no or more than 3
    /// questions or duplicate question ids.
    public mutating func open(_ draft: QuestionDraft, nowMs: Int64) -> OperatorAttempt<QuestionRecord> {
        var effects = expire(nowMs: nowMs)
        func fail(_ error: ErrorShape) -> OperatorAttempt<QuestionRecord> {
            OperatorResult(.failure(OperatorError(error)), effects: effects)
        }
        guard (1...3).contains(draft.questions.count) else {
            return fail(QuestionErrors.invalidParams(GatewayMethod.questionRequest.rawValue, "questions must hold 1 to 3 questions"))
        }
        guard Set(draft.questions.map(\.questionId)).count == draft.questions.count else {
            return fail(QuestionErrors.invalidParams(GatewayMethod.questionRequest.rawValue, "questions have duplicate questionId values"))
        }
        if let runId = draft.runId, endedRunIds.contains(runId) { return fail(QuestionErrors.requesterInactive) }
        let id = draft.id ?? random.uuidString()
        if records[ExactID(id)] != nil { return fail(QuestionErrors.idInUse(id)) }
        let lifetime = min(max(1, draft.expiresInMs ?? Self.defaultTimeoutMs), Self.maximumTimeoutMs)
        let record = QuestionRecord(id: id, questions: draft.questions, agentId: draft.agentId, sessionKey: draft.sessionKey,
                                    runId: draft.runId, createdAtMs: nowMs, expiresAtMs: nowMs + lifetime)
        records[ExactID(id)] = record
        effects.append(.publish(OperatorEvent(name: GatewayEventName.questionRequested.rawValue, payload: record.json, audience: audience(of: record))))
        effects.append(.observed(OperatorRecordEvent(kind: .question, id: id, action: .requested, status: .question(.pending))))
        return OperatorResult(.success(record), effects: effects)
    }

    /// Expires due questions and forgets terminal records whose grace has ended.
    public mutating func expire(nowMs: Int64) -> [OperatorEffect] {
        var effects: [OperatorEffect] = []
        for record in pending where nowMs >= record.expiresAtMs {
            effects += finish(record.id, status: .expired, answers: nil, resolvedBy: nil, resolutionId: nil, nowMs: nowMs)
        }
        for record in records.values where record.status.isTerminal {
            if let terminalAtMs = record.terminalAtMs, nowMs >= terminalAtMs + Self.resolvedGraceMs {
                records[ExactID(record.id)] = nil
                resolutionIds[ExactID(record.id)] = nil
            }
        }
        return effects
    }

    /// Expires a pending question now, regardless of its deadline (scripting). Fails with
    /// `QUESTION_NOT_FOUND` / `QUESTION_ALREADY_TERMINAL`.
    public mutating func expireNow(id: String, nowMs: Int64) -> OperatorAttempt<QuestionRecord> {
        var effects = expire(nowMs: nowMs)
        switch requirePending(id) {
        case .failure(let error):
            return OperatorResult(.failure(error), effects: effects)
        case .success(let record):
            effects += finish(id, status: .expired, answers: nil, resolvedBy: nil, resolutionId: nil, nowMs: nowMs)
            return OperatorResult(.success(records[ExactID(id)] ?? record), effects: effects)
        }
    }

    /// The requesting run ended (abort, release, replacement): its pending questions are cancelled
    /// (`resolvedBy: "requester-inactive"`) and its new questions are refused.
    public mutating func endRun(_ runId: String, nowMs: Int64) -> [OperatorEffect] {
        endedRunIds.insert(runId)
        var effects = expire(nowMs: nowMs)
        for record in pending where record.runId == runId {
            effects += finish(record.id, status: .cancelled, answers: nil, resolvedBy: "requester-inactive",
                              resolutionId: nil, nowMs: nowMs)
        }
        return effects
    }

    /// Answers a question from a surface (the same rules as `question.resolve`).
    /// - Parameter answers: values by question id; labels are canonicalised to option values.
    /// - Returns: the answered record, or the `QUESTION_*` error the wire would get.
    public mutating func answer(id: String, answers: [String: [String]], as caller: OperatorCaller = .surface("script"),
                                resolutionId: String? = nil, nowMs: Int64) -> OperatorAttempt<QuestionRecord> {
        resolve(id: id, action: .answer(answers), resolvedBy: caller.resolvedByLabel, resolutionId: resolutionId,
                caller: caller, channel: .script, nowMs: nowMs)
    }

    /// Cancels (skips) a question from a surface, as `question.resolve {cancel:true}`.
    /// - Returns: the cancelled record, or the `QUESTION_*` error the wire would get.
    public mutating func cancel(id: String, as caller: OperatorCaller = .surface("script"),
                                nowMs: Int64) -> OperatorAttempt<QuestionRecord> {
        resolve(id: id, action: .cancel, resolvedBy: caller.resolvedByLabel, resolutionId: nil,
                caller: caller, channel: .script, nowMs: nowMs)
    }

    // MARK: - Wire methods

    /// `question.request {id?, questions, agentId?, sessionKey?, runId?, timeoutMs?}` →
    /// `{id, expiresAtMs}`.
    public mutating func handleRequest(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let draft: QuestionDraft
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            guard let items = reader.object["questions"]?.arrayValue else { throw ParamError(detail: "questions must be an array") }
            var questions: [QuestionItem] = []
            for item in items { questions.append(try QuestionItem(parsing: item)) }
            draft = QuestionDraft(id: try reader.string("id"), questions: questions, agentId: try reader.string("agentId"),
                                  sessionKey: try reader.string("sessionKey"), runId: try reader.string("runId"),
                                  expiresInMs: try reader.int("timeoutMs", in: 1...Int64.max / 4))
        } catch {
            return OperatorOutcome(.failure(QuestionErrors.invalidParams(GatewayMethod.questionRequest.rawValue, error.detail)))
        }
        let opened = open(draft, nowMs: nowMs)
        switch opened.value {
        case .failure(let error):
            return OperatorOutcome(.failure(error.shape), effects: opened.effects)
        case .success(let record):
            return OperatorOutcome(.success(["id": .string(record.id), "expiresAtMs": .int(record.expiresAtMs)]),
                                   effects: opened.effects)
        }
    }

    /// `question.waitAnswer {id, timeoutMs?, includeResolutionId?}` → the terminal result, or the
    /// request stays open until the question ends or `timeoutMs` passes (`{status:"pending"}`).
    public mutating func handleWaitAnswer(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let id: String
        let timeoutMs: Int64?
        let includeResolutionId: Bool
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            guard let value = try reader.string("id", required: true) else { throw ParamError(detail: "id is required") }
            id = value
            timeoutMs = try reader.int("timeoutMs", in: 0...Int64.max / 4)
            includeResolutionId = try reader.bool("includeResolutionId") ?? false
        } catch {
            return OperatorOutcome(.failure(QuestionErrors.invalidParams(GatewayMethod.questionWaitAnswer.rawValue, error.detail)))
        }
        let effects = expire(nowMs: nowMs)
        guard let record = records[ExactID(id)] else { return OperatorOutcome(.failure(QuestionErrors.notFound(id)), effects: effects) }
        if record.status.isTerminal {
            let result = record.waitAnswerResult(resolutionId: includeResolutionId ? resolutionIds[ExactID(id)] : nil)
            return OperatorOutcome(.success(result), effects: effects)
        }
        let waiter = OperatorWaiter(
            subject: .question(id: id), purpose: .questionWaitAnswer(includeResolutionId: includeResolutionId),
            deadlineMs: timeoutMs.map { nowMs + max(1, $0) }, timeoutReply: ["status": "pending"])
        return OperatorOutcome(.deferred(waiter), effects: effects)
    }

    /// `question.resolve {id, answers:{answers:{qid:[…]}}, resolvedBy?, resolutionId?}` →
    /// `{status:"answered", answers}`, or `{id, cancel:true, resolvedBy?}` →
    /// `{status:"cancelled"}`.
    public mutating func handleResolve(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let id: String
        let action: ResolveAction
        let resolvedBy: String?
        let resolutionId: String?
        do throws(ParamError) {
            let reader = try OperatorParams(params)
            guard let value = try reader.string("id", required: true) else { throw ParamError(detail: "id is required") }
            id = value
            resolvedBy = try reader.string("resolvedBy")
            resolutionId = try reader.string("resolutionId")
            let cancel = try reader.bool("cancel") ?? false
            switch (cancel, reader.has("answers")) {
            case (true, false): action = .cancel
            case (false, true): action = .answer(try Self.parseAnswers(reader.object["answers"]))
            case (true, true): throw ParamError(detail: "answers and cancel are mutually exclusive")
            case (false, false): throw ParamError(detail: "answers or cancel:true is required")
            }
        } catch {
            return OperatorOutcome(.failure(QuestionErrors.invalidParams(GatewayMethod.questionResolve.rawValue, error.detail)))
        }
        let resolved = resolve(id: id, action: action, resolvedBy: resolvedBy ?? caller.resolvedByLabel,
                               resolutionId: resolutionId, caller: caller, channel: .question, nowMs: nowMs)
        switch resolved.value {
        case .failure(let error):
            return OperatorOutcome(.failure(error.shape), effects: resolved.effects)
        case .success(let record):
            return OperatorOutcome(.success(record.waitAnswerResult()), effects: resolved.effects)
        }
    }

    /// `question.get {id}` → `{question: <record>}` (pending, or terminal during its grace).
    public mutating func handleGet(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        let id: String
        do throws(ParamError) {
            guard let value = try OperatorParams(params).string("id", required: true) else { throw ParamError(detail: "id is required") }
            id = value
        } catch {
            return OperatorOutcome(.failure(QuestionErrors.invalidParams(GatewayMethod.questionGet.rawValue, error.detail)))
        }
        let effects = expire(nowMs: nowMs)
        guard let record = records[ExactID(id)] else { return OperatorOutcome(.failure(QuestionErrors.notFound(id)), effects: effects) }
        return OperatorOutcome(.success(["question": record.json]), effects: effects)
    }

    /// `question.list {}` → `{questions:[pending…]}`, oldest first.
    public mutating func handleList(params: JSONValue?, caller: OperatorCaller, nowMs: Int64) -> OperatorOutcome {
        do throws(ParamError) {
            _ = try OperatorParams(params)
        } catch {
            return OperatorOutcome(.failure(QuestionErrors.invalidParams(GatewayMethod.questionList.rawValue, error.detail)))
        }
        let effects = expire(nowMs: nowMs)
        return OperatorOutcome(.success(["questions": .array(pending.map(\.json))]), effects: effects)
    }

    // MARK: - Rules

    /// What a resolve asks for.
    enum ResolveAction: Sendable {
        case answer([String: [String]])
        case cancel

        var summary: String {
            switch self {
            case .cancel: return "cancel"
            case .answer(let answers): return "answer " + QuestionRecord.answersJSON(answers).jsonString
            }
        }
    }

    /// The answers param in the newest shape: `{answers: {<questionId>: [string, …]}}`.
    static func parseAnswers(_ value: JSONValue?) throws(ParamError) -> [String: [String]] {
        guard let inner = value?["answers"]?.objectValue else {
            throw ParamError(detail: "answers must be {answers: {<questionId>: [string]}}")
        }
        var result: [String: [String]] = [:]
        for (questionId, values) in inner {
            guard let items = values.arrayValue else { throw ParamError(detail: "answers.answers.\(questionId) must be an array of strings") }
            var strings: [String] = []
            for item in items {
                guard let text = item.stringValue else { throw ParamError(detail: "answers.answers.\(questionId) must be an array of strings") }
                strings.append(text)
            }
            result[questionId] = strings
        }
        return result
    }

    private func requirePending(_ id: String) -> Result<QuestionRecord, OperatorError> {
        guard let record = records[ExactID(id)] else { return .failure(OperatorError(QuestionErrors.notFound(id))) }
        guard record.status == .pending else {
            return .failure(OperatorError(QuestionErrors.alreadyTerminal(id, status: record.status)))
        }
        return .success(record)
    }

    /// The one resolve path (wire and scripting): reconcile expiry, require a pending record,
    /// validate the answers, then finish. Every attempt is logged and observed.
    private mutating func resolve(id: String, action: ResolveAction, resolvedBy: String?, resolutionId: String?,
                                  caller: OperatorCaller, channel: ResolveAttempt.Channel,
                                  nowMs: Int64) -> OperatorAttempt<QuestionRecord> {
        var effects = expire(nowMs: nowMs)
        func logged(_ result: ResolveAttempt.Result) {
            let attempt = ResolveAttempt(recordKind: .question, requestedId: id, recordId: records[ExactID(id)]?.id,
                                         surface: caller.surface, channel: channel, requested: action.summary,
                                         result: result, atMs: nowMs)
            resolveAttempts.append(attempt)
            effects.append(.observed(attempt.recordEvent(status: records[ExactID(id)].map { .question($0.status) } ?? .unknown)))
        }
        let record: QuestionRecord
        switch requirePending(id) {
        case .failure(let error):
            if let existing = records[ExactID(id)] {
                logged(.lost(winnerStatus: existing.status.rawValue))
            } else {
                logged(.rejected(code: error.shape.code, reason: "QUESTION_NOT_FOUND"))
            }
            return OperatorResult(.failure(error), effects: effects)
        case .success(let found):
            record = found
        }
        switch action {
        case .cancel:
            effects += finish(id, status: .cancelled, answers: nil, resolvedBy: resolvedBy, resolutionId: nil, nowMs: nowMs)
        case .answer(let answers):
            switch Self.validate(answers, for: record.questions) {
            case .failure(let error):
                logged(.rejected(code: error.shape.code, reason: "QUESTION_INVALID_ANSWER"))
                return OperatorResult(.failure(error), effects: effects)
            case .success(let canonical):
                effects += finish(id, status: .answered, answers: canonical, resolvedBy: resolvedBy,
                                  resolutionId: resolutionId, nowMs: nowMs)
            }
        }
        logged(.applied)
        return OperatorResult(.success(records[ExactID(id)] ?? record), effects: effects)
    }

    /// Upstream `validateAnswers` (B.2): unknown question ids are refused; each question needs at
    /// least one value unless `allowEmpty`; no blank values; single-select takes one value; values
    /// must name an option unless `isOther` or there are no options; labels become
    /// `value ?? label`.
    static func validate(_ answers: [String: [String]], for questions: [QuestionItem]) -> Result<[String: [String]], OperatorError> {
        let known = Set(questions.map(\.questionId))
        if let unknown = answers.keys.sorted().first(where: { !known.contains($0) }) {
            return .failure(OperatorError(QuestionErrors.invalidAnswer(unknown, "is not part of this request")))
        }
        var canonical: [String: [String]] = [:]
        for question in questions {
            let values = answers[question.questionId] ?? []
            if values.isEmpty {
                guard question.allowEmpty else { return .failure(OperatorError(QuestionErrors.invalidAnswer(question.questionId, "requires an answer"))) }
                canonical[question.questionId] = []
                continue
            }
            let hasBlank = values.contains {
                question.preservesAnswerBytes ? $0.isEmpty : $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            }
            if hasBlank { return .failure(OperatorError(QuestionErrors.invalidAnswer(question.questionId, "contains an empty answer"))) }
            if !question.multiSelect && values.count > 1 {
                return .failure(OperatorError(QuestionErrors.invalidAnswer(question.questionId, "does not allow multiple answers")))
            }
            let stored = values.map(question.canonicalize)
            let optionValues = Set(question.options.map(\.canonicalValue))
            if !question.options.isEmpty && !question.isOther && stored.contains(where: { !optionValues.contains($0) }) {
                return .failure(OperatorError(QuestionErrors.invalidAnswer(question.questionId, "contains an unknown option")))
            }
            canonical[question.questionId] = stored
        }
        return .success(canonical)
    }

    /// Moves a pending question to a terminal state and announces it.
    private mutating func finish(_ id: String, status: QuestionStatus, answers: [String: [String]]?, resolvedBy: String?,
                                 resolutionId: String?, nowMs: Int64) -> [OperatorEffect] {
        guard var record = records[ExactID(id)], record.status == .pending else { return [] }
        record.status = status
        record.answers = status == .answered ? answers : nil
        if let resolvedBy { record.resolvedBy = resolvedBy }
        record.terminalAtMs = nowMs
        records[ExactID(id)] = record
        if let resolutionId { resolutionIds[ExactID(id)] = resolutionId }
        let answerText = status == .answered ? QuestionRecord.answersJSON(answers ?? [:]).jsonString : nil
        return [
            .publish(OperatorEvent(name: GatewayEventName.questionResolved.rawValue, payload: record.resolvedEventPayload, audience: audience(of: record))),
            .settled(.question(record, resolutionId: resolutionId)),
            .observed(OperatorRecordEvent(kind: .question, id: id, action: .resolved, status: .question(status),
                                          decision: answerText, surface: resolvedBy)),
        ]
    }

    private func audience(of record: QuestionRecord) -> OperatorEvent.Audience {
        record.sessionKey.map { .sessionOrBroadcast(sessionKey: $0) } ?? .broadcast
    }
}
