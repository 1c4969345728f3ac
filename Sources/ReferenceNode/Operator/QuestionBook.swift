import GatewayProtocol

/// One agent question card (docs/protocol.md §7.8, §7.11).
public struct QuestionCard: Sendable, Hashable {
    /// One question of the card.
    public struct Item: Sendable, Hashable {
        /// `questionId` (`id` in the middle generation).
        public var questionId: String
        /// Option labels, in order.
        public var options: [String]
        /// Option `value`s where given (answers use `value ?? label`).
        public var optionValues: [String: String]
        /// Several values allowed.
        public var multiSelect: Bool
        /// Free text allowed besides the options.
        public var isOther: Bool
    }

    /// Where the card stands.
    public enum Status: String, Sendable, Hashable {
        /// Waiting for an answer; inputs enabled.
        case pending
        /// An answer is in flight.
        case submitting
        /// The reply to our answer was lost; locked until a reload says what happened.
        case uncertain
        /// Answered on this device.
        case answered
        /// Answered by another surface.
        case answeredElsewhere
        /// Cancelled ("Skipped").
        case cancelled
        /// Expired.
        case expired
        /// Gone from the Gateway; its outcome cannot be recovered.
        case unavailable
    }

    /// The question id.
    public var id: String
    /// The owning Gateway (URL key).
    public var gateway: String
    /// The questions (1-3).
    public var items: [Item]
    /// The deadline on the Gateway clock.
    public var expiresAtMs: Int64?
    /// The card's state.
    public var status: Status

    /// Whether inputs are enabled.
    public var acceptsAnswers: Bool { status == .pending }

    /// Reads a question record; `nil` when it has no id or no questions.
    init?(record: JSONValue, gateway: String) {
        guard let id = record["id"]?.stringValue, let questions = record["questions"]?.arrayValue, !questions.isEmpty else { return nil }
        var items: [Item] = []
        for question in questions {
            guard let questionId = question["questionId"]?.stringValue ?? question["id"]?.stringValue else { return nil }
            let options = question["options"]?.arrayValue ?? []
            var values: [String: String] = [:]
            for option in options {
                if let label = option["label"]?.stringValue, let value = option["value"]?.stringValue { values[label] = value }
            }
            items.append(Item(questionId: questionId, options: options.compactMap { $0["label"]?.stringValue },
                              optionValues: values, multiSelect: question["multiSelect"]?.boolValue ?? false,
                              isOther: question["isOther"]?.boolValue ?? false))
        }
        self.id = id
        self.gateway = gateway
        self.items = items
        expiresAtMs = record["expiresAtMs"]?.int64Value
        status = QuestionCard.status(fromRecord: record["status"]?.stringValue, ours: false) ?? .pending
    }

    static func status(fromRecord value: String?, ours: Bool) -> Status? {
        switch value {
        case "pending": .pending
        case "answered": ours ? .answered : .answeredElsewhere
        case "cancelled": .cancelled
        case "expired": .expired
        default: nil
        }
    }
}

/// What to do with an answer from the user.
enum AnswerPlan: Sendable, Hashable {
    /// Send `question.resolve` with these params.
    case send(params: JSONValue)
    /// Refuse, with the reason.
    case refuse(String)
    /// The card is unknown: fetch it (`question.get`) first.
    case fetchCard
}

/// What to do after a `question.resolve` reply.
enum AnswerFollowUp: Sendable, Hashable {
    /// Nothing.
    case done
    /// Send again (only the `retry-terminal-question` mutant).
    case retry(params: JSONValue)
    /// Reload to learn the outcome.
    case reload
}

/// The question cards of the operator session and their rules (docs/protocol.md §7.7, §7.11).
struct QuestionBook: Sendable {
    private struct Key: Hashable {
        var gateway: String
        var id: String
    }

    private var cards: [Key: QuestionCard] = [:]
    private var answeredHere: Set<Key> = []
    private(set) var currentGateway: String

    init(currentGateway: String) {
        self.currentGateway = currentGateway
    }

    /// The cards of the current Gateway, sorted by id.
    var visibleCards: [QuestionCard] { cards.values.filter { $0.gateway == currentGateway }.sorted { $0.id < $1.id } }

    /// The card `id` of the current Gateway.
    func card(_ id: String) -> QuestionCard? { cards[Key(gateway: currentGateway, id: id)] }

    /// Switches Gateways; old cards stay stored but are no longer shown or answerable.
    mutating func switchGateway(to gateway: String) { currentGateway = gateway }

    /// Adds or refreshes a card from a record; a terminal card is never replaced by a pending one.
    mutating func apply(record: JSONValue) {
        guard let incoming = QuestionCard(record: record, gateway: currentGateway) else { return }
        let key = Key(gateway: currentGateway, id: incoming.id)
        guard var existing = cards[key] else {
            cards[key] = incoming
            return
        }
        existing.items = incoming.items
        existing.expiresAtMs = incoming.expiresAtMs
        if let status = QuestionCard.status(fromRecord: record["status"]?.stringValue, ours: answeredHere.contains(key)),
           status != .pending || existing.status == .uncertain {
            existing.status = status
        }
        cards[key] = existing
    }

    /// Applies `question.requested` / `question.resolved`.
    mutating func apply(event: String, payload: JSONValue?) {
        guard let payload else { return }
        switch event {
        case GatewayEventName.questionRequested.rawValue, GatewayEventName.questionPending.rawValue:
            apply(record: payload)
        case GatewayEventName.questionResolved.rawValue, GatewayEventName.questionExpired.rawValue:
            guard let id = payload["id"]?.stringValue else { return }
            let key = Key(gateway: currentGateway, id: id)
            let status = QuestionCard.status(fromRecord: payload["status"]?.stringValue ?? "expired", ours: answeredHere.contains(key))
            guard var card = cards[key], let status, status != .pending else { return }
            card.status = status
            cards[key] = card
        default:
            break
        }
    }

    /// Applies a `question.list` reply; returns the ids of local cards that were open but are no
    /// longer listed (they need a `question.get`).
    mutating func applyList(_ payload: JSONValue) -> [String] {
        let records = payload["questions"]?.arrayValue ?? []
        var listed: Set<String> = []
        for record in records {
            if let id = record["id"]?.stringValue { listed.insert(id) }
            apply(record: record)
        }
        return cards.values
            .filter { $0.gateway == currentGateway && [.pending, .submitting, .uncertain].contains($0.status) && !listed.contains($0.id) }
            .map(\.id).sorted()
    }

    /// Applies a `question.get` reply for a card missing from the list.
    mutating func applyGet(id: String, result: Result<JSONValue, RequestFailure>) {
        let key = Key(gateway: currentGateway, id: id)
        guard var card = cards[key] else { return }
        switch result {
        case .success(let payload):
            if let record = payload["question"] { apply(record: record) }
        case .failure(.gateway(let error)) where error.details?["reason"]?.stringValue == "QUESTION_NOT_FOUND":
            card.status = .unavailable
            cards[key] = card
        case .failure:
            break
        }
    }

    /// Shapes and checks an answer (B.2, B.4): a string or an array for the first question, or
    /// an object keyed by `questionId` (values: a string, an array, or `{"other": text}`).
    mutating func prepareAnswer(id: String, answer: JSONValue, gatewayNowMs: Int64,
                                configuration: ReferenceConfiguration) -> AnswerPlan {
        let key = Key(gateway: currentGateway, id: id)
        guard var card = cards[key] else { return .fetchCard }
        let expired = card.status == .expired || (card.status == .pending && card.expiresAtMs.map { gatewayNowMs >= $0 } == true)
        if expired {
            if !configuration.has(.answerExpiredQuestion) {
                card.status = .expired
                cards[key] = card
                return .refuse("question expired")
            }
        } else if card.status == .cancelled {
            if !configuration.has(.answerCancelledQuestion) { return .refuse("question was cancelled") }
        } else if card.status != .pending {
            return .refuse("question is \(card.status.rawValue)")
        }
        let values: [String: [String]]
        switch Self.shape(answer, items: card.items, configuration: configuration) {
        case .failure(let reason): return .refuse(reason.description)
        case .success(let shaped): values = shaped
        }
        card.status = .submitting
        cards[key] = card
        let answers = JSONValue.object(values.mapValues { .array($0.map(JSONValue.string)) })
        return .send(params: ["id": .string(id), "answers": ["answers": answers]])
    }

    /// Maps the user's answer onto the questions and validates it.
    static func shape(_ answer: JSONValue, items: [QuestionCard.Item],
                      configuration: ReferenceConfiguration) -> Result<[String: [String]], QuestionAnswerError> {
        guard let first = items.first else { return .failure(QuestionAnswerError("question has no items")) }
        var raw: [String: [String]] = [:]
        func values(_ value: JSONValue) -> [String]? {
            if let text = value.stringValue { return [text] }
            if let list = value.arrayValue { return list.compactMap(\.stringValue) }
            if let other = value["other"]?.stringValue ?? value["text"]?.stringValue { return [other] }
            return nil
        }
        let ids = Set(items.map(\.questionId))
        if let object = answer.objectValue, let nested = object["answers"] {
            return shape(nested, items: items, configuration: configuration)
        } else if let object = answer.objectValue, !object.isEmpty, Set(object.keys).isSubset(of: ids) {
            for (questionId, value) in object {
                guard let list = values(value) else { return .failure(QuestionAnswerError("answer for \(questionId) is not text")) }
                raw[questionId] = list
            }
        } else if let list = values(answer) {
            raw[first.questionId] = list
        } else {
            return .failure(QuestionAnswerError("answer must be text, a list, or an object keyed by questionId"))
        }
        var result: [String: [String]] = [:]
        for item in items {
            let given = (raw[item.questionId] ?? []).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            guard !given.isEmpty else { return .failure(QuestionAnswerError("question '\(item.questionId)' requires an answer")) }
            if !item.multiSelect, given.count > 1, !configuration.has(.singleSelectMultiAnswer) {
                return .failure(QuestionAnswerError("question '\(item.questionId)' takes a single answer"))
            }
            var canonical: [String] = []
            for value in given {
                if item.options.contains(value) {
                    canonical.append(item.optionValues[value] ?? value)
                } else if item.options.isEmpty || item.isOther {
                    canonical.append(value)
                } else {
                    return .failure(QuestionAnswerError("'\(value)' is not an option of '\(item.questionId)'"))
                }
            }
            result[item.questionId] = canonical
        }
        return .success(result)
    }

    /// Applies the reply to our answer (B.3).
    mutating func completeAnswer(id: String, params: JSONValue, result: Result<JSONValue, RequestFailure>,
                                 configuration: ReferenceConfiguration) -> AnswerFollowUp {
        let key = Key(gateway: currentGateway, id: id)
        guard var card = cards[key] else { return .done }
        defer { cards[key] = card }
        switch result {
        case .success:
            answeredHere.insert(key)
            card.status = .answered
            return .done
        case .failure(let failure):
            if failure.isAmbiguous {
                card.status = .uncertain
                return .reload
            }
            guard case .gateway(let error) = failure else {
                card.status = .pending
                return .done
            }
            switch error.details?["reason"]?.stringValue {
            case "QUESTION_ALREADY_TERMINAL", "QUESTION_ALREADY_RESOLVED":
                if configuration.has(.retryTerminalQuestion) {
                    card.status = .pending
                    return .retry(params: params)
                }
                if error.message.contains("expired") {
                    card.status = .expired
                } else if error.message.contains("cancelled") {
                    card.status = .cancelled
                } else {
                    card.status = .answeredElsewhere
                }
                return .done
            case "QUESTION_NOT_FOUND":
                card.status = .unavailable
                return .done
            default:
                // Invalid answers and other errors leave the question open so the user can retry.
                card.status = .pending
                return .done
            }
        }
    }
}

/// Why an answer was refused before sending.
struct QuestionAnswerError: Error, Sendable, Hashable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
