import ArgumentParsing

/// `--seed`: an integer from 0 to 2^53 - 1, decimal or `0x` hexadecimal. The upper bound keeps a
/// seed exact in every JSON report reader (JSON numbers are doubles in JavaScript), so a seed
/// printed in a report always replays.
public struct SeedOption: OptionValue, Hashable {
    /// The largest seed: 2^53 - 1.
    public static let maximum: UInt64 = 9_007_199_254_740_991
    /// `N`.
    public static let placeholder = "N"
    /// The seed.
    public let value: UInt64

    /// Parses `42` or `0x2a`.
    /// - Throws: ``OptionValueError`` for anything else or a value above ``maximum``.
    public init(option text: String) throws(OptionValueError) {
        let expected = OptionValueError(expected: "an integer from 0 to \(Self.maximum) (decimal, or hexadecimal with 0x)")
        let trimmed = text.lowercased()
        let parsed = trimmed.hasPrefix("0x") ? UInt64(trimmed.dropFirst(2), radix: 16) : UInt64(trimmed)
        guard let parsed, parsed <= Self.maximum else { throw expected }
        value = parsed
    }
}

/// `--port` of `serve`: a TCP port from 0 to 65535, where 0 asks the system for a free one
/// (the `listening` line then says which).
public struct PortOption: OptionValue, Hashable {
    /// `PORT`.
    public static let placeholder = "PORT"
    /// The port; 0 for any free one.
    public let value: Int

    /// Parses a decimal port from 0 to 65535.
    /// - Throws: ``OptionValueError`` otherwise.
    public init(option text: String) throws(OptionValueError) {
        guard let parsed = Int(text), (0...65_535).contains(parsed) else {
            throw OptionValueError(expected: "a port from 0 to 65535")
        }
        value = parsed
    }
}

/// `--jobs`: how many runs at once, an integer from 1 to 256.
public struct JobsOption: OptionValue, Hashable {
    /// The most runs at once.
    public static let maximum = 256
    /// `N`.
    public static let placeholder = "N"
    /// The number of runs.
    public let value: Int

    /// Parses an integer from 1 to ``maximum``.
    /// - Throws: ``OptionValueError`` otherwise.
    public init(option text: String) throws(OptionValueError) {
        guard let parsed = Int(text), (1...Self.maximum).contains(parsed) else {
            throw OptionValueError(expected: "an integer from 1 to \(Self.maximum)")
        }
        value = parsed
    }
}

/// `--slowness`: the factor every real-time deadline is multiplied by, above 0 and at most 1000.
public struct SlownessOption: OptionValue, Hashable {
    /// `X`.
    public static let placeholder = "X"
    /// The factor.
    public let value: Double

    /// Parses a finite number above 0 and at most 1000.
    /// - Throws: ``OptionValueError`` otherwise.
    public init(option text: String) throws(OptionValueError) {
        guard let parsed = Double(text), parsed.isFinite, parsed > 0, parsed <= 1000 else {
            throw OptionValueError(expected: "a number above 0 and at most 1000")
        }
        value = parsed
    }
}

/// `--shard I/N`.
extension Shard: OptionValue {
    /// `I/N`.
    public static let placeholder = "I/N"

    /// Parses `I/N` with 1 <= I <= N.
    /// - Throws: ``OptionValueError`` otherwise.
    public init(option text: String) throws(OptionValueError) {
        guard let shard = Shard(parsing: text) else { throw OptionValueError(expected: "I/N with 1 <= I <= N") }
        self = shard
    }
}

/// A value that must be one of a known list (a mutant's name): refused with the closest name
/// ("did you mean 'stale-signed-at'?").
public enum ChoiceOption {
    /// Checks `text` against `choices`.
    /// - Returns: `nil` when it is one of them, otherwise a sentence naming the closest one.
    public static func problem(with text: String, among choices: [String], what: String) -> String? {
        guard !choices.contains(text) else { return nil }
        var message = "unknown \(what) '\(text)'"
        if let suggestion = Suggestion.closest(to: text, among: choices) {
            message += "; did you mean '\(suggestion)'?"
        } else if choices.count <= 12 {
            message += " (one of: \(choices.joined(separator: ", ")))"
        }
        return message
    }
}

extension FlagSpec {
    /// An option whose value must be one of `choices` (`--mutant NAME`), refused with a
    /// "did you mean".
    public static func choice(_ name: String, _ valueName: String, among choices: [String], what: String,
                              help: String, repeatable: Bool = false) -> FlagSpec {
        .option(name, valueName, help: help, repeatable: repeatable) { text in
            ChoiceOption.problem(with: text, among: choices, what: what)
        }
    }
}
