import GatewayProtocol
import MockGateway
import Testing

/// Parsing console lines: words, quoting, every command and its errors.
@Suite("Console commands")
struct ConsoleCommandTests {
    private func parse(_ line: String) throws -> ConsoleCommand? { try ConsoleCommand.parse(line) }

    private func parseError(_ line: String) -> String? {
        do {
            _ = try ConsoleCommand.parse(line)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func wordsSplitOnSpacesAndDoubleQuotesGroupThem() throws {
        let tokens = try ConsoleTokenizer.split("approval  \"rm -rf /tmp/x\"\t--expires-in 60")
        #expect(tokens.map(\.text) == ["approval", "rm -rf /tmp/x", "--expires-in", "60"])
        #expect(tokens.map(\.quoted) == [false, true, false, false])
        #expect(tokens[2].rest == "--expires-in 60")
    }

    @Test func escapesInsideQuotesAndQuotesInsideUnquotedWords() throws {
        let tokens = try ConsoleTokenizer.split(#"say "a \"b\" \\ c" {"q1":["a"]}"#)
        #expect(tokens.map(\.text) == ["say", #"a "b" \ c"#, #"{"q1":["a"]}"#])
    }

    /// Options before a rest-of-line argument are words of their own: the JSON after them stays
    /// whole. (Before, `--no-wait` took a word's place and the JSON was cut at its first space.)
    @Test func optionsBeforeARestOfLineArgumentLeaveItWhole() throws {
        let json = #"{"a": 1, "b": [1, 2]}"#
        let waitless = try #require(try parse("invoke --no-wait latest camera.snap \(json)"))
        #expect(waitless.isSet("--no-wait"))
        #expect(waitless.arguments.positionals == ["latest", "camera.snap", json])
        let forced = try #require(try parse("invoke latest --force camera.snap \(json)"))
        #expect(forced.isSet("--force"))
        #expect(forced.arguments.positionals == ["latest", "camera.snap", json])
        let trailing = try #require(try parse("invoke latest camera.snap --force"))
        #expect(trailing.isSet("--force"))
        #expect(trailing.arguments.positionals == ["latest", "camera.snap"])
        let tokens = try ConsoleTokenizer.split("cmd --seed 7 a {\"x\": 1}", limit: 3, options: ["--seed": 1])
        #expect(tokens.map(\.text) == ["cmd", "--seed", "7", "a", #"{"x": 1}"#])
    }

    @Test func unbalancedQuotesAreErrors() {
        #expect(throws: ConsoleError.self) { try ConsoleTokenizer.split(#"approval "rm -rf"#) }
        #expect(throws: ConsoleError.self) { try ConsoleTokenizer.split(#"approval "rm"x"#) }
    }

    @Test func blankLinesAndCommentsAreNotCommands() throws {
        #expect(try parse("") == nil)
        #expect(try parse("   \t ") == nil)
        #expect(try parse("# approve latest") == nil)
    }

    @Test func everyCommandParsesToItsNameAndCheckedArguments() throws {
        let cases: [(String, ConsoleCommand)] = [
            ("pending", ConsoleCommand("pending")),
            ("devices", ConsoleCommand("devices")),
            ("approve latest", ConsoleCommand("approve", ["latest"])),
            ("approve", ConsoleCommand("approve")),
            ("reject", ConsoleCommand("reject")),
            ("remove dev-1", ConsoleCommand("remove", ["dev-1"])),
            ("revoke dev-1 node", ConsoleCommand("revoke", ["dev-1", "node"])),
            ("invoke latest device.info", ConsoleCommand("invoke", ["latest", "device.info"])),
            (#"invoke n1 location.get {"desiredAccuracy": "balanced"}"#,
             ConsoleCommand("invoke", ["n1", "location.get", #"{"desiredAccuracy": "balanced"}"#])),
            (#"invoke n1 x "{\"a\": 1}""#, ConsoleCommand("invoke", ["n1", "x", #"{"a": 1}"#])),
            ("setup-code", ConsoleCommand("setup-code")),
            ("setup-code --full-access", ConsoleCommand("setup-code", [], options: ["--full-access": []])),
            ("setup-code --profile voice-node --qr-png /tmp/x.png",
             ConsoleCommand("setup-code", [], options: ["--profile": ["voice-node"], "--qr-png": ["/tmp/x.png"]])),
            ("setup-code --profile=node", ConsoleCommand("setup-code", [], options: ["--profile": ["node"]])),
            ("restart", ConsoleCommand("restart")),
            ("shutdown", ConsoleCommand("restart")),
            ("restart --stay-down --expected-ms 5000",
             ConsoleCommand("restart", [], options: ["--stay-down": [], "--expected-ms": ["5000"]])),
            ("quit", ConsoleCommand("quit")),
            ("exit", ConsoleCommand("quit")),
            ("help", ConsoleCommand("help")),
            ("help drop-next", ConsoleCommand("help", ["drop-next"])),
            ("drop-next node.event --keep-connection", ConsoleCommand("drop-next", ["node.event"], options: ["--keep-connection": []])),
            ("delay off", ConsoleCommand("delay", ["off"])),
            ("starting on", ConsoleCommand("starting", ["on"])),
            (#"close c1 4000 "bye now""#, ConsoleCommand("close", ["c1", "4000", "bye now"])),
            ("presence-reply false persist_failed", ConsoleCommand("presence-reply", ["false", "persist_failed"])),
            (#"event all custom.thing {"a": [1, 2]}"#, ConsoleCommand("event", ["all", "custom.thing", #"{"a": [1, 2]}"#])),
            ("advance 0.5", ConsoleCommand("advance", ["0.5"])),
            ("advance -0", ConsoleCommand("advance", ["-0"])),
            (#"change-auth "token:with space""#, ConsoleCommand("change-auth", ["token:with space"])),
            (#"approval "rm -rf /tmp/x" --expires-in 60"#, ConsoleCommand("approval", ["rm -rf /tmp/x"], options: ["--expires-in": ["60"]])),
            ("approval rm -rf /tmp/x --decisions allow-once,deny",
             ConsoleCommand("approval", ["rm", "-rf", "/tmp/x"], options: ["--decisions": ["allow-once,deny"]])),
            (#"approval echo "--not-an-option""#, ConsoleCommand("approval", ["echo", "--not-an-option"])),
            ("approval rm -rf -- /tmp/x", ConsoleCommand("approval", ["rm", "-rf", "--", "/tmp/x"])),
            (#"question "Deploy to?" --options staging,production --multi --other --expires-in 900"#,
             ConsoleCommand("question", ["Deploy to?"], options: ["--options": ["staging,production"], "--multi": [], "--other": [],
                                                                  "--expires-in": ["900"]])),
            (#"answer-question latest {"q1": ["a"]}"#, ConsoleCommand("answer-question", ["latest", #"{"q1": ["a"]}"#])),
            ("race-approval latest deny --client-first", ConsoleCommand("race-approval", ["latest", "deny"], options: ["--client-first": []])),
            ("chat-post two words", ConsoleCommand("chat-post", ["two", "words"])),
            ("chat-history --session ops", ConsoleCommand("chat-history", [], options: ["--session": ["ops"]])),
        ]
        for (line, expected) in cases {
            #expect(try parse(line) == expected, "\(line)")
        }
    }

    @Test func argumentsReadAsTheirTypes() throws {
        let approve = try #require(try parse("approve req-1"))
        #expect(approve.argument(0, as: ConsoleReference.self) == .id("req-1"))
        #expect(try parse("reject latest")?.argument(0, as: ConsoleReference.self) == .latest)
        #expect(try parse("approve")?.argument(0, as: ConsoleReference.self) == nil)
        #expect(try parse("resolve-approval latest allow-always")?.argument(1, as: ApprovalDecision.self) == .allowAlways)
        #expect(try parse(#"answer-question ask_1 ["a","b"]"#)?.argument(1, as: ConsoleAnswers.self) == .firstQuestion(["a", "b"]))
        #expect(try parse("change-auth password:p4ss")?.argument(0, as: GatewayAuthMode.self) == .password("p4ss"))
        #expect(try parse("change-auth none")?.argument(0, as: GatewayAuthMode.self) == GatewayAuthMode.none)
        #expect(try parse("chat-drop-ack before-apply")?.argument(0, as: ChatAckDrop.self) == .beforeApplying)
    }

    @Test func everyHelpExampleParsesToItsOwnCommand() throws {
        for entry in ConsoleCommandHelp.all {
            let command = try #require(try parse(entry.example), "\(entry.example)")
            #expect(command.name == entry.name, "\(entry.example)")
            #expect(entry.usage.hasPrefix(entry.name))
        }
    }

    @Test func namesAndAliasesAreUnique() {
        let names = ConsoleCommandSpec.all.flatMap { [$0.name] + $0.aliases }
        #expect(Set(names).count == names.count, "\(names)")
        #expect(ConsoleCommandHelp.named("shutdown")?.name == "restart")
        #expect(ConsoleCommandHelp.named("exit")?.name == "quit")
    }

    @Test func usageComesFromTheArgumentsAndOptions() {
        #expect(ConsoleCommandHelp.named("approve")?.usage == "approve [requestId|latest]")
        #expect(ConsoleCommandHelp.named("setup-code")?.usage == "setup-code [--profile full|limited|voice-node|node] [--qr-png FILE]",
                "the older --full-access stays out of the usage")
        #expect(ConsoleCommandHelp.named("race-question")?.usage
                == "race-question <id|latest> <answersJSON> [--client-first] [--surface NAME]")
    }

    @Test func answersAcceptTheShorthandsAndTheWireShape() throws {
        #expect(try ConsoleAnswers(parsing: #"{"q1":["a"]}"#) == .byQuestion(["q1": ["a"]]))
        #expect(try ConsoleAnswers(parsing: #"{"answers":{"q1":["a"]}}"#) == .byQuestion(["q1": ["a"]]))
        #expect(try ConsoleAnswers(parsing: #"{"q1":"a","q2":["b","c"]}"#) == .byQuestion(["q1": ["a"], "q2": ["b", "c"]]))
        #expect(try ConsoleAnswers(parsing: #"["a"]"#) == .firstQuestion(["a"]))
        #expect(try ConsoleAnswers(parsing: #""free text""#) == .firstQuestion(["free text"]))
        #expect(throws: ConsoleError.self) { try ConsoleAnswers(parsing: "a") }
        #expect(throws: ConsoleError.self) { try ConsoleAnswers(parsing: #"{"q1":[1]}"#) }
        #expect(throws: ConsoleError.self) { try ConsoleAnswers(parsing: "42") }
    }

    @Test func unknownCommandsAndBadArgumentsAreOneLineErrors() {
        let cases: [(String, String)] = [
            ("frobnicate", "unknown command 'frobnicate' (type 'help' for the list)"),
            ("approve a b", "approve: usage: approve [requestId|latest]"),
            ("delay soon", "delay: 'soon' is not a number of milliseconds (1 to 3600000) or off"),
            ("skip-seq 0", "skip-seq: '0' is not a count from 1 to 1000000"),
            ("starting maybe", "starting: expected on or off, not 'maybe'"),
            ("close latest", "close: usage: close <connectionId|latest> <code> [reason]"),
            ("close latest 999", "close: '999' is not a close code (1000 to 4999)"),
            ("drop-next", "drop-next: usage: drop-next <method> [--keep-connection]"),
            ("presence-reply maybe x", "presence-reply: handled must be true or false, not 'maybe'"),
            ("setup-code --profile everything", "setup-code: unknown profile 'everything' (known: full, limited, voice-node, node)"),
            ("setup-code --profile node --full-access", "setup-code: --full-access is --profile full; it cannot go with --profile node"),
            ("pending now", "pending: unexpected argument 'now'"),
            ("revoke dev-1", "revoke: usage: revoke <deviceId|latest> <role>"),
            ("invoke latest", "invoke: usage: invoke <nodeId|latest> <command> [paramsJSON] [--force] [--no-wait]"),
            ("invoke latest x {nope", "invoke: '{nope' is not valid JSON"),
            ("event all x {nope", "event: '{nope' is not valid JSON"),
            ("answer-question latest {nope", "answer-question: answers are not valid JSON: {nope"),
            ("approval ls --expires-in 5 --expires-in 6", "approval: --expires-in is given more than once"),
            ("approval ls --expires-in=", "approval: --expires-in needs a positive number of seconds (at most 1000000000), not ''"),
            ("drop-next x --keep-connection=yes", "drop-next: --keep-connection takes no value"),
            ("restart --expected-ms 5000", "restart: --expected-ms goes with --stay-down (a restart without --stay-down comes straight back)"),
            ("restart --stay-down --expected-ms soon", "restart: --expected-ms needs a number of milliseconds, not 'soon'"),
            ("change-auth token", "change-auth: usage: change-auth <none|token:SECRET|password:SECRET>"),
            ("change-auth token:a token:b", "change-auth: usage: change-auth <none|token:SECRET|password:SECRET>"),
            (#"wake latest --reason " ""#, "wake: --reason needs a non-empty text, not ' '"),
            ("help a b", "help: usage: help [command]"),
            ("exit now", "exit: unexpected argument 'now'"),
            ("advance soon", "advance: 'soon' is not a number of seconds (0 to 1000000000)"),
            ("advance -5", "advance: '-5' is not a number of seconds (0 to 1000000000)"),
            ("advance 1e300", "advance: '1e300' is not a number of seconds (0 to 1000000000)"),
            ("advance nan", "advance: 'nan' is not a number of seconds (0 to 1000000000)"),
            ("approval", "approval: usage: approval <command text> [--decisions allow-once,allow-always,deny] [--expires-in SECONDS]"),
            ("approval ls --decisions allow-twice", "approval: unknown decision 'allow-twice' (allow-once, allow-always or deny)"),
            ("approval ls --expires-in 0", "approval: --expires-in needs a positive number of seconds (at most 1000000000), not '0'"),
            ("question q --expires-in 1e20", "question: --expires-in needs a positive number of seconds (at most 1000000000), not '1e20'"),
            ("approval ls --expires-in", "approval: --expires-in needs a value"),
            ("approval ls --color", "approval: unknown option '--color' (known: --decisions, --expires-in)"),
            ("resolve-approval latest maybe", "resolve-approval: unknown decision 'maybe' (allow-once, allow-always or deny)"),
            ("question --options a,b", "question: usage: question <prompt> [--options a,b] [--multi] [--other] [--expires-in SECONDS]"),
            ("answer-question latest", "answer-question: usage: answer-question <id|latest> <json>"),
            ("setup-code --everything", "setup-code: unknown option '--everything' (known: --full-access, --profile, --qr-png)"),
            ("setup-code --profile admin", "setup-code: unknown profile 'admin' (known: full, limited, voice-node, node)"),
            ("setup-code --profile limited --full-access", "setup-code: --full-access is --profile full; it cannot go with --profile limited"),
            (#"approval "rm"#, #"missing closing quote in "rm"#),
        ]
        for (line, message) in cases {
            let error = parseError(line)
            #expect(error == message, "\(line)")
            #expect(error?.contains("\n") == false)
        }
    }

    @Test func drainStartsAndEndsByName() throws {
        for name in ["restarting", "suspend", "gateway-closing", "off"] {
            #expect(try parse("drain \(name)") == ConsoleCommand("drain", [name]))
        }
        #expect(parseError("drain") == "drain: usage: drain <restarting|suspending|closing|off>")
        #expect(parseError("drain later")?.hasPrefix("drain: unknown drain 'later'") == true)
    }
}
