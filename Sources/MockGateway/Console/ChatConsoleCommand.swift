import GatewayProtocol

/// The console commands of the chat surface: the scripted agent and the chat faults.
public enum ChatConsoleCommand: Sendable, Hashable {
    /// `chat-history [--session KEY]`: the stored transcript (no lag applied).
    case history(sessionKey: String)
    /// `chat-post <text> [--session KEY] [--delay SECONDS]`: post an assistant message.
    case post(text: String, sessionKey: String, delaySeconds: Double?)
    /// `chat-auto-reply <echo|off> [--delay SECONDS]`: how the agent answers user messages.
    case autoReply(echo: Bool, delaySeconds: Double?)
    /// `chat-drop-ack <after-apply|before-apply> [--keep-connection]`: lose the next ack.
    case dropAck(ChatAckDrop, keepConnection: Bool)
    /// `chat-cut-after <count>`: cut the connection after the count-th next acknowledged send.
    case cutAfter(count: Int)
    /// `chat-history-lag <rows> [--reads N]`: history leaves out the newest rows.
    case historyLag(rows: Int, reads: Int?)

    /// The command's name as typed.
    public var name: String {
        switch self {
        case .history: "chat-history"
        case .post: "chat-post"
        case .autoReply: "chat-auto-reply"
        case .dropAck: "chat-drop-ack"
        case .cutAfter: "chat-cut-after"
        case .historyLag: "chat-history-lag"
        }
    }

    /// The help rows of the chat commands, in help order.
    public static let help: [ConsoleCommandHelp] = [
        .init(name: "chat-history", usage: "chat-history [--session KEY]",
              summary: "show a chat transcript as stored (default session main)", example: "chat-history"),
        .init(name: "chat-post", usage: "chat-post <text> [--session KEY] [--delay SECONDS]",
              summary: "post an assistant message as the scripted agent", example: #"chat-post "build finished" --delay 5"#),
        .init(name: "chat-auto-reply", usage: "chat-auto-reply <echo|off> [--delay SECONDS]",
              summary: "echo every user message (default) or stay silent", example: "chat-auto-reply echo --delay 2"),
        .init(name: "chat-drop-ack", usage: "chat-drop-ack <after-apply|before-apply> [--keep-connection]",
              summary: "lose the next chat.send ack after storing it (ambiguous) or before; cuts the connection",
              example: "chat-drop-ack after-apply"),
        .init(name: "chat-cut-after", usage: "chat-cut-after <count>",
              summary: "cut the connection after the count-th next acknowledged chat.send (0 disarms)", example: "chat-cut-after 2"),
        .init(name: "chat-history-lag", usage: "chat-history-lag <rows> [--reads N]",
              summary: "chat.history leaves out the newest rows (for N reads, or until 0)", example: "chat-history-lag 2 --reads 3"),
    ]

    /// Parses a chat command line's arguments.
    /// - Returns: `nil` when `name` is not a chat command.
    static func parse(name: String, arguments: inout ConsoleArguments) throws(ConsoleError) -> ChatConsoleCommand? {
        switch name {
        case "chat-history":
            let options = try arguments.options(switches: [], valued: ["--session"])
            try arguments.expectNoPositionals()
            return .history(sessionKey: try sessionKey(options, command: name))
        case "chat-post":
            let options = try arguments.options(switches: [], valued: ["--session", "--delay"])
            let words = arguments.remainingPositionals
            guard !words.isEmpty else { throw ConsoleError("chat-post: usage: chat-post <text> [--session KEY] [--delay SECONDS]") }
            return .post(text: words.joined(separator: " "), sessionKey: try sessionKey(options, command: name),
                         delaySeconds: try options.seconds("--delay", command: name))
        case "chat-auto-reply":
            let options = try arguments.options(switches: [], valued: ["--delay"])
            guard arguments.remainingPositionals.count == 1, let mode = arguments.remainingPositionals.first,
                  mode == "echo" || mode == "off" else {
                throw ConsoleError("chat-auto-reply: usage: chat-auto-reply <echo|off> [--delay SECONDS]")
            }
            let delay = try options.seconds("--delay", command: name)
            if mode == "off", delay != nil { throw ConsoleError("chat-auto-reply: --delay only goes with echo") }
            return .autoReply(echo: mode == "echo", delaySeconds: delay)
        case "chat-drop-ack":
            let options = try arguments.options(switches: ["--keep-connection"], valued: [])
            guard arguments.remainingPositionals.count == 1, let mode = arguments.remainingPositionals.first.flatMap(ChatAckDrop.init) else {
                throw ConsoleError("chat-drop-ack: usage: chat-drop-ack <after-apply|before-apply> [--keep-connection]")
            }
            let keep = options.switches.contains("--keep-connection")
            if keep, mode == .beforeApplying { throw ConsoleError("chat-drop-ack: before-apply always cuts the connection") }
            return .dropAck(mode, keepConnection: keep)
        case "chat-cut-after":
            let text = try arguments.exactlyOne(placeholder: "<count>")
            return .cutAfter(count: try count(text, command: name, what: "count"))
        case "chat-history-lag":
            let options = try arguments.options(switches: [], valued: ["--reads"])
            guard arguments.remainingPositionals.count == 1, let rows = arguments.remainingPositionals.first else {
                throw ConsoleError("chat-history-lag: usage: chat-history-lag <rows> [--reads N]")
            }
            let reads = try options.values["--reads"].map { (text) throws(ConsoleError) in try count(text, command: name, what: "--reads") }
            return .historyLag(rows: try count(rows, command: name, what: "rows"), reads: reads)
        default:
            return nil
        }
    }

    private static func sessionKey(_ options: ConsoleArguments.Options, command: String) throws(ConsoleError) -> String {
        guard let key = options.values["--session"] else { return Gateway.defaultChatSessionKey }
        guard !key.isEmpty else { throw ConsoleError("\(command): --session needs a non-empty key") }
        return key
    }

    private static func count(_ text: String, command: String, what: String) throws(ConsoleError) -> Int {
        guard let value = Int(text), (0...1_000_000).contains(value) else {
            throw ConsoleError("\(command): \(what) must be a whole number from 0 to 1000000, not '\(text)'")
        }
        return value
    }

    /// Runs the command on `gateway`.
    func execute(on gateway: Gateway) async -> ChatConsoleResult {
        func duration(_ seconds: Double?) -> Duration { .milliseconds(Int64(((seconds ?? 0) * 1000).rounded())) }
        switch self {
        case .history(let key):
            return .history(sessionKey: key, messages: await gateway.chatMessages(sessionKey: key))
        case .post(let text, let key, let delay):
            await gateway.postAssistantMessage(text, sessionKey: key, after: duration(delay))
            return .armed("assistant message \(delay.map { "posted in \(ConsoleText.number($0)) s" } ?? "posted") to \(key)")
        case .autoReply(let echo, let delay):
            await gateway.setChatAutoReply(echo ? .echo(delay: duration(delay)) : .off)
            return .armed(echo ? "the agent echoes user messages after \(ConsoleText.number(delay ?? 0)) s" : "the agent stays silent")
        case .dropAck(let drop, let keep):
            await gateway.dropNextChatSendAck(drop, cutConnection: !keep)
            return .armed(drop == .afterApplying
                ? "the next chat.send is stored but its ack is dropped\(keep ? "" : " and the connection cut")"
                : "the next chat.send is lost before it is stored and the connection cut")
        case .cutAfter(let count):
            await gateway.cutConnectionAfterChatSends(count)
            return .armed(count == 0 ? "no mid-flush cut" : "the connection is cut after the next \(count) acknowledged chat.send")
        case .historyLag(let rows, let reads):
            await gateway.lagChatHistory(omitNewest: rows, forReads: reads)
            return .armed(rows == 0 ? "chat.history is current"
                : "chat.history leaves out the newest \(rows) rows" + (reads.map { " for \($0) reads" } ?? " until cleared"))
        }
    }
}

/// What a chat console command produced.
public enum ChatConsoleResult: Sendable, Hashable {
    /// `chat-history`.
    case history(sessionKey: String, messages: [ChatMessage])
    /// A command that changed the agent or armed a fault, with a one-line summary.
    case armed(String)

    /// The result as a JSON object.
    public var json: JSONValue {
        switch self {
        case .history(let key, let messages):
            return ["sessionKey": .string(key), "messages": .array(messages.map(\.json))]
        case .armed(let summary):
            return ["summary": .string(summary)]
        }
    }

    /// The result as text.
    public var text: String {
        switch self {
        case .history(let key, let messages):
            guard !messages.isEmpty else { return "no messages in \(key)" }
            return messages.map { message in
                "\(message.seq)  \(message.role.rawValue)  \(ConsoleText.quoteIfNeeded(message.text))"
                    + (message.idempotencyKey.map { "  key \($0)" } ?? "")
            }.joined(separator: "\n")
        case .armed(let summary):
            return summary
        }
    }
}
