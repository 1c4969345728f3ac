import Conformance
import Foundation
import MockGateway
import Locking
import Testing

/// Collects what a command writes.
final class RecordingIO: Sendable {
    private let buffers = Locked<(out: String, err: String)>(("", ""))

    var out: String { buffers.withLock { $0.out } }
    var err: String { buffers.withLock { $0.err } }

    var io: CommandIO {
        CommandIO(out: { text in self.buffers.withLock { $0.out += text } },
                  err: { text in self.buffers.withLock { $0.err += text } },
                  environment: ["NO_COLOR": "1"])
    }
}

/// An attach console answering from a script.
final class ScriptedConsole: AttachConsole {
    private let answers: Locked<[String]>
    private let prompts = Locked<[String]>([])

    init(_ answers: [String]) { self.answers = Locked(answers) }

    var asked: [String] { prompts.withLock { $0 } }

    func ask(_ text: String) async -> String? {
        prompts.withLock { $0.append(text) }
        return answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}

@Suite struct CLITests {
    static let context = HarnessContext(scenarios: allScenarios, gatewayFactory: GatewayFactories.standard)
    static let tool = CommandLineTool(name: "harness", summary: "test", commands: ConformanceCommands.all(context))

    static func run(_ arguments: [String]) async -> (Int32, RecordingIO) {
        let recording = RecordingIO()
        let status = await tool.main(arguments, io: recording.io)
        return (status, recording)
    }

    @Test func anUnknownFlagIsNamedWithTheClosestValidOne() async {
        let (status, io) = await Self.run(["run", "--sed", "4"])
        #expect(status == 2)
        #expect(io.err.contains("unknown option '--sed' for 'harness run'; did you mean '--seed'?"))
        let (_, other) = await Self.run(["run", "--node-comand", "x"])
        #expect(other.err.contains("did you mean '--node-command'?"))
    }

    @Test func aMissingValueIsAnError() async {
        let (status, io) = await Self.run(["run", "--node"])
        #expect(status == 2)
        #expect(io.err.contains("option '--node' needs a value (NAME)"))
        let (_, before) = await Self.run(["run", "--seed", "--strict"])
        #expect(before.err.contains("option '--seed' needs a value (N)"))
    }

    @Test func invalidValuesAreRejectedByTheirValidator() async {
        for (flag, value) in [("--shard", "3/2"), ("--jobs", "0"), ("--seed", "-1"), ("--slowness", "0"), ("--port", "70000"),
                              ("--probe-command", "acme.read={bad"), ("--probe-command", "acme.read=[1]"), ("--probe-command", "=")] {
            let (status, io) = await Self.run(["run", flag, value, "--node", "x"])
            #expect(status == 2)
            #expect(io.err.contains("invalid value '\(value)' for '\(flag)'"), "\(io.err)")
        }
    }

    @Test func probeCommandTakesANameAndAJSONObjectOfParams() throws {
        let plain = try ProbeCommandOption(option: "acme.read").value
        #expect(plain == ProbeCommand(name: "acme.read"))
        let withParams = try ProbeCommandOption(option: #"acme.read={"city":"Oslo","n":2}"#).value
        #expect(withParams.name == "acme.read")
        #expect(withParams.params["city"]?.stringValue == "Oslo")
        let command = try #require(Self.tool.commands.first { $0.name == "run" })
        let parsed = try Self.tool.parse(["--node", "x", "--probe-command", "a.b", "--probe-command", #"c.d={"x":1}"#], for: command)
        let configuration = try ConformanceCommands.configuration(from: parsed, context: Self.context)
        #expect(configuration.probeCommands.map(\.name) == ["a.b", "c.d"])
        #expect(configuration.probeCommands.last?.params["x"]?.int64Value == 1)
    }

    @Test func helpListsEveryFlagOfTheTable() async {
        for command in Self.tool.commands {
            let (status, io) = await Self.run([command.name, "--help"])
            #expect(status == 0)
            for flag in command.flags {
                #expect(io.out.contains(flag.name), "\(command.name) --help lacks \(flag.name)")
            }
        }
        let (status, io) = await Self.run(["--help"])
        #expect(status == 0)
        for command in Self.tool.commands { #expect(io.out.contains(command.name)) }
    }

    @Test func anUnknownCommandSuggestsTheClosest() async {
        let (status, io) = await Self.run(["lsit"])
        #expect(status == 2)
        #expect(io.err.contains("unknown command 'lsit'; did you mean 'list'?"))
    }

    @Test func flagsTakeValuesInlineOrSeparately() throws {
        let command = try #require(Self.tool.commands.first { $0.name == "run" })
        let parsed = try Self.tool.parse(["--seed=5", "--filter", "PAIR-*", "--filter=HS-*", "--strict"], for: command)
        #expect(parsed.value("--seed") == "5")
        #expect(parsed.allValues("--filter") == ["PAIR-*", "HS-*"])
        #expect(parsed.isSet("--strict"))
        #expect(throws: UsageError.self) { try Self.tool.parse(["--strict=yes"], for: command) }
        #expect(throws: UsageError.self) { try Self.tool.parse(["--seed", "1", "--seed", "2"], for: command) }
        #expect(throws: UsageError.self) { try Self.tool.parse(["stray"], for: command) }
    }

    @Test func listJSONHasExactlyTheDocumentedKeys() async throws {
        let (status, io) = await Self.run(["list", "--json"])
        #expect(status == 0)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(io.out.utf8)) as? [[String: Any]])
        #expect(array.count == 3)
        for object in array { #expect(Set(object.keys) == ["id", "level", "title", "needs", "profiles"]) }
        #expect(array.first?["id"] as? String == "HS-900")
        #expect(array[1]["needs"] as? [String] == ["reset-identity"])
        #expect(array[1]["profiles"] as? [String] == ["current", "legacy"])
    }

    @Test func listPrintsATableAndFilters() async {
        let (_, io) = await Self.run(["list", "--filter", "PAIR-*"])
        #expect(io.out.contains("PAIR-900"))
        #expect(!io.out.contains("HS-900"))
        #expect(io.out.contains("ID"))
    }

    @Test func explainShowsRequirementSourceAndNeeds() async {
        let (status, io) = await Self.run(["explain", "pair-900"])
        #expect(status == 0)
        #expect(io.out.contains("Requirement: The client acts on reset-identity."))
        #expect(io.out.contains("Needs:       reset-identity"))
        #expect(io.out.contains("Source:      demo"))
        let (missing, other) = await Self.run(["explain", "PAIR-901"])
        #expect(missing == 2)
        #expect(other.err.contains("no scenario 'PAIR-901'; did you mean 'PAIR-900'?"))
    }

    @Test func runNeedsExactlyOneClient() async {
        let (none, io) = await Self.run(["run"])
        #expect(none == 2)
        #expect(io.err.contains("choose the client under test"))
        let (two, other) = await Self.run(["run", "--attach", "--node", "x"])
        #expect(two == 2)
        #expect(other.err.contains("choose only one of"))
    }

    @Test func anUnregisteredNodeIsReportedClearly() async {
        let (status, io) = await Self.run(["run", "--node", "reference"])
        #expect(status == 2)
        #expect(io.err.contains("error: unknown node \"reference\" (none is registered)"))
    }

    @Test func aRegisteredNodeRunsAndReportsFiles() async throws {
        var nodes = NodeUnderTestRegistry()
        nodes.register("fake", summary: "a fake") { FakeNode() }
        let context = HarnessContext(scenarios: allScenarios, nodes: nodes, gatewayFactory: GatewayFactories.standard)
        let tool = CommandLineTool(name: "harness", summary: "test", commands: ConformanceCommands.all(context))
        let directory = try TemporaryDirectory()
        let junit = directory.url.appendingPathComponent("out/junit.xml").path
        let json = directory.url.appendingPathComponent("out/report.json").path
        let recording = RecordingIO()
        // The fake node never connects: without --no-probe the probe would decide every run.
        let status = await tool.main(["run", "--node", "fake", "--seed", "9", "--no-probe", "--junit", junit, "--json", json,
                                      "--filter", "PAIR-*,HS-*", "--profile", "current"], io: recording.io)
        #expect(status == 0, "\(recording.err)")
        #expect(recording.out.contains("seed 9"))
        #expect(recording.out.contains("Summary: 2 runs: 2 pass"))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.map { $0["id"] as? String } == ["HS-900", "PAIR-900"])
        for key in ["id", "profile", "verdict", "level", "message", "transcript", "seed", "durationMs"] {
            #expect(runs[0].keys.contains(key), "JSON record lacks \(key)")
        }
        #expect(FileManager.default.fileExists(atPath: junit))
    }

    @Test func aFilterMatchingNothingIsAUsageError() async {
        var nodes = NodeUnderTestRegistry()
        nodes.register("fake", summary: "a fake") { FakeNode() }
        let context = HarnessContext(scenarios: allScenarios, nodes: nodes, gatewayFactory: GatewayFactories.standard)
        let tool = CommandLineTool(name: "harness", summary: "test", commands: ConformanceCommands.all(context))
        let recording = RecordingIO()
        let status = await tool.main(["run", "--node", "fake", "--filter", "QUES-*"], io: recording.io)
        #expect(status == 2)
        #expect(recording.err.contains("no scenario matches the selection"))
        let unknownProfile = await tool.main(["run", "--node", "fake", "--profile", "curent"], io: recording.io)
        #expect(unknownProfile == 2)
        #expect(recording.err.contains("unknown profile 'curent'; did you mean 'current'?"))
    }

    @Test func attachModeDefaultsToALargerSlowness() throws {
        let command = try #require(Self.tool.commands.first { $0.name == "run" })
        let attach = try ConformanceCommands.configuration(from: Self.tool.parse(["--attach"], for: command), context: Self.context)
        #expect(attach.slowness == 10)
        let explicit = try ConformanceCommands.configuration(
            from: Self.tool.parse(["--attach", "--slowness", "3"], for: command), context: Self.context)
        #expect(explicit.slowness == 3)
        #expect(throws: UsageError.self) {
            try ConformanceCommands.configuration(from: Self.tool.parse(["--jobs", "2", "--port", "9000"], for: command),
                                                  context: Self.context)
        }
    }

    @Test func editDistanceCountsEdits() {
        #expect(Suggestion.editDistance("seed", "sed") == 1)
        #expect(Suggestion.editDistance("kitten", "sitting") == 3)
        #expect(Suggestion.editDistance("", "abc") == 3)
        #expect(Suggestion.closest(to: "--zzzzzzzz", among: ["--seed", "--json"]) == nil)
    }
}

@Suite struct AttachDriverTests {
    @Test func stimuliBecomePromptsAndSkipMeansUnsupported() async throws {
        let console = ScriptedConsole(["", "", "skip", "error the app crashed"])
        let scenarios = [
            Scenario("PAIR-008", .must, requirement: "r", source: "s", profiles: .current) { run in
                try await run.client.stimulate(.resetIdentity)
                try await run.client.stimulate(.backgroundWake(trigger: "silent_push"))
            },
            Scenario("PAIR-009", .must, requirement: "r", source: "s", profiles: .current) { run in
                // The connect prompt of this run gets "error ...", which is not "skip": it proceeds.
            },
        ]
        let report = try await runScenarios(scenarios, driver: AttachDriver(console: console))
        #expect(report.verdict("PAIR-008@current") == .unsupported)
        #expect(report.result("PAIR-008@current")?.message == "the operator skipped \"background-wake\"")
        #expect(report.verdict("PAIR-009@current") == .pass)
        let prompts = console.asked
        #expect(prompts.count == 4)
        #expect(prompts[0].contains("Connect the client to ws://127.0.0.1:"))
        #expect(prompts[1].contains("Reinstall the client"))
        #expect(prompts[2].contains("trigger: silent_push"))
    }

    @Test func endOfInputIsAnError() async throws {
        let report = try await runScenarios(
            [Scenario("HS-001", .must, requirement: "r", source: "s", profiles: .current) { _ in }],
            driver: AttachDriver(console: ScriptedConsole([])))
        #expect(report.verdict("HS-001@current") == .error)
    }

    @Test func attachRunsOneAtATime() {
        #expect(AttachDriver(console: ScriptedConsole([])).maximumParallelRuns == 1)
    }
}
