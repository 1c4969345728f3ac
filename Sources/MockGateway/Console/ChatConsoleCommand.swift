import ArgumentParsing
import GatewayProtocol

extension ConsoleCommandSpec {
    /// The chat surface: the scripted agent and the chat faults.
    static let chatCommands: [ConsoleCommandSpec] = [
        ConsoleCommandSpec(
            "chat-history", options: [sessionOption],
            summary: "show a chat transcript as stored (default session main)", example: "chat-history"
        ) { command, console in
            let key = sessionKey(command)
            return .chat(.history(sessionKey: key, messages: await console.gateway.chatMessages(sessionKey: key)))
        },
        ConsoleCommandSpec(
            "chat-post", arguments: [PositionalSpec("text", help: "the message", variadic: true)],
            options: [sessionOption, .option("--delay", ConsoleSeconds.self, help: "post it this many seconds later"),
                      .option("--blocks", JSONArgument.self, help: "content blocks after the text, a JSON array of objects")],
            summary: "post an assistant message as the scripted agent", example: #"chat-post "build finished" --delay 5"#,
            check: { command throws(ConsoleError) in
                if let value = command.option("--blocks", as: JSONArgument.self)?.value,
                   value.arrayValue?.allSatisfy({ $0.objectValue != nil }) != true {
                    throw ConsoleError("chat-post: --blocks expects a JSON array of objects")
                }
            }
        ) { command, console in
            let key = sessionKey(command)
            let delay = command.option("--delay", as: ConsoleSeconds.self)
            let blocks = command.option("--blocks", as: JSONArgument.self)?.value.arrayValue ?? []
            await console.gateway.postAssistantMessage(command.words(from: 0), sessionKey: key, after: delay?.duration ?? .zero,
                                                       blocks: blocks)
            return .chat(.armed("assistant message \(delay.map { "posted in \(ConsoleText.number($0.seconds)) s" } ?? "posted") to \(key)"))
        },
        ConsoleCommandSpec(
            "chat-auto-reply", arguments: [PositionalSpec(AutoReplyMode.placeholder, AutoReplyMode.self, help: "echo or off")],
            options: [.option("--delay", ConsoleSeconds.self, help: "echo this many seconds later")],
            summary: "echo every user message (default) or stay silent", example: "chat-auto-reply echo --delay 2",
            check: { command throws(ConsoleError) in
                if command.argument(0, as: AutoReplyMode.self)?.echo == false, command.isSet("--delay") {
                    throw ConsoleError("chat-auto-reply: --delay only goes with echo")
                }
            }
        ) { command, console in
            let echo = try command.required(0, as: AutoReplyMode.self).echo
            let delay = command.option("--delay", as: ConsoleSeconds.self)
            await console.gateway.setChatAutoReply(echo ? .echo(delay: delay?.duration ?? .zero) : .off)
            return .chat(.armed(echo ? "the agent echoes user messages after \(ConsoleText.number(delay?.seconds ?? 0)) s"
                : "the agent stays silent"))
        },
        ConsoleCommandSpec(
            "chat-drop-ack", arguments: [PositionalSpec(ChatAckDrop.placeholder, ChatAckDrop.self, help: "when the ack is lost")],
            options: [.flag("--keep-connection", help: "do not cut the connection (after-apply only)")],
            summary: "lose the next chat.send ack after storing it (ambiguous) or before; cuts the connection",
            example: "chat-drop-ack after-apply",
            check: { command throws(ConsoleError) in
                if command.argument(0, as: ChatAckDrop.self) == .beforeApplying, command.isSet("--keep-connection") {
                    throw ConsoleError("chat-drop-ack: before-apply always cuts the connection")
                }
            }
        ) { command, console in
            let drop = try command.required(0, as: ChatAckDrop.self)
            let keep = command.isSet("--keep-connection")
            await console.gateway.dropNextChatSendAck(drop, cutConnection: !keep)
            return .chat(.armed(drop == .afterApplying
                ? "the next chat.send is stored but its ack is dropped\(keep ? "" : " and the connection cut")"
                : "the next chat.send is lost before it is stored and the connection cut"))
        },
        ConsoleCommandSpec(
            "chat-cut-after", arguments: [PositionalSpec("count", WholeNumber.self, help: "acknowledged sends before the cut")],
            summary: "cut the connection after the count-th next acknowledged chat.send (0 disarms)", example: "chat-cut-after 2"
        ) { command, console in
            let count = try command.required(0, as: WholeNumber.self).value
            await console.gateway.cutConnectionAfterChatSends(count)
            return .chat(.armed(count == 0 ? "no mid-flush cut" : "the connection is cut after the next \(count) acknowledged chat.send"))
        },
        ConsoleCommandSpec(
            "chat-history-lag", arguments: [PositionalSpec("rows", WholeNumber.self, help: "rows left out")],
            options: [.option("--reads", WholeNumber.self, help: "for this many reads (default: until 0)")],
            summary: "chat.history leaves out the newest rows (for N reads, or until 0)", example: "chat-history-lag 2 --reads 3"
        ) { command, console in
            let rows = try command.required(0, as: WholeNumber.self).value
            let reads = command.option("--reads", as: WholeNumber.self)?.value
            await console.gateway.lagChatHistory(omitNewest: rows, forReads: reads)
            return .chat(.armed(rows == 0 ? "chat.history is current"
                : "chat.history leaves out the newest \(rows) rows" + (reads.map { " for \($0) reads" } ?? " until cleared")))
        },
        sessionAction("chat-hold", summary: "the agent starts a run that holds later sends queued (until chat-release)",
                      act: { await $0.holdChatRun(sessionKey: $1) }, armed: { "a run in \($0) holds later sends queued" }),
        ConsoleCommandSpec(
            "chat-release", options: [sessionOption, .flag("--collect", help: "fold every queued input into one run")],
            summary: "end the held run; queued inputs take their turns (or one collected run)", example: "chat-release --collect"
        ) { command, console in
            let key = sessionKey(command)
            let collect = command.isSet("--collect")
            await console.gateway.releaseChatRun(sessionKey: key, collect: collect)
            return .chat(.armed("the run in \(key) ended" + (collect ? "; queued inputs collected into one run" : "")))
        },
        sessionAction("chat-interrupt", summary: "interrupt the held run; its queued inputs become interrupted",
                      act: { await $0.interruptChatRun(sessionKey: $1) }, armed: { "the run in \($0) was interrupted" }),
        sessionAction("chat-cancel-queued", summary: "cancel the queued inputs of a session",
                      act: { await $0.cancelQueuedChatInputs(sessionKey: $1) }, armed: { "the queued inputs in \($0) were cancelled" }),
        ConsoleCommandSpec(
            "chat-compact", options: [sessionOption, .option("--keep", WholeNumber.self, help: "rows kept (default \(ChatStore.defaultCompactionKeep))")],
            summary: "compact a session: older rows leave the visible path, cursors reset", example: "chat-compact --keep 1"
        ) { command, console in
            let key = sessionKey(command)
            let keep = command.option("--keep", as: WholeNumber.self)?.value ?? ChatStore.defaultCompactionKeep
            await console.gateway.compactChatSession(sessionKey: key, keep: keep)
            return .chat(.armed("\(key) compacted to its newest \(keep) rows"))
        },
        ConsoleCommandSpec(
            "session-delete", arguments: [PositionalSpec("key", NonEmptyText.self, help: "the session key")],
            summary: "delete a session as another device would (sessions.changed reason delete)", example: "session-delete research"
        ) { command, console in
            let key = try command.required(0, as: NonEmptyText.self).text
            let deleted = try await console.gateway.deleteChatSession(sessionKey: key)
            return .chat(.armed(deleted ? "session \(key) deleted" : "no session \(key): nothing deleted"))
        },
        ConsoleCommandSpec(
            "session-groups", arguments: [PositionalSpec("namesJSON", JSONArgument.self, help: "the new catalog, a JSON array of group names",
                                                          optional: true)],
            restOfLine: true,
            summary: "show the session group catalog, or replace it as another device would (sessions.changed reason groups)",
            example: #"session-groups ["Work","Home"]"#
        ) { command, console in
            guard let value = command.argument(0, as: JSONArgument.self)?.value else {
                return .chat(.armed("session groups: \(JSONValue.array(await console.gateway.sessionGroups().map(JSONValue.string)).jsonString)"))
            }
            guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                throw ConsoleError("session-groups: expected a JSON array of strings")
            }
            let groups = try await console.gateway.putSessionGroups(items.compactMap(\.stringValue))
            return .chat(.armed("session groups: \(JSONValue.array(groups.map(JSONValue.string)).jsonString)"))
        },
        ConsoleCommandSpec(
            "session-create", arguments: [PositionalSpec("paramsJSON", JSONArgument.self, help: "sessions.create params, a JSON object",
                                                          optional: true)],
            restOfLine: true,
            summary: "create a session as another device would (sessions.changed reason create; a message starts a run)",
            example: #"session-create {"key":"research","message":"hello"}"#
        ) { command, console in
            let params = command.argument(0, as: JSONArgument.self)?.value ?? [:]
            guard params.objectValue != nil else { throw ConsoleError("session-create: expected a JSON object of sessions.create params") }
            let answer = try await console.gateway.createChatSession(params)
            let key = answer["key"]?.stringValue ?? "?"
            let run = answer["runStarted"] == .bool(true) ? ", run \(answer["runId"]?.stringValue ?? "?") started" : ""
            return .chat(.armed("session \(key) created\(run)"))
        },
        ConsoleCommandSpec(
            "session-rewind", arguments: [PositionalSpec("key", NonEmptyText.self, help: "the session key"),
                                          PositionalSpec("entryId", NonEmptyText.self, help: "a user message on the active path")],
            summary: "rewind a session to before a user message as another device would (the old tip stays a branch)",
            example: "session-rewind main msg-3"
        ) { command, console in
            let key = try command.required(0, as: NonEmptyText.self).text
            let entryId = try command.required(1, as: NonEmptyText.self).text
            let editorText = try await console.gateway.rewindChatSession(sessionKey: key, toBefore: entryId)
            return .chat(.armed("session \(key) rewound to before \(entryId)" + (editorText.map { "; editor text \(JSONValue.string($0).jsonString)" } ?? "")))
        },
        ConsoleCommandSpec(
            "session-switch-branch", arguments: [PositionalSpec("key", NonEmptyText.self, help: "the session key"),
                                                 PositionalSpec("leafEntryId", NonEmptyText.self, help: "the tip of another branch")],
            summary: "make another branch of a session active as another device would (sessions.changed reason branch-switch)",
            example: "session-switch-branch main msg-4"
        ) { command, console in
            let key = try command.required(0, as: NonEmptyText.self).text
            let leaf = try command.required(1, as: NonEmptyText.self).text
            try await console.gateway.switchChatBranch(sessionKey: key, to: leaf)
            return .chat(.armed("session \(key) now ends at \(leaf)"))
        },
    ]

    /// `--session KEY`: a chat session, `main` by default.
    private static let sessionOption = FlagSpec.option("--session", NonEmptyText.self, "KEY", help: "the session (default main)")

    /// A command that only acts on the scripted agent of one session (`--session`, default main).
    private static func sessionAction(_ name: String, summary: String,
                                      act: @escaping @Sendable (Gateway, String) async -> Void,
                                      armed: @escaping @Sendable (String) -> String) -> ConsoleCommandSpec {
        ConsoleCommandSpec(name, options: [sessionOption], summary: summary, example: name) { command, console in
            let key = sessionKey(command)
            await act(console.gateway, key)
            return .chat(.armed(armed(key)))
        }
    }

    private static func sessionKey(_ command: ConsoleCommand) -> String {
        command.option("--session", as: NonEmptyText.self)?.text ?? Gateway.defaultChatSessionKey
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

extension ChatConsoleResult: ConsoleRendering {}
