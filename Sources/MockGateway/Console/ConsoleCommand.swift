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
    /// `nodes`: the connected nodes.
    case nodes
    /// `connections`: the open connections.
    case connections
    /// `status`: one line about the Gateway: counts and armed faults.
    case status
    /// `approve [requestId|latest]`: approve a pairing request (latest: the newest pending one;
    /// nothing: the only pending one).
    case approve(ConsoleReference?)
    /// `reject [requestId|latest]`: reject a pairing request.
    case reject(ConsoleReference?)
    /// `remove <deviceId>`: remove a paired device.
    case remove(deviceId: String)
    /// `revoke <deviceId> <role>`: revoke a device's token for a role.
    case revoke(deviceId: String, role: String)
    /// `invoke <nodeId|latest> <command> [paramsJSON]`: invoke a node command and wait for the result.
    case invoke(node: ConsoleReference, command: String, params: JSONValue?)
    /// `setup-code [--profile full|limited|voice-node|node] [--qr-png FILE]`: issue a setup code
    /// (`nil`: `full`; `full` is lowered to `limited` for plaintext LAN `ws://`, and plain `ws://`
    /// off the private networks gets no code; `--full-access` is the older spelling of
    /// `--profile full`), with its QR code written to FILE when given.
    case setupCode(profile: String?, qrPNG: String?)
    /// `advance <seconds>`: move the Gateway clock forward.
    case advance(seconds: Double)
    /// `shutdown` / `restart`: a restart (`shutdown` event, close 1012, then accepting again).
    case shutdown
    /// `restart --stay-down [--expected-ms N]`: the first half of a restart (`shutdown` event
    /// with `restartExpectedMs`, close 1012); new connections are dropped until `resume`.
    case restartStayingDown(expectedMs: Int)
    /// `resume`: accept connections again after `restart --stay-down`.
    case resume
    /// `help [command]`: the command list, or one command in full.
    case help(String?)
    /// `quit`: stop the server.
    case quit
    /// `approval <command text> [--decisions …] [--expires-in SECONDS]`: create an exec approval.
    case approval(commandText: String, decisions: [ApprovalDecision], expiresInSeconds: Double?)
    /// `resolve-approval <id|latest> <decision>`: resolve an approval as the console surface.
    case resolveApproval(ConsoleReference, decision: ApprovalDecision)
    /// `expire-approval <id|latest>`: expire a pending approval now.
    case expireApproval(ConsoleReference)
    /// `race-approval <id|latest> <decision> [--client-first] [--surface NAME]`: another surface
    /// answers when the client resolves.
    case raceApproval(ConsoleReference, decision: ApprovalDecision, clientFirst: Bool, surface: String)
    /// `question <prompt> [--options a,b] [--multi] [--other] [--expires-in SECONDS]`: ask a question.
    case question(prompt: String, options: [String], multiSelect: Bool, allowOther: Bool, expiresInSeconds: Double?)
    /// `answer-question <id|latest> <json>`: answer a question as the console surface.
    case answerQuestion(ConsoleReference, answers: ConsoleAnswers)
    /// `cancel-question <id|latest>`: cancel a question as the console surface.
    case cancelQuestion(ConsoleReference)
    /// A `chat-*` command: the scripted chat agent and the chat faults.
    case chat(ChatConsoleCommand)
    /// `expire-question <id|latest>`: expire a pending question now.
    case expireQuestion(ConsoleReference)
    /// `race-question <id|latest> <answersJSON> [--client-first] [--surface NAME]`: another
    /// surface answers when the client resolves the question.
    case raceQuestion(ConsoleReference, answers: ConsoleAnswers, clientFirst: Bool, surface: String)
    /// `drop-next <method> [--keep-connection]`: the next response to `method` is lost (and the
    /// connection cut, unless kept).
    case dropNext(method: String, keepConnection: Bool)
    /// `delay <milliseconds|off>`: delay every response.
    case delay(milliseconds: Int?)
    /// `stop-ticks`: stop sending `tick`.
    case stopTicks
    /// `resume-ticks`: send `tick` again.
    case resumeTicks
    /// `skip-seq <N>`: one gap of N numbers in every connection's `seq`.
    case skipSeq(Int)
    /// `starting on|off`: answer connects with `UNAVAILABLE` / 1013 while on.
    case starting(Bool)
    /// `reset <connectionId|latest>`: drop a connection without a close frame (TCP reset).
    case reset(ConsoleReference)
    /// `close <connectionId|latest> <code> [reason]`: close a connection with a close frame.
    case close(ConsoleReference, code: Int, reason: String)
    /// `send-binary <N>`: send the next N event frames as binary messages.
    case sendBinary(Int)
    /// `fragment <N>`: send the next N event frames fragmented, with pings between fragments.
    case fragment(Int)
    /// `presence-reply <handled> <reason>`: the reply to the next `node.presence.alive`.
    case presenceReply(handled: Bool, reason: String)
    /// `event <connectionId|latest|all> <name> [payloadJSON]`: send an event of your own.
    case event(ConsoleReference?, name: String, payload: JSONValue?)
    /// `drain <restarting|suspending|closing|off>`: start or end a drain (``GatewayDrain``).
    case drain(GatewayDrain?)
    /// `wake <nodeId|latest> [--reason TEXT]`: send a silent wake push through the node's push
    /// registration (``Gateway/wakeNode(nodeId:reason:)``); `nil` reason: upstream's default.
    case wake(ConsoleReference, reason: String?)
    /// `change-auth <none|token:SECRET|password:SECRET>`: change the shared secret of the running
    /// Gateway (``Gateway/changeSharedSecret(_:)``); sessions that depend on the old one are
    /// closed with 4001 "gateway auth changed".
    case changeAuth(GatewayAuthMode)

    /// The command's name as typed.
    public var name: String {
        switch self {
        case .pending: "pending"
        case .devices: "devices"
        case .nodes: "nodes"
        case .connections: "connections"
        case .status: "status"
        case .approve: "approve"
        case .reject: "reject"
        case .remove: "remove"
        case .revoke: "revoke"
        case .invoke: "invoke"
        case .setupCode: "setup-code"
        case .advance: "advance"
        case .shutdown: "restart"
        case .restartStayingDown: "restart"
        case .resume: "resume"
        case .help: "help"
        case .quit: "quit"
        case .approval: "approval"
        case .resolveApproval: "resolve-approval"
        case .expireApproval: "expire-approval"
        case .raceApproval: "race-approval"
        case .question: "question"
        case .answerQuestion: "answer-question"
        case .cancelQuestion: "cancel-question"
        case .chat(let command): command.name
        case .expireQuestion: "expire-question"
        case .raceQuestion: "race-question"
        case .dropNext: "drop-next"
        case .delay: "delay"
        case .stopTicks: "stop-ticks"
        case .resumeTicks: "resume-ticks"
        case .skipSeq: "skip-seq"
        case .starting: "starting"
        case .reset: "reset"
        case .close: "close"
        case .sendBinary: "send-binary"
        case .fragment: "fragment"
        case .presenceReply: "presence-reply"
        case .event: "event"
        case .drain: "drain"
        case .wake: "wake"
        case .changeAuth: "change-auth"
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
        .init(name: "status", usage: "status", summary: "one line: devices, nodes, pending requests, connections, armed faults",
              example: "status"),
        .init(name: "pending", usage: "pending", summary: "list the pending pairing requests, one line each", example: "pending"),
        .init(name: "devices", usage: "devices", summary: "list the paired devices, one line each", example: "devices"),
        .init(name: "nodes", usage: "nodes", summary: "list the connected nodes, one line each", example: "nodes"),
        .init(name: "connections", usage: "connections", summary: "list the open connections, one line each",
              example: "connections"),
        .init(name: "approve", usage: "approve [requestId|latest]",
              summary: "approve a pairing request (latest: the newest pending one; nothing: the only one)", example: "approve"),
        .init(name: "reject", usage: "reject [requestId|latest]", summary: "reject a pairing request", example: "reject latest"),
        .init(name: "remove", usage: "remove <deviceId|latest>", summary: "remove a paired device and close its sessions",
              example: "remove 56475aa75463"),
        .init(name: "revoke", usage: "revoke <deviceId|latest> <role>", summary: "revoke a device's token for a role",
              example: "revoke 56475aa75463 node"),
        .init(name: "invoke", usage: "invoke <nodeId|latest> <command> [paramsJSON]",
              summary: "invoke a node command and wait for its result (latest: the most recently connected node)",
              example: #"invoke latest location.get {"desiredAccuracy":"balanced"}"#),
        .init(name: "setup-code", usage: "setup-code [--profile full|limited|voice-node|node] [--qr-png FILE]",
              summary: "issue a setup code (single-use bootstrap token, 10 minutes; default profile full, lowered to limited on plain ws:// to a LAN), shown as a QR code",
              example: "setup-code --profile limited"),
        .init(name: "advance", usage: "advance <seconds>",
              summary: "move the Gateway clock forward and run what became due", example: "advance 901"),
        .init(name: "restart", usage: "restart [--stay-down [--expected-ms N]]",
              summary: "restart: send shutdown, close every connection with 1012, accept again (also: shutdown); --stay-down: stay down until resume",
              example: "restart --stay-down --expected-ms 5000"),
        .init(name: "resume", usage: "resume", summary: "accept connections again after restart --stay-down", example: "resume"),
        .init(name: "approval", usage: "approval <command text> [--decisions allow-once,allow-always,deny] [--expires-in SECONDS]",
              summary: "create an exec approval", example: #"approval "rm -rf /tmp/x" --expires-in 60"#),
        .init(name: "resolve-approval", usage: "resolve-approval <id|latest> <allow-once|allow-always|deny>",
              summary: "resolve an approval from the console (another surface)", example: "resolve-approval latest deny"),
        .init(name: "expire-approval", usage: "expire-approval <id|latest>", summary: "expire a pending approval now",
              example: "expire-approval latest"),
        .init(name: "race-approval", usage: "race-approval <id|latest> <decision> [--client-first] [--surface NAME]",
              summary: "when the client resolves the approval, another surface answers first (or right after)",
              example: "race-approval latest deny"),
        .init(name: "question", usage: "question <prompt> [--options a,b] [--multi] [--other] [--expires-in SECONDS]",
              summary: "ask a question with one item (question id q1)",
              example: #"question "Deploy to?" --options staging,production --expires-in 900"#),
        .init(name: "answer-question", usage: "answer-question <id|latest> <json>",
              summary: #"answer a question from the console: {"q1":["a"]} or ["a"]"#,
              example: #"answer-question latest ["staging"]"#),
        .init(name: "cancel-question", usage: "cancel-question <id|latest>",
              summary: "cancel a question from the console", example: "cancel-question latest"),
        .init(name: "expire-question", usage: "expire-question <id|latest>", summary: "expire a pending question now",
              example: "expire-question latest"),
        .init(name: "race-question", usage: "race-question <id|latest> <answersJSON> [--client-first] [--surface NAME]",
              summary: #"when the client resolves the question, another surface answers first (or right after); answers as in answer-question, without spaces"#,
              example: #"race-question latest ["Production"]"#),
        .init(name: "drop-next", usage: "drop-next <method> [--keep-connection]",
              summary: "fault: the next response to METHOD is lost (the request still applies), then the connection is cut",
              example: "drop-next approval.resolve"),
        .init(name: "delay", usage: "delay <milliseconds|off>", summary: "fault: delay every response",
              example: "delay 2000"),
        .init(name: "stop-ticks", usage: "stop-ticks", summary: "fault: stop sending tick (client watchdogs)",
              example: "stop-ticks"),
        .init(name: "resume-ticks", usage: "resume-ticks", summary: "send tick again", example: "resume-ticks"),
        .init(name: "skip-seq", usage: "skip-seq <N>", summary: "fault: one gap of N numbers in every connection's seq",
              example: "skip-seq 3"),
        .init(name: "starting", usage: "starting on|off", summary: "fault: answer connects with UNAVAILABLE and close 1013",
              example: "starting on"),
        .init(name: "reset", usage: "reset <connectionId|latest>", summary: "fault: drop a connection without a close frame",
              example: "reset latest"),
        .init(name: "close", usage: "close <connectionId|latest> <code> [reason]", summary: "close a connection with CODE",
              example: #"close latest 4000 "bye""#),
        .init(name: "send-binary", usage: "send-binary <N>", summary: "fault: send the next N event frames as binary messages",
              example: "send-binary 1"),
        .init(name: "fragment", usage: "fragment <N>",
              summary: "fault: send the next N event frames in three fragments with pings between them", example: "fragment 1"),
        .init(name: "presence-reply", usage: "presence-reply <true|false> <reason>",
              summary: "fault: the reply to the next node.presence.alive", example: "presence-reply false persist_failed"),
        .init(name: "event", usage: "event <connectionId|latest|all> <name> [payloadJSON]",
              summary: "send an event of your own (all: every session allowed to see it)",
              example: #"event latest voicewake.changed {"triggers":["hey"]}"#),
        .init(name: "drain", usage: "drain <restarting|suspending|closing|off>",
              summary: "refuse new requests with UNAVAILABLE gateway-<reason> (retryAfterMs 1000) until 'drain off'",
              example: "drain restarting"),
        .init(name: "wake", usage: "wake <nodeId|latest> [--reason TEXT]",
              summary: "send a silent wake push (background, priority 5) through the node's push registration (latest: the node that registered last); no real APNs is contacted",
              example: "wake latest"),
        .init(name: "change-auth", usage: "change-auth <none|token:SECRET|password:SECRET>",
              summary: "change the shared secret; sessions of the old one (and device tokens bound to it) are closed with 4001",
              example: "change-auth token:new-secret"),
    ] + ChatConsoleCommand.help + [
        .init(name: "help", usage: "help [command]", summary: "show this list, or one command in full", example: "help drop-next"),
        .init(name: "quit", usage: "quit", summary: "stop the server", example: "quit"),
    ]

    /// The entry of `name` (`shutdown` and `exit` are the entries of `restart` and `quit`).
    public static func named(_ name: String) -> ConsoleCommandHelp? {
        let canonical = ["shutdown": "restart", "exit": "quit"][name] ?? name
        return all.first { $0.name == canonical }
    }
}

extension ConsoleCommand {
    /// Parses one console line.
    /// - Returns: the command, or `nil` for a blank line or a `#` comment.
    /// - Throws: `ConsoleError` for an unknown command or bad arguments.
    public static func parse(_ line: String) throws(ConsoleError) -> ConsoleCommand? {
        // `invoke`, `answer-question` and `event` end with JSON, taken verbatim from the rest of the line.
        let name = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        let limit: Int? = switch name {
        case "invoke", "event": 4
        case "answer-question": 3
        default: nil
        }
        let tokens = try ConsoleTokenizer.split(line, limit: limit)
        guard let head = tokens.first else { return nil }
        if !head.quoted, head.text.hasPrefix("#") { return nil }
        var arguments = ConsoleArguments(command: head.text, tokens: Array(tokens.dropFirst()))
        switch head.text {
        case "restart" where !arguments.tokens.isEmpty:
            let options = try arguments.options(switches: ["--stay-down"], valued: ["--expected-ms"])
            guard arguments.remainingPositionals.isEmpty, options.switches.contains("--stay-down") else {
                throw ConsoleError("restart: usage: restart [--stay-down [--expected-ms N]] (a restart without --stay-down comes straight back)")
            }
            let expected = options.values["--expected-ms"] ?? "1000"
            guard let expectedMs = Int(expected), expectedMs >= 0 else {
                throw ConsoleError("restart: --expected-ms must be a number of milliseconds, not '\(expected)'")
            }
            return .restartStayingDown(expectedMs: expectedMs)
        case "pending", "devices", "nodes", "connections", "status", "shutdown", "restart", "stop-ticks", "resume-ticks", "resume":
            try arguments.expectNone()
            let simple: [String: ConsoleCommand] = [
                "pending": .pending, "devices": .devices, "nodes": .nodes, "connections": .connections, "status": .status,
                "shutdown": .shutdown, "restart": .shutdown, "stop-ticks": .stopTicks, "resume-ticks": .resumeTicks,
                "resume": .resume,
            ]
            return simple[head.text]
        case "approve", "reject":
            guard arguments.tokens.count <= 1 else {
                throw ConsoleError("\(head.text): usage: \(head.text) [requestId|latest]")
            }
            let reference = arguments.tokens.first.map { ConsoleReference($0.text) }
            return head.text == "approve" ? .approve(reference) : .reject(reference)
        case "remove":
            return .remove(deviceId: try arguments.exactlyOne(placeholder: "<deviceId|latest>"))
        case "revoke":
            let values = try arguments.positionals(count: 2, usage: "revoke <deviceId|latest> <role>")
            return .revoke(deviceId: values[0], role: values[1])
        case "invoke":
            return try parseInvoke(arguments)
        case "setup-code":
            let options = try arguments.options(switches: ["--full-access"], valued: ["--profile", "--qr-png"])
            try arguments.expectNoPositionals()
            var profile = options.values["--profile"]
            if let name = profile, BootstrapProfile.named(name) == nil {
                throw ConsoleError("setup-code: unknown profile '\(name)' (known: \(BootstrapProfile.names.joined(separator: ", ")))")
            }
            if options.switches.contains("--full-access") {
                guard profile == nil || profile == "full" else {
                    throw ConsoleError("setup-code: --full-access is --profile full; it cannot go with --profile \(profile ?? "")")
                }
                profile = "full"
            }
            return .setupCode(profile: profile, qrPNG: options.values["--qr-png"])
        case "advance":
            let text = try arguments.exactlyOne(placeholder: "<seconds>")
            guard let seconds = Double(text), seconds.isFinite, (0...ConsoleArguments.maximumSeconds).contains(seconds) else {
                throw ConsoleError("advance: '\(text)' is not a number of seconds (0 to 1000000000)")
            }
            return .advance(seconds: seconds)
        case "help":
            guard arguments.tokens.count <= 1 else { throw ConsoleError("help: usage: help [command]") }
            return .help(arguments.tokens.first?.text)
        case "quit", "exit":
            try arguments.expectNone()
            return .quit
        case "approval":
            return try parseApproval(&arguments)
        case "resolve-approval":
            let values = try arguments.positionals(count: 2, usage: "resolve-approval <id|latest> <decision>")
            return .resolveApproval(ConsoleReference(values[0]), decision: try decision(values[1], command: "resolve-approval"))
        case "expire-approval":
            return .expireApproval(ConsoleReference(try arguments.exactlyOne(placeholder: "<id|latest>")))
        case "race-approval":
            let options = try arguments.options(switches: ["--client-first"], valued: ["--surface"])
            let values = arguments.remainingPositionals
            guard values.count == 2 else {
                throw ConsoleError("race-approval: usage: race-approval <id|latest> <decision> [--client-first] [--surface NAME]")
            }
            return .raceApproval(ConsoleReference(values[0]), decision: try decision(values[1], command: "race-approval"),
                                 clientFirst: options.switches.contains("--client-first"), surface: options.values["--surface"] ?? "watch")
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
        case "expire-question":
            return .expireQuestion(ConsoleReference(try arguments.exactlyOne(placeholder: "<id|latest>")))
        case "race-question":
            let options = try arguments.options(switches: ["--client-first"], valued: ["--surface"])
            let values = arguments.remainingPositionals
            guard values.count == 2 else {
                throw ConsoleError("race-question: usage: race-question <id|latest> <answersJSON> [--client-first] [--surface NAME]")
            }
            return .raceQuestion(ConsoleReference(values[0]), answers: try ConsoleAnswers(parsing: values[1]),
                                 clientFirst: options.switches.contains("--client-first"), surface: options.values["--surface"] ?? "watch")
        case "drop-next":
            let options = try arguments.options(switches: ["--keep-connection"], valued: [])
            guard arguments.remainingPositionals.count == 1 else {
                throw ConsoleError("drop-next: usage: drop-next <method> [--keep-connection]")
            }
            return .dropNext(method: arguments.remainingPositionals[0], keepConnection: options.switches.contains("--keep-connection"))
        case "delay":
            let text = try arguments.exactlyOne(placeholder: "<milliseconds|off>")
            if text == "off" || text == "0" { return .delay(milliseconds: nil) }
            guard let value = Int(text), (1...3_600_000).contains(value) else {
                throw ConsoleError("delay: '\(text)' is not a number of milliseconds (1 to 3600000) or off")
            }
            return .delay(milliseconds: value)
        case "skip-seq", "send-binary", "fragment":
            let text = try arguments.exactlyOne(placeholder: "<N>")
            guard let count = Int(text), (1...1_000_000).contains(count) else {
                throw ConsoleError("\(head.text): '\(text)' is not a count from 1 to 1000000")
            }
            return head.text == "skip-seq" ? .skipSeq(count) : head.text == "send-binary" ? .sendBinary(count) : .fragment(count)
        case "starting":
            let text = try arguments.exactlyOne(placeholder: "on|off")
            guard let on = ["on": true, "off": false, "true": true, "false": false][text.lowercased()] else {
                throw ConsoleError("starting: expected on or off, not '\(text)'")
            }
            return .starting(on)
        case "reset":
            return .reset(ConsoleReference(try arguments.exactlyOne(placeholder: "<connectionId|latest>")))
        case "close":
            guard (2...3).contains(arguments.tokens.count) else {
                throw ConsoleError("close: usage: close <connectionId|latest> <code> [reason]")
            }
            let text = arguments.tokens[1].text
            guard let code = Int(text), (1000...4999).contains(code) else {
                throw ConsoleError("close: '\(text)' is not a close code (1000 to 4999)")
            }
            return .close(ConsoleReference(arguments.tokens[0].text), code: code, reason: arguments.tokens.count == 3 ? arguments.tokens[2].text : "")
        case "presence-reply":
            let values = try arguments.positionals(count: 2, usage: "presence-reply <true|false> <reason>")
            guard let handled = Bool(values[0]) else {
                throw ConsoleError("presence-reply: handled must be true or false, not '\(values[0])'")
            }
            return .presenceReply(handled: handled, reason: values[1])
        case "event":
            let tokens = arguments.tokens
            guard tokens.count >= 2 else { throw ConsoleError("event: usage: event <connectionId|latest|all> <name> [payloadJSON]") }
            var payload: JSONValue?
            if tokens.count >= 3 {
                guard let value = try? JSONValue(parsing: tokens[2].text) else {
                    throw ConsoleError("event: payloadJSON is not valid JSON: \(tokens[2].text)")
                }
                payload = value
            }
            let target = tokens[0].text == "all" ? nil : ConsoleReference(tokens[0].text)
            return .event(target, name: tokens[1].text, payload: payload)
        case "wake":
            let options = try arguments.options(switches: [], valued: ["--reason"])
            guard arguments.remainingPositionals.count == 1 else {
                throw ConsoleError("wake: usage: wake <nodeId|latest> [--reason TEXT]")
            }
            if let reason = options.values["--reason"], reason.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ConsoleError("wake: --reason needs a non-empty text")
            }
            return .wake(ConsoleReference(arguments.remainingPositionals[0]), reason: options.values["--reason"])
        case "drain":
            let text = try arguments.exactlyOne(placeholder: "<restarting|suspending|closing|off>")
            if text == "off" { return .drain(nil) }
            guard let drain = GatewayDrain(name: text) else {
                throw ConsoleError("drain: unknown drain '\(text)' (restarting, suspending, closing or off)")
            }
            return .drain(drain)
        case "change-auth":
            // The value is a secret: an error never repeats it.
            guard arguments.tokens.count == 1, let mode = GatewayAuthMode(specification: arguments.tokens[0].text) else {
                throw ConsoleError("change-auth: usage: change-auth <none|token:SECRET|password:SECRET>")
            }
            return .changeAuth(mode)
        default:
            if let chat = try ChatConsoleCommand.parse(name: head.text, arguments: &arguments) { return .chat(chat) }
            let known = ConsoleCommandHelp.all.map(\.name).filter { $0.hasPrefix(head.text.prefix(3)) }
            let hint = known.isEmpty ? "" : " (did you mean \(known.joined(separator: ", "))?)"
            throw ConsoleError("unknown command '\(head.text)'\(hint) (type 'help' for the list)")
        }
    }

    private static func decision(_ text: String, command: String) throws(ConsoleError) -> ApprovalDecision {
        guard let decision = ApprovalDecision(rawValue: text) else {
            throw ConsoleError("\(command): unknown decision '\(text)' (allow-once, allow-always or deny)")
        }
        return decision
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
