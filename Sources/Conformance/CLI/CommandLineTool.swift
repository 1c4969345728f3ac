import Foundation

/// One option of a subcommand: its name, whether it takes a value, its help and how to check
/// the value. The table of these is the single source of both parsing and `--help`.
public struct FlagSpec: Sendable {
    /// The option as typed, with dashes (`--seed`).
    public var name: String
    /// The value's placeholder in help (`N`), or `nil` for a switch that takes no value.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// Whether it may be given more than once (values accumulate).
    public var repeatable: Bool
    /// Checks a value; returns a sentence saying what is wrong, or `nil` when it is fine.
    public var validate: @Sendable (String) -> String?
    /// Whether the value may hold a secret: error messages then never repeat it.
    public var isSecret: Bool = false

    /// A switch without a value.
    public static func flag(_ name: String, help: String) -> FlagSpec {
        FlagSpec(name: name, valueName: nil, help: help, repeatable: false, validate: { _ in nil })
    }

    /// An option with a value.
    /// - Parameter secret: the value may hold a secret; error messages do not repeat it.
    public static func option(_ name: String, _ valueName: String, help: String, repeatable: Bool = false, secret: Bool = false,
                              validate: @escaping @Sendable (String) -> String? = { _ in nil }) -> FlagSpec {
        FlagSpec(name: name, valueName: valueName, help: help, repeatable: repeatable, validate: validate, isSecret: secret)
    }

    /// Whether it takes a value.
    public var takesValue: Bool { valueName != nil }
}

/// A positional argument of a subcommand.
public struct PositionalSpec: Sendable {
    /// Its placeholder (`ID`).
    public var name: String
    /// One line of help.
    public var help: String
    /// Whether it may be left out.
    public var optional: Bool
    /// Whether it takes every remaining argument (only the last positional may).
    public var variadic: Bool

    /// Creates a positional argument.
    public init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
    }
}

/// What a parsed command line holds.
public struct ParsedArguments: Sendable, Hashable {
    /// Values by option name (switches map to an empty list of values... see `isSet`).
    public var values: [String: [String]] = [:]
    /// The positional arguments, in order.
    public var positionals: [String] = []

    /// Creates an empty result.
    public init() {}

    /// Whether the option or switch was given.
    public func isSet(_ name: String) -> Bool { values[name] != nil }
    /// The last value given for `name`.
    public func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for `name`, in order.
    public func allValues(_ name: String) -> [String] { values[name] ?? [] }
}

/// Where a command writes and what it knows about its surroundings; tests pass a recording one.
public struct CommandIO: Sendable {
    /// Writes to standard output.
    public var out: @Sendable (String) -> Void
    /// Writes to standard error.
    public var err: @Sendable (String) -> Void
    /// The process environment.
    public var environment: [String: String]
    /// Whether standard output is a terminal (for colour).
    public var stdoutIsTerminal: Bool
    /// Whether standard error is a terminal.
    public var stderrIsTerminal: Bool
    /// The terminal's width in columns, when standard output is a terminal that says.
    public var terminalColumns: Int?

    /// Creates an IO description. Tests inject `stdoutIsTerminal` to see what a terminal gets
    /// (colour, the live progress line).
    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
                environment: [String: String] = [:], stdoutIsTerminal: Bool = false, stderrIsTerminal: Bool = false,
                terminalColumns: Int? = nil) {
        self.out = out
        self.err = err
        self.environment = environment
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.terminalColumns = terminalColumns
    }

    /// The process's own standard output and error.
    public static var standard: CommandIO {
        CommandIO(
            out: { FileHandle.standardOutput.write(Data($0.utf8)) },
            err: { FileHandle.standardError.write(Data($0.utf8)) },
            environment: ProcessInfo.processInfo.environment,
            stdoutIsTerminal: isatty(1) == 1, stderrIsTerminal: isatty(2) == 1, terminalColumns: standardOutputColumns())
    }

    /// The width of the terminal on standard output (`TIOCGWINSZ`), if it is one.
    static func standardOutputColumns() -> Int? {
        var size = winsize()
        guard isatty(1) == 1, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

/// A subcommand: its table of options and what it does.
public struct CommandSpec: Sendable {
    /// Runs the command; returns the exit code.
    public typealias Action = @Sendable (ParsedArguments, CommandIO) async -> Int32

    /// The name typed after the tool's (`run`).
    public var name: String
    /// One line for the tool's help.
    public var summary: String
    /// Paragraphs shown in the command's own help after the usage line.
    public var discussion: String
    /// Positional arguments.
    public var positionals: [PositionalSpec]
    /// Options.
    public var flags: [FlagSpec]
    /// What it does.
    public var action: Action

    /// Creates a command.
    public init(name: String, summary: String, discussion: String = "", positionals: [PositionalSpec] = [],
                flags: [FlagSpec] = [], action: @escaping Action) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.positionals = positionals
        self.flags = flags
        self.action = action
    }
}

/// A bad command line: the message names the bad part and suggests the closest valid one.
public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// A command-line tool made of subcommands, each a table of options. Adding a subcommand is
/// adding one `CommandSpec` to `commands`.
public struct CommandLineTool: Sendable {
    /// Exit code for success.
    public static let exitSuccess: Int32 = 0
    /// Exit code for conformance failures.
    public static let exitFailures: Int32 = 1
    /// Exit code for usage and harness errors.
    public static let exitUsage: Int32 = 2

    /// The tool's name (`harness`).
    public var name: String
    /// One line describing it.
    public var summary: String
    /// Its subcommands, in help order.
    public var commands: [CommandSpec]

    /// Creates a tool.
    public init(name: String, summary: String, commands: [CommandSpec]) {
        self.name = name
        self.summary = summary
        self.commands = commands
    }

    /// Runs the command line (without the tool's own name) and returns the exit code.
    public func main(_ arguments: [String], io: CommandIO = .standard) async -> Int32 {
        guard let first = arguments.first else {
            io.err(help())
            return Self.exitUsage
        }
        if first == "--help" || first == "-h" || first == "help" {
            if first == "help", arguments.count > 1 {
                guard let command = commands.first(where: { $0.name == arguments[1] }) else {
                    io.err("error: \(unknownCommandMessage(arguments[1]))\n")
                    return Self.exitUsage
                }
                io.out(help(for: command))
                return Self.exitSuccess
            }
            io.out(help())
            return Self.exitSuccess
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            io.err("error: \(unknownCommandMessage(first))\nRun '\(name) --help' for the list of commands.\n")
            return Self.exitUsage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            io.out(help(for: command))
            return Self.exitSuccess
        }
        let parsed: ParsedArguments
        do {
            parsed = try parse(rest, for: command)
        } catch {
            io.err("error: \(error)\nRun '\(name) \(command.name) --help' for usage.\n")
            return Self.exitUsage
        }
        return await command.action(parsed, io)
    }

    /// Parses `arguments` against `command`'s table.
    /// - Throws: `UsageError` for an unknown option (with a suggestion), a missing or invalid
    ///   value, a repeated option, or a wrong number of positional arguments.
    public func parse(_ arguments: [String], for command: CommandSpec) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var flagName = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                flagName = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let flag = command.flags.first(where: { $0.name == flagName }) else {
                var message = "unknown option '\(flagName)' for '\(name) \(command.name)'"
                if let suggestion = Suggestion.closest(to: flagName, among: command.flags.map(\.name)) {
                    message += "; did you mean '\(suggestion)'?"
                }
                throw UsageError(message)
            }
            if !flag.repeatable, parsed.isSet(flag.name) {
                throw UsageError("option '\(flag.name)' is given more than once")
            }
            guard let valueName = flag.valueName else {
                if inlineValue != nil { throw UsageError("option '\(flag.name)' takes no value") }
                parsed.values[flag.name, default: []] += []
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            } else {
                throw UsageError("option '\(flag.name)' needs a value (\(valueName))")
            }
            if let problem = flag.validate(value) {
                if flag.isSecret { throw UsageError("invalid value for '\(flag.name)': \(problem)") }
                throw UsageError("invalid value '\(value)' for '\(flag.name)': \(problem)")
            }
            parsed.values[flag.name, default: []].append(value)
        }
        let required = command.positionals.filter { !$0.optional }.count
        if parsed.positionals.count < required {
            let missing = command.positionals[parsed.positionals.count].name
            throw UsageError("missing argument \(missing)")
        }
        if parsed.positionals.count > command.positionals.count, command.positionals.last?.variadic != true {
            let extra = parsed.positionals[command.positionals.count]
            var message = "unexpected argument '\(extra)'"
            if extra.hasPrefix("-") == false,
               let suggestion = Suggestion.closest(to: "--" + extra, among: command.flags.map(\.name)) {
                message += "; did you mean '\(suggestion)'?"
            }
            throw UsageError(message)
        }
        return parsed
    }

    /// The tool's help: usage and the list of subcommands.
    public func help() -> String {
        var out = "\(name): \(summary)\n\nUSAGE: \(name) <command> [options]\n\nCOMMANDS:\n"
        let width = (commands.map(\.name.count).max() ?? 0) + 2
        for command in commands {
            out += "  \(command.name.padding(toLength: width, withPad: " ", startingAt: 0))\(command.summary)\n"
        }
        out += "\nRun '\(name) <command> --help' for a command's options.\n"
        return out
    }

    /// A subcommand's help: usage, discussion, arguments and every option of its table.
    public func help(for command: CommandSpec) -> String {
        let positionals = command.positionals.map { positional in
            let name = positional.name + (positional.variadic ? "..." : "")
            return positional.optional ? "[\(name)]" : name
        }
        var usage = "\(name) \(command.name)"
        if !command.flags.isEmpty { usage += " [options]" }
        if !positionals.isEmpty { usage += " " + positionals.joined(separator: " ") }
        var out = "\(command.summary)\n\nUSAGE: \(usage)\n"
        if !command.discussion.isEmpty { out += "\n\(command.discussion)\n" }
        if !command.positionals.isEmpty {
            out += "\nARGUMENTS:\n"
            for positional in command.positionals {
                out += "  \(positional.name)\(positional.variadic ? "..." : "")  \(positional.help)\n"
            }
        }
        let rows = command.flags.map { flag in
            (flag.valueName.map { "\(flag.name) \($0)" } ?? flag.name, flag.help + (flag.repeatable ? " (repeatable)" : ""))
        } + [("-h, --help", "Show this help.")]
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        out += "\nOPTIONS:\n"
        for (left, right) in rows {
            out += "  \(left.padding(toLength: width, withPad: " ", startingAt: 0))\(right)\n"
        }
        return out
    }

    private func unknownCommandMessage(_ text: String) -> String {
        var message = "unknown command '\(text)'"
        if let suggestion = Suggestion.closest(to: text, among: commands.map(\.name)) {
            message += "; did you mean '\(suggestion)'?"
        }
        return message
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
