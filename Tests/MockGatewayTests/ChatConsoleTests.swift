import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// The chat commands of the `serve` console: parsing, errors, and their effect on a Gateway.
@Suite("Chat console commands")
struct ChatConsoleTests {
    @Test func chatCommandsParse() throws {
        let cases: [(String, ConsoleCommand)] = [
            ("chat-history", ConsoleCommand("chat-history")),
            ("chat-history --session ops", ConsoleCommand("chat-history", [], options: ["--session": ["ops"]])),
            (#"chat-post "build done" --delay 5"#, ConsoleCommand("chat-post", ["build done"], options: ["--delay": ["5"]])),
            ("chat-post two words", ConsoleCommand("chat-post", ["two", "words"])),
            ("chat-auto-reply off", ConsoleCommand("chat-auto-reply", ["off"])),
            ("chat-auto-reply echo --delay 2", ConsoleCommand("chat-auto-reply", ["echo"], options: ["--delay": ["2"]])),
            ("chat-drop-ack after-apply --keep-connection", ConsoleCommand("chat-drop-ack", ["after-apply"], options: ["--keep-connection": []])),
            ("chat-cut-after 2", ConsoleCommand("chat-cut-after", ["2"])),
            ("chat-history-lag 3 --reads 1", ConsoleCommand("chat-history-lag", ["3"], options: ["--reads": ["1"]])),
        ]
        for (line, expected) in cases {
            #expect(try ConsoleCommand.parse(line) == expected, "\(line)")
        }
        #expect(try ConsoleCommand.parse("chat-drop-ack before-apply")?.argument(0, as: ChatAckDrop.self) == .beforeApplying)
        #expect(ConsoleCommandHelp.all.contains { $0.name == "chat-drop-ack" }, "help lists the chat commands")
    }

    @Test func badChatLinesSayWhatIsWrong() {
        let cases: [(String, String)] = [
            ("chat-post", "chat-post: usage"),
            ("chat-auto-reply", "chat-auto-reply: usage"),
            ("chat-auto-reply loud", "chat-auto-reply: expected echo or off, not 'loud'"),
            ("chat-auto-reply off --delay 1", "--delay only goes with echo"),
            ("chat-drop-ack", "chat-drop-ack: usage"),
            ("chat-drop-ack sometimes", "chat-drop-ack: expected after-apply or before-apply, not 'sometimes'"),
            (#"chat-history --session """#, "--session needs a non-empty text"),
            ("chat-drop-ack before-apply --keep-connection", "always cuts"),
            ("chat-cut-after -1", "whole number"),
            ("chat-history-lag many", "whole number"),
            ("chat-history --session", "--session needs a value"),
            ("chat-history extra", "unexpected argument"),
            (#"chat-post hi --blocks {"type":"image"}"#, "--blocks expects a JSON array of objects"),
            ("chat-post hi --blocks [1]", "--blocks expects a JSON array of objects"),
            ("chat-post hi --blocks [", "valid JSON"),
        ]
        for (line, fragment) in cases {
            do {
                _ = try ConsoleCommand.parse(line)
                Issue.record("\(line) parsed")
            } catch {
                #expect(error.message.contains(fragment), "\(line): \(error.message)")
            }
        }
    }

    @Test func chatCommandsDriveTheAgentAndTheFaults() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let posted = await console.handle("chat-post hello from the console")
            #expect(posted?.errorMessage == nil)
            let history = try #require(await console.handle("chat-history")?.result)
            guard case .chat(.history(_, let messages)) = history else {
                Issue.record("chat-history answered \(history)")
                return
            }
            #expect(messages.map(\.text) == ["hello from the console"])
            #expect(messages.first?.json["content"]?.arrayValue?.count == 1, "no blocks without --blocks")
            #expect(history.text.contains("assistant"))
            #expect(history.json["messages"]?.arrayValue?.count == 1)

            let session = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x7A),
                                                                 scopes: ["operator.read", "operator.write"])
            #expect(await console.handle("chat-auto-reply off")?.errorMessage == nil)
            #expect(await console.handle("chat-history-lag 1 --reads 1")?.errorMessage == nil)
            let sent = try await session.client.request("chat.send", params: ["sessionKey": "main", "message": "quiet", "idempotencyKey": "c1"])
            #expect(sent.ok)
            let lagging = try await session.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(lagging.payload?["messages"]?.arrayValue?.count == 1, "the newest row is left out once")
            #expect(await gateway.chatMessages().map(\.text) == ["hello from the console", "quiet"], "no echo while off")

            #expect(await console.handle(#"chat-post see --session files --blocks [{"type":"file","url":"/api/f"}]"#)?.errorMessage == nil)
            #expect(await gateway.chatMessages(sessionKey: "files").first?.json["content"]
                == [["type": "text", "text": "see"], ["type": "file", "url": "/api/f"]])

            let armed = await console.handle("chat-drop-ack before-apply")
            #expect(armed?.rendered(.text).contains("lost before it is stored") == true)
            try await session.client.sendRequest("chat.send", params: ["sessionKey": "main", "message": "gone", "idempotencyKey": "c2"])
            _ = try await session.client.framesUntilClosed()
            #expect(await gateway.chatMessages().count == 2)
        }
    }

    @Test func sessionTreeCommandsCreateRewindAndSwitch() async throws {
        try await Gateway.withGateway { gateway in
            let console = GatewayConsole(gateway: gateway)
            let created = await console.handle(#"session-create {"key":"tree","message":"one"}"#)
            #expect(created?.errorMessage == nil)
            #expect(created?.rendered(.text).contains("session tree created, run") == true)
            let rows = await gateway.chatMessages(sessionKey: "tree")
            #expect(rows.map(\.text) == ["one", "echo: one"])
            let rewound = await console.handle("session-rewind tree \(rows[0].id)")
            #expect(rewound?.rendered(.text).contains(#"editor text "one""#) == true)
            #expect(await gateway.chatMessages(sessionKey: "tree").isEmpty)
            #expect(await console.handle("session-switch-branch tree \(rows[1].id)")?.errorMessage == nil)
            #expect(await gateway.chatMessages(sessionKey: "tree") == rows)
            let again = await console.handle("session-switch-branch tree \(rows[1].id)")
            #expect(again?.errorMessage?.contains("branch is already active: \(rows[1].id)") == true)
            let bad = await console.handle("session-create [1]")
            #expect(bad?.errorMessage?.contains("expected a JSON object") == true)
            let refused = await console.handle(#"session-create {"fork":true}"#)
            #expect(refused?.errorMessage?.contains("fork requires parentSessionKey") == true)
        }
    }
}
