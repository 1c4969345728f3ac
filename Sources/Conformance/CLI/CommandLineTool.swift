@_exported import ArgumentParsing
import Foundation

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
        do throws(ArgumentProblem) {
            return try ArgumentParser.parse(arguments.map { ArgumentWord($0) }, flags: command.flags,
                                            positionals: command.positionals)
        } catch {
            throw UsageError(message(for: error, command: command))
        }
    }

    /// The CLI's wording of a parse problem.
    private func message(for problem: ArgumentProblem, command: CommandSpec) -> String {
        switch problem {
        case .unknownOption(let flag):
            var message = "unknown option '\(flag)' for '\(name) \(command.name)'"
            if let suggestion = Suggestion.closest(to: flag, among: command.flags.map(\.name)) {
                message += "; did you mean '\(suggestion)'?"
            }
            return message
        case .repeatedOption(let flag):
            return "option '\(flag)' is given more than once"
        case .switchWithValue(let flag):
            return "option '\(flag)' takes no value"
        case .missingValue(let flag, let valueName):
            return "option '\(flag)' needs a value (\(valueName))"
        case .invalidOptionValue(let flag, let value, let problem, let secret):
            if secret { return "invalid value for '\(flag)': \(problem)" }
            return "invalid value '\(value)' for '\(flag)': \(problem)"
        case .invalidArgument(let argument, let value, let problem, let secret):
            if secret { return "invalid value for \(argument): \(problem)" }
            return "invalid value '\(value)' for \(argument): \(problem)"
        case .missingArgument(let argument):
            return "missing argument \(argument)"
        case .unexpectedArgument(let extra):
            var message = "unexpected argument '\(extra)'"
            if extra.hasPrefix("-") == false,
               let suggestion = Suggestion.closest(to: "--" + extra, among: command.flags.map(\.name)) {
                message += "; did you mean '\(suggestion)'?"
            }
            return message
        }
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
