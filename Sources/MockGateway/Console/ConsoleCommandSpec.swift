import ArgumentParsing
import GatewayProtocol

/// A console line that could not be understood or carried out; `message` is one line.
public struct ConsoleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// One command of `harness serve`'s console, complete: its name and aliases, its typed
/// arguments and options (parsed by ``ArgumentParser``, the `harness` command line's parser),
/// its help, a check across its arguments, and the handler that runs it against the Gateway's
/// scripting API and returns the reply. ``all`` is the console: parsing, `help`, execution and
/// the reply all come from it.
public struct ConsoleCommandSpec: Sendable {
    /// Runs a parsed command on a console's Gateway. A thrown `GatewayError` or `ConsoleError`
    /// becomes the one-line error reply.
    public typealias Handler = @Sendable (ConsoleCommand, GatewayConsole) async throws -> ConsoleResult
    /// Checks what the option parser cannot see (options that exclude each other).
    public typealias Check = @Sendable (ConsoleCommand) throws(ConsoleError) -> Void

    /// The name as typed.
    public let name: String
    /// Other names for the same command (`shutdown` for `restart`).
    public let aliases: [String]
    /// The positional arguments, in order.
    public let arguments: [PositionalSpec]
    /// The options.
    public let options: [FlagSpec]
    /// Whether the last argument is the rest of the line as typed (JSON with spaces in it).
    public let lastArgumentIsRestOfLine: Bool
    /// One line of help.
    public let summary: String
    /// An example line (it must parse: a test checks every one).
    public let example: String
    /// Options left out of the usage line (older spellings).
    public let hiddenOptions: Set<String>
    let check: Check?
    let handler: Handler

    /// Creates a command.
    /// - Parameters:
    ///   - name: the name as typed.
    ///   - aliases: other names.
    ///   - arguments: positional arguments; their checks run when the line is parsed.
    ///   - options: options; their checks run when the line is parsed.
    ///   - restOfLine: the last argument takes the rest of the line verbatim; options may come
    ///     anywhere before it (the rest itself is never read for them).
    ///   - summary: one line of help.
    ///   - example: an example line.
    ///   - hiddenOptions: options not shown in the usage line.
    ///   - check: a check across arguments, run when the line is parsed.
    ///   - handler: runs the command.
    public init(_ name: String, aliases: [String] = [], arguments: [PositionalSpec] = [], options: [FlagSpec] = [],
                restOfLine: Bool = false, summary: String, example: String, hiddenOptions: Set<String> = [],
                check: Check? = nil, handler: @escaping Handler) {
        self.name = name
        self.aliases = aliases
        self.arguments = arguments
        self.options = options
        self.lastArgumentIsRestOfLine = restOfLine
        self.summary = summary
        self.example = example
        self.hiddenOptions = hiddenOptions
        self.check = check
        self.handler = handler
    }

    /// `name <required> [optional] [--option VALUE] [--switch]`.
    public var usage: String {
        let words = arguments.map { $0.optional ? "[\($0.name)]" : "<\($0.name)>" }
            + options.filter { !hiddenOptions.contains($0.name) }.map { "[\($0.synopsis)]" }
        return ([name] + words).joined(separator: " ")
    }

    /// The help entry.
    public var help: ConsoleCommandHelp {
        ConsoleCommandHelp(name: name, usage: usage, summary: summary, example: example, aliases: aliases)
    }

    /// Every console command, in help order.
    public static var all: [ConsoleCommandSpec] { ConsoleCommandRegistry.all }

    /// The command called `name` (or one of its aliases).
    public static func named(_ name: String) -> ConsoleCommandSpec? {
        ConsoleCommandRegistry.byName[name]
    }

    /// Parses the words after the command name.
    func parse(_ tokens: [ConsoleToken], typed: String) throws(ConsoleError) -> ConsoleCommand {
        var words = tokens.map { ArgumentWord($0.text, literal: $0.quoted) }
        // The rest of the line (the tokenizer's last positional word) is taken as written, never
        // as an option.
        for index in tokens.indices where tokens[index].isRestOfLine { words[index].literal = true }
        let parsed: ParsedArguments
        do throws(ArgumentProblem) {
            // `approval rm -rf /tmp/x`: a single dash never starts an option on the console.
            parsed = try ArgumentParser.parse(words, flags: options, positionals: arguments, syntax: .console)
        } catch {
            throw ConsoleError("\(typed): \(message(for: error))")
        }
        let command = ConsoleCommand(name, parsed)
        try check?(command)
        return command
    }

    /// The console's wording of a parse problem.
    private func message(for problem: ArgumentProblem) -> String {
        switch problem {
        case .unknownOption(let flag):
            let known = options.map(\.name).sorted()
            return "unknown option '\(flag)' (\(known.isEmpty ? "it takes no options" : "known: \(known.joined(separator: ", "))"))"
        case .repeatedOption(let flag):
            return "\(flag) is given more than once"
        case .switchWithValue(let flag):
            return "\(flag) takes no value"
        case .missingValue(let flag, _):
            return "\(flag) needs a value"
        case .invalidOptionValue(let flag, let value, let problem, let secret):
            if secret { return "usage: \(usage)" }
            return problem.message ?? "\(flag) needs \(problem.expected), not '\(value)'"
        case .invalidArgument(_, let value, let problem, let secret):
            if secret { return "usage: \(usage)" }
            return problem.message ?? "'\(value)' is not \(problem.expected)"
        case .missingArgument:
            return "usage: \(usage)"
        case .unexpectedArgument(let extra):
            return arguments.isEmpty ? "unexpected argument '\(extra)'" : "usage: \(usage)"
        }
    }
}

/// One console line, parsed: the command's name and its checked arguments.
public struct ConsoleCommand: Sendable, Hashable {
    /// The command's name (an alias is replaced by the name).
    public var name: String
    /// The positional arguments and options, each already checked against the command's spec.
    public var arguments: ParsedArguments

    /// Creates a parsed command.
    public init(_ name: String, _ arguments: ParsedArguments = ParsedArguments()) {
        self.name = name
        self.arguments = arguments
    }

    /// Creates a parsed command from its positional arguments and options.
    public init(_ name: String, _ positionals: [String], options: [String: [String]] = [:]) {
        self.init(name, ParsedArguments(positionals: positionals, values: options))
    }

    /// Parses one console line.
    /// - Returns: the command, or `nil` for a blank line or a `#` comment.
    /// - Throws: `ConsoleError` for an unknown command or bad arguments.
    public static func parse(_ line: String) throws(ConsoleError) -> ConsoleCommand? {
        let first = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        let spec = first.flatMap(ConsoleCommandSpec.named)
        // A command whose last argument is the rest of the line gets it verbatim.
        let limit = spec.flatMap { $0.lastArgumentIsRestOfLine ? $0.arguments.count + 1 : nil }
        let options = Dictionary(spec?.options.map { ($0.name, $0.takesValue ? 1 : 0) } ?? [], uniquingKeysWith: { first, _ in first })
        let tokens = try ConsoleTokenizer.split(line, limit: limit, options: options)
        guard let head = tokens.first else { return nil }
        if !head.quoted, head.text.hasPrefix("#") { return nil }
        guard let spec = ConsoleCommandSpec.named(head.text) else {
            let known = ConsoleCommandSpec.all.map(\.name).filter { $0.hasPrefix(head.text.prefix(3)) }
            let hint = known.isEmpty ? "" : " (did you mean \(known.joined(separator: ", "))?)"
            throw ConsoleError("unknown command '\(head.text)'\(hint) (type 'help' for the list)")
        }
        return try spec.parse(Array(tokens.dropFirst()), typed: head.text)
    }

    /// Whether the switch or option was given.
    public func isSet(_ option: String) -> Bool { arguments.isSet(option) }

    /// The option's value as `type`, or `nil` when it was not given.
    public func option<Value: OptionValue>(_ option: String, as type: Value.Type) -> Value? {
        arguments.value(option, as: type)
    }

    /// The positional argument at `index` as `type`, or `nil` when it was left out.
    public func argument<Value: OptionValue>(_ index: Int, as type: Value.Type) -> Value? {
        arguments.positional(index, as: type)
    }

    /// A required positional argument as `type`.
    /// - Throws: `ConsoleError` when it is missing (the parser already refused such a line).
    public func required<Value: OptionValue>(_ index: Int, as type: Value.Type) throws(ConsoleError) -> Value {
        guard let value = arguments.positional(index, as: type) else {
            throw ConsoleError("\(name): argument \(index + 1) is missing or invalid")
        }
        return value
    }

    /// The positional argument at `index` as typed.
    /// - Throws: `ConsoleError` when it is missing (the parser already refused such a line).
    public func text(_ index: Int) throws(ConsoleError) -> String {
        guard arguments.positionals.indices.contains(index) else {
            throw ConsoleError("\(name): argument \(index + 1) is missing")
        }
        return arguments.positionals[index]
    }

    /// The positional arguments from `index` on, joined by single spaces (`approval rm -rf /tmp`).
    public func words(from index: Int) -> String {
        arguments.positionals.dropFirst(index).joined(separator: " ")
    }
}

/// A command's help: name, usage, one line of help and an example, as `help` shows them.
public struct ConsoleCommandHelp: Sendable, Hashable {
    /// The name.
    public var name: String
    /// The usage line.
    public var usage: String
    /// One line of help.
    public var summary: String
    /// An example line.
    public var example: String
    /// Other names of the command.
    public var aliases: [String]

    /// Creates an entry.
    public init(name: String, usage: String, summary: String, example: String, aliases: [String] = []) {
        self.name = name
        self.usage = usage
        self.summary = summary
        self.example = example
        self.aliases = aliases
    }

    /// Every console command, in help order (from ``ConsoleCommandSpec/all``).
    public static var all: [ConsoleCommandHelp] { ConsoleCommandRegistry.help }

    /// The entry of `name` or of the command it is an alias of.
    public static func named(_ name: String) -> ConsoleCommandHelp? {
        ConsoleCommandSpec.named(name)?.help
    }
}

/// The registry, built once.
enum ConsoleCommandRegistry {
    static let all: [ConsoleCommandSpec] = ConsoleCommandSpec.pairingCommands + ConsoleCommandSpec.operatorCommands
        + ConsoleCommandSpec.faultCommands + ConsoleCommandSpec.chatCommands + ConsoleCommandSpec.appCommands
        + ConsoleCommandSpec.fixtureCommands
        + ConsoleCommandSpec.consoleCommands

    static let byName: [String: ConsoleCommandSpec] = {
        var names: [String: ConsoleCommandSpec] = [:]
        for spec in all {
            for name in [spec.name] + spec.aliases where names[name] == nil { names[name] = spec }
        }
        return names
    }()

    static let help: [ConsoleCommandHelp] = all.map(\.help)
}
