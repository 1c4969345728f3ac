/// Why a value was refused: what is expected, as a sentence fragment ("an integer from 1 to
/// 256"), or a whole sentence when the value is one of a closed list ("unknown profile 'x'
/// (known: full, limited)").
public struct OptionValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What a valid value looks like.
    public var expected: String
    /// A sentence that replaces `expected …` (for values refused by name, with the known ones).
    public var message: String?

    /// Creates an error that says what is expected.
    public init(expected: String) { self.expected = expected }

    /// Creates an error with a whole sentence (`unknown decision 'x' (allow-once or deny)`).
    public init(message: String) {
        self.expected = message
        self.message = message
    }

    /// `expected …`, or the sentence.
    public var description: String { message ?? "expected \(expected)" }
}

/// A value on a command line (the CLI's options, the `harness serve` console's arguments and
/// options) as a type that knows its rules: parsed once, with the same rules wherever it is
/// taken.
///
/// ```swift
/// .option("--seed", SeedOption.self, help: "Seed every random choice.")   // the table entry
/// let seed = arguments.value("--seed", as: SeedOption.self)?.value        // after parsing
/// ```
public protocol OptionValue: Sendable {
    /// The placeholder in help (`N`).
    static var placeholder: String { get }
    /// Parses a value as typed.
    /// - Throws: ``OptionValueError`` saying what is expected.
    init(option text: String) throws(OptionValueError)
}

extension OptionValue {
    /// The problem with `text` as this type, or `nil` when it parses.
    public static func problem(with text: String) -> OptionValueError? {
        do throws(OptionValueError) {
            _ = try Self(option: text)
            return nil
        } catch {
            return error
        }
    }
}

/// One option of a command: its name, whether it takes a value, its help and how to check the
/// value. A table of these is the single source of both parsing and help.
public struct FlagSpec: Sendable {
    /// The option as typed, with dashes (`--seed`).
    public var name: String
    /// The value's placeholder in help (`N`), or `nil` for a switch that takes no value.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// Whether it may be given more than once (values accumulate).
    public var repeatable: Bool
    /// Checks a value; `nil` when it is fine.
    public var check: @Sendable (String) -> OptionValueError?
    /// Whether the value may hold a secret: error messages then never repeat it.
    public var isSecret: Bool = false

    /// A switch without a value.
    public static func flag(_ name: String, help: String) -> FlagSpec {
        FlagSpec(name: name, valueName: nil, help: help, repeatable: false, check: { _ in nil })
    }

    /// An option with a value.
    /// - Parameters:
    ///   - secret: the value may hold a secret; error messages do not repeat it.
    ///   - validate: returns what is wrong with a value (`expected …`), or `nil` when it is fine.
    public static func option(_ name: String, _ valueName: String, help: String, repeatable: Bool = false, secret: Bool = false,
                              validate: @escaping @Sendable (String) -> String? = { _ in nil }) -> FlagSpec {
        FlagSpec(name: name, valueName: valueName, help: help, repeatable: repeatable,
                 check: { validate($0).map(OptionValueError.init(message:)) }, isSecret: secret)
    }

    /// An option whose value is parsed and checked by `type`, with its placeholder in help
    /// unless `valueName` is given.
    public static func option<Value: OptionValue>(_ name: String, _ type: Value.Type, _ valueName: String? = nil, help: String,
                                                  repeatable: Bool = false, secret: Bool = false) -> FlagSpec {
        FlagSpec(name: name, valueName: valueName ?? Value.placeholder, help: help, repeatable: repeatable,
                 check: { Value.problem(with: $0) }, isSecret: secret)
    }

    /// Checks a value; returns a sentence saying what is wrong, or `nil` when it is fine.
    public var validate: @Sendable (String) -> String? {
        let check = self.check
        return { check($0)?.description }
    }

    /// Whether it takes a value.
    public var takesValue: Bool { valueName != nil }

    /// `--name VALUE`, or `--name` for a switch.
    public var synopsis: String { valueName.map { "\(name) \($0)" } ?? name }
}

/// A positional argument of a command.
public struct PositionalSpec: Sendable {
    /// Its placeholder (`ID`).
    public var name: String
    /// One line of help.
    public var help: String
    /// Whether it may be left out.
    public var optional: Bool
    /// Whether it takes every remaining argument (only the last positional may).
    public var variadic: Bool
    /// Checks a value; `nil` when it is fine (or when any text is).
    public var check: @Sendable (String) -> OptionValueError?
    /// Whether the value may hold a secret: error messages then never repeat it.
    public var isSecret: Bool = false

    /// Creates a positional argument that takes any text.
    public init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
        self.check = { _ in nil }
    }

    /// A positional argument parsed and checked by `type`.
    public init<Value: OptionValue>(_ name: String, _ type: Value.Type, help: String, optional: Bool = false,
                                    variadic: Bool = false, secret: Bool = false) {
        self.init(name, help: help, optional: optional, variadic: variadic)
        self.check = { Value.problem(with: $0) }
        self.isSecret = secret
    }
}

/// What a parsed command line holds.
public struct ParsedArguments: Sendable, Hashable {
    /// Values by option name (a switch maps to an empty list; see `isSet`).
    public var values: [String: [String]] = [:]
    /// The positional arguments, in order.
    public var positionals: [String] = []

    /// Creates an empty result.
    public init() {}

    /// Creates a result with these values (tests and callers that build one by hand).
    public init(positionals: [String], values: [String: [String]] = [:]) {
        self.positionals = positionals
        self.values = values
    }

    /// Whether the option or switch was given.
    public func isSet(_ name: String) -> Bool { values[name] != nil }
    /// The last value given for `name`.
    public func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for `name`, in order.
    public func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// The last value of `name` as `type` (already checked when the line was parsed).
    public func value<Value: OptionValue>(_ name: String, as type: Value.Type) -> Value? {
        value(name).flatMap { try? Value(option: $0) }
    }

    /// The positional at `index` as `type`, or `nil` when it was left out.
    public func positional<Value: OptionValue>(_ index: Int, as type: Value.Type) -> Value? {
        guard positionals.indices.contains(index) else { return nil }
        return try? Value(option: positionals[index])
    }
}

/// One word of a command line, and whether it is taken literally (a quoted console word is
/// never an option).
public struct ArgumentWord: Sendable, Hashable {
    /// The text.
    public var text: String
    /// Whether the word can only be a positional argument or a value.
    public var literal: Bool

    /// Creates a word.
    public init(_ text: String, literal: Bool = false) {
        self.text = text
        self.literal = literal
    }
}

/// What is wrong with a command line, as data: the CLI and the console each word it their way.
public enum ArgumentProblem: Error, Sendable, Hashable {
    /// An option that is not in the table.
    case unknownOption(String)
    /// A non-repeatable option given twice.
    case repeatedOption(String)
    /// A switch written with `=value`.
    case switchWithValue(String)
    /// An option at the end of the line, or followed by another option.
    case missingValue(option: String, valueName: String)
    /// An option value its check refused.
    case invalidOptionValue(option: String, value: String, problem: OptionValueError, secret: Bool)
    /// A positional argument its check refused.
    case invalidArgument(argument: String, value: String, problem: OptionValueError, secret: Bool)
    /// Fewer positional arguments than required; the first missing one.
    case missingArgument(String)
    /// More positional arguments than taken; the first extra one.
    case unexpectedArgument(String)
}

/// The two dialects of ``ArgumentParser``.
public enum ArgumentSyntax: Sendable, Hashable {
    /// The `harness` command line: `-x` is an option too, and `--` ends the options.
    case commandLine
    /// The `harness serve` console: only `--name` is an option; `-x` and `--` are words
    /// (`approval rm -rf -- /tmp/x` keeps every word of the command).
    case console
}

/// The option parser of both the `harness` command line and the `harness serve` console.
///
/// A word is an option when it is not literal and starts with `--` and at least one more
/// character, or (on the command line only) `-` and a letter; `-5` is always a positional
/// number, and on the console `rm -rf /tmp/x` is three positional words. `--name=value` and `--name value` both give a value; a
/// following word that looks like an option is not taken as a value. `--` ends the options.
/// Options and positionals may come in any order.
public enum ArgumentParser {
    /// Whether `word` is written as an option.
    public static func looksLikeOption(_ word: ArgumentWord, syntax: ArgumentSyntax = .commandLine) -> Bool {
        guard !word.literal else { return false }
        let characters = Array(word.text)
        if characters.count > 2, characters[0] == "-", characters[1] == "-" { return true }
        return syntax == .commandLine && characters.count > 1 && characters[0] == "-" && characters[1].isLetter
    }

    /// Parses `words` against a table of options and positional arguments, checking every value.
    /// - Parameter syntax: the command line's conventions or the console's.
    /// - Throws: the first ``ArgumentProblem``, left to right; positional counts are checked
    ///   after the options.
    public static func parse(_ words: [ArgumentWord], flags: [FlagSpec], positionals: [PositionalSpec],
                             syntax: ArgumentSyntax = .commandLine) throws(ArgumentProblem) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            if word.literal || onlyPositionals || !looksLikeOption(word, syntax: syntax) {
                if syntax == .commandLine, !word.literal, !onlyPositionals, word.text == "--" {
                    onlyPositionals = true
                    continue
                }
                parsed.positionals.append(word.text)
                continue
            }
            var flagName = word.text
            var inlineValue: String?
            if let equals = word.text.firstIndex(of: "=") {
                flagName = String(word.text[..<equals])
                inlineValue = String(word.text[word.text.index(after: equals)...])
            }
            guard let flag = flags.first(where: { $0.name == flagName }) else { throw .unknownOption(flagName) }
            if !flag.repeatable, parsed.isSet(flag.name) { throw .repeatedOption(flag.name) }
            guard let valueName = flag.valueName else {
                if inlineValue != nil { throw .switchWithValue(flag.name) }
                parsed.values[flag.name, default: []] += []
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < words.count, words[index].literal || !words[index].text.hasPrefix("--") {
                value = words[index].text
                index += 1
            } else {
                throw .missingValue(option: flag.name, valueName: valueName)
            }
            if let problem = flag.check(value) {
                throw .invalidOptionValue(option: flag.name, value: value, problem: problem, secret: flag.isSecret)
            }
            parsed.values[flag.name, default: []].append(value)
        }
        let required = positionals.filter { !$0.optional }.count
        if parsed.positionals.count < required { throw .missingArgument(positionals[parsed.positionals.count].name) }
        if parsed.positionals.count > positionals.count, positionals.last?.variadic != true {
            throw .unexpectedArgument(parsed.positionals[positionals.count])
        }
        for (position, value) in parsed.positionals.enumerated() {
            guard let spec = positionals.isEmpty ? nil : positionals[min(position, positionals.count - 1)] else { continue }
            if let problem = spec.check(value) {
                throw .invalidArgument(argument: spec.name, value: value, problem: problem, secret: spec.isSecret)
            }
        }
        return parsed
    }
}

/// "Did you mean" suggestions by edit distance.
public enum Suggestion {
    /// The candidate closest to `text` (case-insensitive Levenshtein distance), when it is close
    /// enough to be a plausible typo, or `text` is a prefix of it.
    public static func closest(to text: String, among candidates: [String]) -> String? {
        let lowered = text.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            if let current = best, current.1 <= distance { continue }
            best = (candidate, distance)
        }
        guard let (candidate, distance) = best else { return nil }
        let limit = max(2, text.count / 3)
        if distance <= limit { return candidate }
        return candidates.first { $0.lowercased().hasPrefix(lowered) && lowered.count >= 3 }
    }

    /// The Levenshtein distance between `a` and `b`.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
