import Foundation
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

/// A record named on the console: by id, or `latest`.
public enum ConsoleReference: Sendable, Hashable {
    /// The most recent one of its kind (see each command).
    case latest
    /// An exact id.
    case id(String)

    /// `latest` or the id as typed.
    init(_ text: String) { self = text == "latest" ? .latest : .id(text) }
}

/// One operator command of `harness serve`'s console, parsed.
public enum ConsoleCommand: Sendable, Hashable {
    /// `pending`: the pending pairing requests.
    case pending
    /// `devices`: the paired devices.
    case devices
    /// `approve <requestId|latest>`: approve a pairing request (latest: the newest pending one).
    case approve(ConsoleReference)
    /// `reject <requestId|latest>`: reject a pairing request.
    case reject(ConsoleReference)
    /// `remove <deviceId>`: remove a paired device.
    case remove(deviceId: String)
    /// `revoke <deviceId> <role>`: revoke a device's token for a role.
    case revoke(deviceId: String, role: String)
    /// `invoke <nodeId|latest> <command> [paramsJSON]`: invoke a node command and wait for the result.
    case invoke(node: ConsoleReference, command: String, params: JSONValue?)
    /// `setup-code [--profile full|limited|voice-node|node]`: issue a setup code (`--full-access`
    /// is the older spelling of `--profile full`).
    case setupCode(profile: String?)
    /// `advance <seconds>`: move the Gateway clock forward.
    case advance(seconds: Double)
    /// `shutdown`: a restart (`shutdown` event, close 1012, then accepting again).
    case shutdown
    /// `help`: the command list.
    case help
    /// `quit`: stop the server.
    case quit
    /// `approval <command text> [--decisions …] [--expires-in SECONDS]`: create an exec approval.
    case approval(commandText: String, decisions: [ApprovalDecision], expiresInSeconds: Double?)
    /// `resolve-approval <id|latest> <decision>`: resolve an approval as the console surface.
    case resolveApproval(ConsoleReference, decision: ApprovalDecision)
    /// `question <prompt> [--options a,b] [--multi] [--other] [--expires-in SECONDS]`: ask a question.
    case question(prompt: String, options: [String], multiSelect: Bool, allowOther: Bool, expiresInSeconds: Double?)
    /// `answer-question <id|latest> <json>`: answer a question as the console surface.
    case answerQuestion(ConsoleReference, answers: ConsoleAnswers)
    /// `cancel-question <id|latest>`: cancel a question as the console surface.
    case cancelQuestion(ConsoleReference)
    /// A `chat-*` command: the scripted chat agent and the chat faults.
    case chat(ChatConsoleCommand)
    /// `drain <restarting|suspending|closing|off>`: start or end a drain (``GatewayDrain``).
    case drain(GatewayDrain?)

    /// The command's name as typed.
    public var name: String {
        switch self {
        case .pending: "pending"
        case .devices: "devices"
        case .approve: "approve"
        case .reject: "reject"
        case .remove: "remove"
        case .revoke: "revoke"
        case .invoke: "invoke"
        case .setupCode: "setup-code"
        case .advance: "advance"
        case .shutdown: "shutdown"
        case .help: "help"
        case .quit: "quit"
        case .approval: "approval"
        case .resolveApproval: "resolve-approval"
        case .question: "question"
        case .answerQuestion: "answer-question"
        case .cancelQuestion: "cancel-question"
        case .chat(let command): command.name
        case .drain: "drain"
        }
    }
}

/// The answers of `answer-question`: by question id (`{"q1":["a"]}`), or a plain list for the
/// question's first item (`["a"]`).
public enum ConsoleAnswers: Sendable, Hashable {
    /// Values by question id.
    case byQuestion([String: [String]])
    /// Values for the first question of the record.
    case firstQuestion([String])

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

/// The console's command table: name, usage, one line of help and an example each. It is both
/// the parser's list of names and the source of `help`.
public struct ConsoleCommandHelp: Sendable, Hashable {
    /// The name.
    public var name: String
    /// The usage line.
    public var usage: String
    /// One line of help.
    public var summary: String
    /// An example line.
    public var example: String

    /// Every console command, in help order.
    public static let all: [ConsoleCommandHelp] = [
        .init(name: "pending", usage: "pending", summary: "list the pending pairing requests", example: "pending"),
        .init(name: "devices", usage: "devices", summary: "list the paired devices", example: "devices"),
        .init(name: "approve", usage: "approve <requestId|latest>",
              summary: "approve a pairing request (latest: the newest pending one)", example: "approve latest"),
        .init(name: "reject", usage: "reject <requestId|latest>", summary: "reject a pairing request", example: "reject latest"),
        .init(name: "remove", usage: "remove <deviceId>", summary: "remove a paired device and close its sessions",
              example: "remove 56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c"),
        .init(name: "revoke", usage: "revoke <deviceId> <role>", summary: "revoke a device's token for a role",
              example: "revoke 56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c node"),
        .init(name: "invoke", usage: "invoke <nodeId|latest> <command> [paramsJSON]",
              summary: "invoke a node command and wait for its result (latest: the most recently connected node)",
              example: #"invoke latest location.get {"desiredAccuracy":"balanced"}"#),
        .init(name: "setup-code", usage: "setup-code [--profile full|limited|voice-node|node]",
              summary: "issue a setup code (single-use bootstrap token, 10 minutes; default profile full)",
              example: "setup-code --profile limited"),
        .init(name: "advance", usage: "advance <seconds>",
              summary: "move the Gateway clock forward and run what became due", example: "advance 901"),
        .init(name: "shutdown", usage: "shutdown",
              summary: "restart: send shutdown, close every connection with 1012, accept again", example: "shutdown"),
        .init(name: "approval", usage: "approval <command text> [--decisions allow-once,allow-always,deny] [--expires-in SECONDS]",
              summary: "create an exec approval", example: #"approval "rm -rf /tmp/x" --expires-in 60"#),
        .init(name: "resolve-approval", usage: "resolve-approval <id|latest> <allow-once|allow-always|deny>",
              summary: "resolve an approval from the console (another surface)", example: "resolve-approval latest deny"),
        .init(name: "question", usage: "question <prompt> [--options a,b] [--multi] [--other] [--expires-in SECONDS]",
              summary: "ask a question with one item (question id q1)",
              example: #"question "Deploy to?" --options staging,production --expires-in 900"#),
        .init(name: "answer-question", usage: "answer-question <id|latest> <json>",
              summary: #"answer a question from the console: {"q1":["a"]} or ["a"]"#,
              example: #"answer-question latest ["staging"]"#),
        .init(name: "cancel-question", usage: "cancel-question <id|latest>",
              summary: "cancel a question from the console", example: "cancel-question latest"),
        .init(name: "drain", usage: "drain <restarting|suspending|closing|off>",
              summary: "refuse new requests with UNAVAILABLE gateway-<reason> (retryAfterMs 1000) until 'drain off'",
              example: "drain restarting"),
    ] + ChatConsoleCommand.help + [
        .init(name: "help", usage: "help", summary: "show this list", example: "help"),
        .init(name: "quit", usage: "quit", summary: "stop the server", example: "quit"),
    ]
}

extension ConsoleCommand {
    /// Parses one console line.
    /// - Returns: the command, or `nil` for a blank line or a `#` comment.
    /// - Throws: `ConsoleError` for an unknown command or bad arguments.
    public static func parse(_ line: String) throws(ConsoleError) -> ConsoleCommand? {
        // `invoke` and `answer-question` end with JSON, taken verbatim from the rest of the line.
        let name = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        let limit: Int? = switch name {
        case "invoke": 4
        case "answer-question": 3
        default: nil
        }
        let tokens = try ConsoleTokenizer.split(line, limit: limit)
        guard let head = tokens.first else { return nil }
        if !head.quoted, head.text.hasPrefix("#") { return nil }
        var arguments = ConsoleArguments(command: head.text, tokens: Array(tokens.dropFirst()))
        switch head.text {
        case "pending":
            try arguments.expectNone()
            return .pending
        case "devices":
            try arguments.expectNone()
            return .devices
        case "approve", "reject":
            let reference = ConsoleReference(try arguments.exactlyOne(placeholder: "<requestId|latest>"))
            return head.text == "approve" ? .approve(reference) : .reject(reference)
        case "remove":
            return .remove(deviceId: try arguments.exactlyOne(placeholder: "<deviceId>"))
        case "revoke":
            let values = try arguments.positionals(count: 2, usage: "revoke <deviceId> <role>")
            return .revoke(deviceId: values[0], role: values[1])
        case "invoke":
            return try parseInvoke(arguments)
        case "setup-code":
            let options = try arguments.options(switches: ["--full-access"], valued: ["--profile"])
            try arguments.expectNoPositionals()
            if let name = options.values["--profile"], BootstrapProfile.named(name) == nil {
                throw ConsoleError("setup-code: unknown profile '\(name)' (known: \(BootstrapProfile.names.joined(separator: ", ")))")
            }
            return .setupCode(profile: options.values["--profile"] ?? (options.switches.contains("--full-access") ? "full" : nil))
        case "advance":
            let text = try arguments.exactlyOne(placeholder: "<seconds>")
            guard let seconds = Double(text), seconds.isFinite, (0...ConsoleArguments.maximumSeconds).contains(seconds) else {
                throw ConsoleError("advance: '\(text)' is not a number of seconds (0 to 1000000000)")
            }
            return .advance(seconds: seconds)
        case "shutdown":
            try arguments.expectNone()
            return .shutdown
        case "help":
            return .help
        case "quit", "exit":
            try arguments.expectNone()
            return .quit
        case "approval":
            return try parseApproval(&arguments)
        case "resolve-approval":
            let values = try arguments.positionals(count: 2, usage: "resolve-approval <id|latest> <decision>")
            guard let decision = ApprovalDecision(rawValue: values[1]) else {
                throw ConsoleError("resolve-approval: unknown decision '\(values[1])' (allow-once, allow-always or deny)")
            }
            return .resolveApproval(ConsoleReference(values[0]), decision: decision)
        case "question":
            return try parseQuestion(&arguments)
        case "answer-question":
            guard arguments.tokens.count >= 2 else {
                throw ConsoleError("answer-question: usage: answer-question <id|latest> <json>")
            }
            let json = arguments.tokens[1].text
            return .answerQuestion(ConsoleReference(arguments.tokens[0].text), answers: try ConsoleAnswers(parsing: json))
        case "cancel-question":
            return .cancelQuestion(ConsoleReference(try arguments.exactlyOne(placeholder: "<id|latest>")))
        case "drain":
            let text = try arguments.exactlyOne(placeholder: "<restarting|suspending|closing|off>")
            if text == "off" { return .drain(nil) }
            guard let drain = GatewayDrain(name: text) else {
                throw ConsoleError("drain: unknown drain '\(text)' (restarting, suspending, closing or off)")
            }
            return .drain(drain)
        default:
            if let chat = try ChatConsoleCommand.parse(name: head.text, arguments: &arguments) { return .chat(chat) }
            throw ConsoleError("unknown command '\(head.text)' (type 'help' for the list)")
        }
    }

    private static func parseInvoke(_ arguments: ConsoleArguments) throws(ConsoleError) -> ConsoleCommand {
        let tokens = arguments.tokens
        guard tokens.count >= 2 else { throw ConsoleError("invoke: usage: invoke <nodeId|latest> <command> [paramsJSON]") }
        var params: JSONValue?
        if tokens.count >= 3 {
            let text = tokens[2].text
            guard let value = try? JSONValue(parsing: text) else {
                throw ConsoleError("invoke: paramsJSON is not valid JSON: \(text)")
            }
            params = value
        }
        return .invoke(node: ConsoleReference(tokens[0].text), command: tokens[1].text, params: params)
    }

    private static func parseApproval(_ arguments: inout ConsoleArguments) throws(ConsoleError) -> ConsoleCommand {
        let options = try arguments.options(switches: [], valued: ["--decisions", "--expires-in"])
        let words = arguments.remainingPositionals
        guard !words.isEmpty else {
            throw ConsoleError("approval: usage: approval <command text> [--decisions …] [--expires-in SECONDS]")
        }
        var decisions = ApprovalDecision.allCases
        if let list = options.values["--decisions"] {
            decisions = []
            for item in list.split(separator: ",", omittingEmptySubsequences: true) {
                let text = item.trimmingCharacters(in: .whitespaces)
                guard let decision = ApprovalDecision(rawValue: text) else {
                    throw ConsoleError("approval: unknown decision '\(text)' (allow-once, allow-always or deny)")
                }
                decisions.append(decision)
            }
        }
        return .approval(commandText: words.joined(separator: " "), decisions: decisions,
                         expiresInSeconds: try options.seconds("--expires-in", command: "approval"))
    }

    private static func parseQuestion(_ arguments: inout ConsoleArguments) throws(ConsoleError) -> ConsoleCommand {
        let options = try arguments.options(switches: ["--multi", "--other"], valued: ["--options", "--expires-in"])
        let words = arguments.remainingPositionals
        guard !words.isEmpty else {
            throw ConsoleError("question: usage: question <prompt> [--options a,b] [--multi] [--other] [--expires-in SECONDS]")
        }
        let labels = options.values["--options"].map {
            $0.split(separator: ",", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
        } ?? []
        return .question(prompt: words.joined(separator: " "), options: labels,
                         multiSelect: options.switches.contains("--multi"), allowOther: options.switches.contains("--other"),
                         expiresInSeconds: try options.seconds("--expires-in", command: "question"))
    }
}

/// The arguments after a command name, consumed by the command's parser.
struct ConsoleArguments {
    struct Options {
        var switches: Set<String> = []
        var values: [String: String] = [:]

        func seconds(_ flag: String, command: String) throws(ConsoleError) -> Double? {
            guard let text = values[flag] else { return nil }
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= ConsoleArguments.maximumSeconds else {
                throw ConsoleError("\(command): \(flag) needs a positive number of seconds (at most 1000000000), not '\(text)'")
            }
            return seconds
        }
    }

    /// The largest duration accepted (about 31 years), so that milliseconds fit in 64 bits.
    static let maximumSeconds: Double = 1_000_000_000

    let command: String
    var tokens: [ConsoleToken]
    var remainingPositionals: [String] = []

    init(command: String, tokens: [ConsoleToken]) {
        self.command = command
        self.tokens = tokens
    }

    func expectNone() throws(ConsoleError) {
        if let extra = tokens.first { throw ConsoleError("\(command): unexpected argument '\(extra.text)'") }
    }

    func expectNoPositionals() throws(ConsoleError) {
        if let extra = remainingPositionals.first { throw ConsoleError("\(command): unexpected argument '\(extra)'") }
    }

    func exactlyOne(placeholder: String) throws(ConsoleError) -> String {
        try positionals(count: 1, usage: "\(command) \(placeholder)")[0]
    }

    func positionals(count: Int, usage: String) throws(ConsoleError) -> [String] {
        guard tokens.count == count else { throw ConsoleError("\(command): usage: \(usage)") }
        return tokens.map(\.text)
    }

    /// Separates `--flag [value]` options (only unquoted words starting with `--`) from the
    /// positional words, which are left in `remainingPositionals`.
    mutating func options(switches: Set<String>, valued: Set<String>) throws(ConsoleError) -> Options {
        var options = Options()
        var positionals: [String] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            guard !token.quoted, token.text.hasPrefix("--"), token.text.count > 2 else {
                positionals.append(token.text)
                continue
            }
            if switches.contains(token.text) {
                options.switches.insert(token.text)
            } else if valued.contains(token.text) {
                guard index < tokens.count else { throw ConsoleError("\(command): \(token.text) needs a value") }
                options.values[token.text] = tokens[index].text
                index += 1
            } else {
                let known = (switches.union(valued)).sorted()
                let hint = known.isEmpty ? "it takes no options" : "known: \(known.joined(separator: ", "))"
                throw ConsoleError("\(command): unknown option '\(token.text)' (\(hint))")
            }
        }
        remainingPositionals = positionals
        return options
    }
}
