/// One word of a console line.
public struct ConsoleToken: Sendable, Hashable {
    /// The word with quotes removed and escapes resolved.
    public var text: String
    /// Whether the word was written in double quotes.
    public var quoted: Bool
    /// The raw line from the start of this word to the end (trailing whitespace trimmed), for
    /// arguments that take the rest of the line verbatim (JSON with spaces in it).
    public var rest: String
    /// Whether this word is the rest of the line that ``ConsoleTokenizer/split(_:limit:options:)``
    /// took whole for a `limit` (a trailing JSON argument): it is never read as an option.
    public var isRestOfLine: Bool

    /// Creates a token.
    public init(text: String, quoted: Bool, rest: String, isRestOfLine: Bool = false) {
        self.text = text
        self.quoted = quoted
        self.rest = rest
        self.isRestOfLine = isRestOfLine
    }
}

/// Splits a console line into words.
///
/// Words are separated by spaces or tabs. A word that starts with `"` runs to the next unescaped
/// `"` and may contain spaces; inside it `\"` and `\\` stand for `"` and `\`. A `"` inside an
/// unquoted word is an ordinary character, so JSON such as `{"q1":["a"]}` needs no quoting.
public enum ConsoleTokenizer {
    /// The words of `line`.
    /// - Parameters:
    ///   - line: the console line.
    ///   - limit: when given, at most this many words that are not options: the last one is the
    ///     raw rest of the line (for a trailing JSON argument, whose quotes are its own), unless it
    ///     is exactly one quoted word.
    ///   - options: with `limit`, the command's options (name with dashes → how many words of
    ///     value follow it, 0 for a switch). An option and its value are words of their own and
    ///     do not count towards `limit`, so `invoke --no-wait latest cmd {"a": 1}` still gets its
    ///     JSON whole. `--name=value` is one word.
    /// - Throws: `ConsoleError` for a quoted word without its closing quote.
    public static func split(_ line: String, limit: Int? = nil, options: [String: Int] = [:]) throws(ConsoleError) -> [ConsoleToken] {
        let characters = Array(line)
        var tokens: [ConsoleToken] = []
        var counted = 0
        var valuesDue = 0
        var index = 0
        func isSpace(_ character: Character) -> Bool { character == " " || character == "\t" }
        func optionArity(_ word: String) -> Int? {
            guard word.hasPrefix("-") else { return nil }
            if let equals = word.firstIndex(of: "=") { return options[String(word[..<equals])].map { _ in 0 } }
            return options[word]
        }
        while index < characters.count {
            if isSpace(characters[index]) {
                index += 1
                continue
            }
            let start = index
            let rest = String(characters[start...]).trimmingTrailingWhitespace()
            let word = String(characters[start...].prefix { !isSpace($0) })
            if valuesDue == 0, let arity = optionArity(word) {
                valuesDue = arity
            } else if valuesDue > 0 {
                valuesDue -= 1
            } else if let limit, counted == limit - 1 {
                if let single = try? split(rest), single.count == 1, single[0].quoted {
                    tokens.append(ConsoleToken(text: single[0].text, quoted: true, rest: rest, isRestOfLine: true))
                } else {
                    tokens.append(ConsoleToken(text: rest, quoted: false, rest: rest, isRestOfLine: true))
                }
                break
            } else {
                counted += 1
            }
            if characters[index] == "\"" {
                index += 1
                var text = ""
                var closed = false
                while index < characters.count {
                    let character = characters[index]
                    if character == "\\", index + 1 < characters.count,
                       characters[index + 1] == "\"" || characters[index + 1] == "\\" {
                        text.append(characters[index + 1])
                        index += 2
                        continue
                    }
                    index += 1
                    if character == "\"" {
                        closed = true
                        break
                    }
                    text.append(character)
                }
                guard closed else { throw ConsoleError("missing closing quote in \(String(characters[start...]))") }
                if index < characters.count, !isSpace(characters[index]) {
                    throw ConsoleError("a quoted argument must be followed by a space")
                }
                tokens.append(ConsoleToken(text: text, quoted: true, rest: rest))
            } else {
                var text = ""
                while index < characters.count, !isSpace(characters[index]) {
                    text.append(characters[index])
                    index += 1
                }
                tokens.append(ConsoleToken(text: text, quoted: false, rest: rest))
            }
        }
        return tokens
    }
}

extension String {
    fileprivate func trimmingTrailingWhitespace() -> String {
        var copy = self
        while let last = copy.last, last.isWhitespace { copy.removeLast() }
        return copy
    }
}
