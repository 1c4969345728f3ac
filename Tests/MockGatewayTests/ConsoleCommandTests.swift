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

    @Test func unbalancedQuotesAreErrors() {
        #expect(throws: ConsoleError.self) { try ConsoleTokenizer.split(#"approval "rm -rf"#) }
        #expect(throws: ConsoleError.self) { try ConsoleTokenizer.split(#"approval "rm"x"#) }
    }

    @Test func blankLinesAndCommentsAreNotCommands() throws {
        #expect(try parse("") == nil)
        #expect(try parse("   \t ") == nil)
        #expect(try parse("# approve latest") == nil)
    }

    @Test func everyCommandParses() throws {
        #expect(try parse("pending") == .pending)
        #expect(try parse("devices") == .devices)
        #expect(try parse("approve latest") == .approve(.latest))
        #expect(try parse("approve req-1") == .approve(.id("req-1")))
        #expect(try parse("reject latest") == .reject(.latest))
        #expect(try parse("remove dev-1") == .remove(deviceId: "dev-1"))
        #expect(try parse("revoke dev-1 node") == .revoke(deviceId: "dev-1", role: "node"))
        #expect(try parse("invoke latest device.info") == .invoke(node: .latest, command: "device.info", params: nil))
        #expect(try parse(#"invoke n1 location.get {"desiredAccuracy": "balanced"}"#)
            == .invoke(node: .id("n1"), command: "location.get", params: ["desiredAccuracy": "balanced"]))
        #expect(try parse(#"invoke n1 x "{\"a\": 1}""#) == .invoke(node: .id("n1"), command: "x", params: ["a": 1]))
        #expect(try parse("setup-code") == .setupCode(profile: nil, qrPNG: nil))
        #expect(try parse("setup-code --full-access") == .setupCode(profile: "full", qrPNG: nil))
        #expect(try parse("setup-code --profile voice-node --qr-png /tmp/x.png") == .setupCode(profile: "voice-node", qrPNG: "/tmp/x.png"))
        #expect(try parse("approve") == .approve(nil))
        #expect(try parse("reject") == .reject(nil))
        #expect(try parse("nodes") == .nodes)
        #expect(try parse("connections") == .connections)
        #expect(try parse("status") == .status)
        #expect(try parse("restart") == .shutdown)
        #expect(try parse("help drop-next") == .help("drop-next"))
        #expect(try parse("drop-next approval.resolve") == .dropNext(method: "approval.resolve", keepConnection: false))
        #expect(try parse("drop-next node.event --keep-connection") == .dropNext(method: "node.event", keepConnection: true))
        #expect(try parse("delay 2000") == .delay(milliseconds: 2000))
        #expect(try parse("delay off") == .delay(milliseconds: nil))
        #expect(try parse("stop-ticks") == .stopTicks)
        #expect(try parse("resume-ticks") == .resumeTicks)
        #expect(try parse("skip-seq 3") == .skipSeq(3))
        #expect(try parse("starting on") == .starting(true))
        #expect(try parse("starting off") == .starting(false))
        #expect(try parse("reset latest") == .reset(.latest))
        #expect(try parse(#"close c1 4000 "bye now""#) == .close(.id("c1"), code: 4000, reason: "bye now"))
        #expect(try parse("send-binary 2") == .sendBinary(2))
        #expect(try parse("fragment 1") == .fragment(1))
        #expect(try parse("presence-reply false persist_failed") == .presenceReply(handled: false, reason: "persist_failed"))
        #expect(try parse(#"event all custom.thing {"a": [1, 2]}"#) == .event(nil, name: "custom.thing", payload: ["a": [1, 2]]))
        #expect(try parse("expire-approval latest") == .expireApproval(.latest))
        #expect(try parse("expire-question q-1") == .expireQuestion(.id("q-1")))
        #expect(try parse("race-approval latest deny --client-first") == .raceApproval(.latest, decision: .deny, clientFirst: true, surface: "watch"))
        #expect(try parse("setup-code --profile node") == .setupCode(profile: "node", qrPNG: nil))
        #expect(try parse("change-auth token:new-secret") == .changeAuth(.token("new-secret")))
        #expect(try parse("change-auth password:p4ss") == .changeAuth(.password("p4ss")))
        #expect(try parse("change-auth none") == .changeAuth(.none))
        #expect(try parse(#"change-auth "token:with space""#) == .changeAuth(.token("with space")))
        #expect(try parse("advance 901") == .advance(seconds: 901))
        #expect(try parse("advance 0.5") == .advance(seconds: 0.5))
        #expect(try parse("shutdown") == .shutdown)
        #expect(try parse("help") == .help(nil))
        #expect(try parse("quit") == .quit)
        #expect(try parse(#"approval "rm -rf /tmp/x" --expires-in 60"#)
            == .approval(commandText: "rm -rf /tmp/x", decisions: ApprovalDecision.allCases, expiresInSeconds: 60))
        #expect(try parse("approval rm -rf /tmp/x --decisions allow-once,deny")
            == .approval(commandText: "rm -rf /tmp/x", decisions: [.allowOnce, .deny], expiresInSeconds: nil))
        #expect(try parse("resolve-approval latest allow-always") == .resolveApproval(.latest, decision: .allowAlways))
        #expect(try parse(#"question "Deploy to?" --options staging,production --multi --other --expires-in 900"#)
            == .question(prompt: "Deploy to?", options: ["staging", "production"], multiSelect: true, allowOther: true,
                         expiresInSeconds: 900))
        #expect(try parse("question Anything to add?")
            == .question(prompt: "Anything to add?", options: [], multiSelect: false, allowOther: false, expiresInSeconds: nil))
        #expect(try parse(#"answer-question latest {"q1": ["a"]}"#) == .answerQuestion(.latest, answers: .byQuestion(["q1": ["a"]])))
        #expect(try parse(#"answer-question ask_1 ["a","b"]"#) == .answerQuestion(.id("ask_1"), answers: .firstQuestion(["a", "b"])))
        #expect(try parse("cancel-question latest") == .cancelQuestion(.latest))
    }

    @Test func everyHelpExampleParsesToItsOwnCommand() throws {
        for entry in ConsoleCommandHelp.all {
            let command = try #require(try parse(entry.example), "\(entry.example)")
            #expect(command.name == entry.name, "\(entry.example)")
            #expect(entry.usage.hasPrefix(entry.name))
        }
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
            ("invoke latest", "invoke: usage: invoke <nodeId|latest> <command> [paramsJSON]"),
            ("invoke latest x {nope", "invoke: paramsJSON is not valid JSON: {nope"),
            ("advance soon", "advance: 'soon' is not a number of seconds (0 to 1000000000)"),
            ("advance -5", "advance: '-5' is not a number of seconds (0 to 1000000000)"),
            ("advance 1e300", "advance: '1e300' is not a number of seconds (0 to 1000000000)"),
            ("advance nan", "advance: 'nan' is not a number of seconds (0 to 1000000000)"),
            ("approval", "approval: usage: approval <command text> [--decisions …] [--expires-in SECONDS]"),
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
        #expect(try parse("drain restarting") == .drain(.restarting))
        #expect(try parse("drain suspend") == .drain(.suspending))
        #expect(try parse("drain gateway-closing") == .drain(.closing))
        #expect(try parse("drain off") == .drain(nil))
        #expect(parseError("drain") == "drain: usage: drain <restarting|suspending|closing|off>")
        #expect(parseError("drain later")?.hasPrefix("drain: unknown drain 'later'") == true)
    }
}
