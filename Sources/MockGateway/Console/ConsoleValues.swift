import ArgumentParsing
import Foundation
import GatewayProtocol

// The typed values of the console's arguments and options. Each parses with the option
// parser's `OptionValue` rules; its error says what is expected.

/// A record named on the console: by id, or `latest`.
public enum ConsoleReference: OptionValue, Hashable {
    /// The most recent one of its kind (see each command).
    case latest
    /// An exact id (or a unique prefix of one).
    case id(String)

    /// `id|latest`.
    public static let placeholder = "id|latest"

    /// `latest` or the id as typed.
    public init(option text: String) { self = text == "latest" ? .latest : .id(text) }
}

/// The target of `event`: a connection, or `all`.
struct ConsoleEventTarget: OptionValue, Hashable {
    static let placeholder = "connectionId|latest|all"
    /// `nil` for `all`.
    let connection: ConsoleReference?

    init(option text: String) { connection = text == "all" ? nil : ConsoleReference(option: text) }
}

/// The largest duration the console accepts (about 31 years), so that milliseconds fit in 64 bits.
let consoleMaximumSeconds: Double = 1_000_000_000

/// `text` as a finite number of seconds up to ``consoleMaximumSeconds`` (above 0, or from 0 when
/// `allowingZero`), or the error that says what was `expected`.
private func consoleSeconds(_ text: String, allowingZero: Bool, expected: String) throws(OptionValueError) -> Double {
    guard let value = Double(text), value.isFinite, value <= consoleMaximumSeconds,
          allowingZero ? value >= 0 : value > 0 else { throw OptionValueError(expected: expected) }
    return value
}

/// A Gateway clock step: 0 to 1000000000 seconds (`advance`).
struct ClockStep: OptionValue, Hashable {
    static let placeholder = "seconds"
    let seconds: Double

    init(option text: String) throws(OptionValueError) {
        seconds = try consoleSeconds(text, allowingZero: true, expected: "a number of seconds (0 to 1000000000)")
    }
}

/// A positive duration in seconds, at most 1000000000 (`--expires-in`, `--delay`).
struct ConsoleSeconds: OptionValue, Hashable {
    static let placeholder = "SECONDS"
    let seconds: Double

    init(option text: String) throws(OptionValueError) {
        seconds = try consoleSeconds(text, allowingZero: false, expected: "a positive number of seconds (at most 1000000000)")
    }

    /// The duration on the Gateway clock, to the millisecond.
    var duration: Duration { .milliseconds(Int64((seconds * 1000).rounded())) }
}

/// `text` as a whole number within `range`, or the error that says what was `expected`: the one
/// parse of every counted console value.
private func integer(_ text: String, in range: ClosedRange<Int>, expected: String) throws(OptionValueError) -> Int {
    guard let parsed = Int(text), range.contains(parsed) else { throw OptionValueError(expected: expected) }
    return parsed
}

/// `delay`: 1 to 3600000 milliseconds, or `off` (also `0`).
struct ResponseDelay: OptionValue, Hashable {
    static let placeholder = "milliseconds|off"
    /// `nil` for off.
    let milliseconds: Int?

    init(option text: String) throws(OptionValueError) {
        if text == "off" || text == "0" {
            milliseconds = nil
            return
        }
        milliseconds = try integer(text, in: 1...3_600_000, expected: "a number of milliseconds (1 to 3600000) or off")
    }
}

/// A count from 1 to 1000000 (`skip-seq`, `send-binary`, `fragment`).
struct ConsoleCount: OptionValue, Hashable {
    static let placeholder = "N"
    let value: Int

    init(option text: String) throws(OptionValueError) {
        value = try integer(text, in: 1...1_000_000, expected: "a count from 1 to 1000000")
    }
}

/// A whole number from 0 to 1000000 (the chat faults, where 0 disarms).
struct WholeNumber: OptionValue, Hashable {
    static let placeholder = "N"
    let value: Int

    init(option text: String) throws(OptionValueError) {
        value = try integer(text, in: 0...1_000_000, expected: "a whole number from 0 to 1000000")
    }
}

/// Milliseconds from 0 (`--expected-ms`).
struct Milliseconds: OptionValue, Hashable {
    static let placeholder = "N"
    let value: Int

    init(option text: String) throws(OptionValueError) {
        value = try integer(text, in: 0...Int.max, expected: "a number of milliseconds")
    }
}

/// `on` or `off` (also `true`/`false`, any case).
struct OnOff: OptionValue, Hashable {
    static let placeholder = "on|off"
    let on: Bool

    init(option text: String) throws(OptionValueError) {
        guard let value = ["on": true, "off": false, "true": true, "false": false][text.lowercased()] else {
            throw OptionValueError(message: "expected on or off, not '\(text)'")
        }
        on = value
    }
}

/// A fixture the console's `fixture` command shows or replaces: `agents`, `models`, `tasks`,
/// `config` or `skills`.
enum FixtureMember: String, OptionValue, Hashable, CaseIterable {
    case agents, models, tasks, config, skills

    static let placeholder = "agents|models|tasks|config|skills"

    init(option text: String) throws(OptionValueError) {
        guard let member = Self(rawValue: text) else {
            throw OptionValueError(message: "expected agents, models, tasks, config or skills, not '\(text)'")
        }
        self = member
    }
}

/// `true` or `false`: the `handled` of `presence-reply`.
struct Handled: OptionValue, Hashable {
    static let placeholder = "true|false"
    let value: Bool

    init(option text: String) throws(OptionValueError) {
        guard let value = Bool(text) else { throw OptionValueError(message: "handled must be true or false, not '\(text)'") }
        self.value = value
    }
}

/// A WebSocket close code from 1000 to 4999.
struct CloseCode: OptionValue, Hashable {
    static let placeholder = "code"
    let value: Int

    init(option text: String) throws(OptionValueError) {
        value = try integer(text, in: 1000...4999, expected: "a close code (1000 to 4999)")
    }
}

/// Any JSON value (`invoke`'s params, `event`'s payload).
struct JSONArgument: OptionValue, Hashable {
    static let placeholder = "JSON"
    let value: JSONValue

    init(option text: String) throws(OptionValueError) {
        guard let parsed = try? JSONValue(parsing: text) else { throw OptionValueError(expected: "valid JSON") }
        value = parsed
    }
}

/// Text that is not blank (`--reason`, `--session`).
struct NonEmptyText: OptionValue, Hashable {
    static let placeholder = "TEXT"
    let text: String

    init(option text: String) throws(OptionValueError) {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw OptionValueError(expected: "a non-empty text") }
        self.text = text
    }
}

/// A comma-separated list (`--options a,b`); blank items are left out.
struct CommaList: OptionValue, Hashable {
    static let placeholder = "a,b"
    let items: [String]

    init(option text: String) {
        items = text.split(separator: ",", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

/// A setup-code profile by name (``BootstrapProfile/names``).
struct ProfileName: OptionValue, Hashable {
    static let placeholder = BootstrapProfile.names.joined(separator: "|")
    let name: String

    init(option text: String) throws(OptionValueError) {
        guard BootstrapProfile.named(text) != nil else {
            throw OptionValueError(message: "unknown profile '\(text)' (known: \(BootstrapProfile.names.joined(separator: ", ")))")
        }
        name = text
    }
}

extension ApprovalDecision: OptionValue {
    /// `allow-once|allow-always|deny`.
    public static let placeholder = allCases.map(\.rawValue).joined(separator: "|")

    /// Parses a decision by its wire name.
    /// - Throws: ``OptionValueError`` naming the decisions.
    public init(option text: String) throws(OptionValueError) {
        guard let decision = ApprovalDecision(rawValue: text) else {
            throw OptionValueError(message: "unknown decision '\(text)' (allow-once, allow-always or deny)")
        }
        self = decision
    }
}

/// A comma-separated list of approval decisions (`--decisions allow-once,deny`).
struct DecisionList: OptionValue, Hashable {
    static let placeholder = ApprovalDecision.allCases.map(\.rawValue).joined(separator: ",")
    let decisions: [ApprovalDecision]

    init(option text: String) throws(OptionValueError) {
        var decisions: [ApprovalDecision] = []
        for item in CommaList(option: text).items { decisions.append(try ApprovalDecision(option: item)) }
        self.decisions = decisions
    }
}

/// `drain`'s argument: a drain by name, or `off`.
struct DrainArgument: OptionValue, Hashable {
    static let placeholder = "restarting|suspending|closing|off"
    /// `nil` for off.
    let drain: GatewayDrain?

    init(option text: String) throws(OptionValueError) {
        if text == "off" {
            drain = nil
            return
        }
        guard let drain = GatewayDrain(name: text) else {
            throw OptionValueError(message: "unknown drain '\(text)' (restarting, suspending, closing or off)")
        }
        self.drain = drain
    }
}

/// `change-auth`'s argument (a secret: errors never repeat it).
extension GatewayAuthMode: OptionValue {
    /// `none|token:SECRET|password:SECRET`.
    public static let placeholder = "none|token:SECRET|password:SECRET"

    /// Parses `none`, `token:SECRET` or `password:SECRET`.
    /// - Throws: ``OptionValueError`` that does not repeat the text.
    public init(option text: String) throws(OptionValueError) {
        guard let mode = GatewayAuthMode(specification: text) else {
            throw OptionValueError(expected: "none, token:SECRET or password:SECRET")
        }
        self = mode
    }
}

/// `chat-auto-reply`'s mode.
struct AutoReplyMode: OptionValue, Hashable {
    static let placeholder = "echo|off"
    let echo: Bool

    init(option text: String) throws(OptionValueError) {
        guard text == "echo" || text == "off" else { throw OptionValueError(message: "expected echo or off, not '\(text)'") }
        echo = text == "echo"
    }
}

extension ChatAckDrop: OptionValue {
    /// `after-apply|before-apply`.
    public static let placeholder = "after-apply|before-apply"

    /// Parses `after-apply` or `before-apply`.
    /// - Throws: ``OptionValueError`` naming both.
    public init(option text: String) throws(OptionValueError) {
        guard let drop = ChatAckDrop(rawValue: text) else {
            throw OptionValueError(message: "expected after-apply or before-apply, not '\(text)'")
        }
        self = drop
    }
}

/// The answers of `answer-question`: by question id (`{"q1":["a"]}`), or a plain list for the
/// question's first item (`["a"]`).
public enum ConsoleAnswers: OptionValue, Hashable {
    /// Values by question id.
    case byQuestion([String: [String]])
    /// Values for the first question of the record.
    case firstQuestion([String])

    /// `json`.
    public static let placeholder = "json"

    /// Parses as ``init(parsing:)``.
    /// - Throws: ``OptionValueError`` with the same message.
    public init(option text: String) throws(OptionValueError) {
        do throws(ConsoleError) {
            self = try ConsoleAnswers(parsing: text)
        } catch {
            throw OptionValueError(message: error.message)
        }
    }

    /// Parses `{"q1":["a"]}`, `{"answers":{"q1":["a"]}}` (the wire shape), `["a"]` or `"a"`.
    /// - Throws: `ConsoleError` for anything else.
    public init(parsing text: String) throws(ConsoleError) {
        guard let value = try? JSONValue(parsing: text) else {
            throw ConsoleError("answers are not valid JSON: \(text)")
        }
        func strings(_ value: JSONValue) -> [String]? {
            if let text = value.stringValue { return [text] }
            guard let items = value.arrayValue else { return nil }
            let texts = items.compactMap(\.stringValue)
            return texts.count == items.count ? texts : nil
        }
        if let list = strings(value) {
            self = .firstQuestion(list)
            return
        }
        guard var object = value.objectValue else {
            throw ConsoleError(#"answers must be {"<questionId>":["value",…]} or ["value",…]"#)
        }
        if object.count == 1, let inner = object["answers"]?.objectValue { object = inner }
        var answers: [String: [String]] = [:]
        for (questionId, values) in object {
            guard let list = strings(values) else {
                throw ConsoleError("answers for '\(questionId)' must be a string or a list of strings")
            }
            answers[questionId] = list
        }
        self = .byQuestion(answers)
    }
}
