import Foundation
import Simulation
import GatewayProtocol
import MockGateway
import Locking
import WebSocketTransport

/// What the conformance subcommands work with: the catalogue, the named in-process clients and
/// a way to start Gateways.
public struct HarnessContext: Sendable {
    /// The scenario catalogue.
    public var scenarios: [Scenario]
    /// Clients for `--node NAME`.
    public var nodes: NodeUnderTestRegistry
    /// Starts Gateways for runs; `nil` makes `run` fail with a harness error (exit 2).
    public var gatewayFactory: GatewayFactory?
    /// The console attach mode prompts on.
    public var attachConsole: any AttachConsole

    /// Creates a context.
    public init(scenarios: [Scenario], nodes: NodeUnderTestRegistry = NodeUnderTestRegistry(),
                gatewayFactory: GatewayFactory?, attachConsole: any AttachConsole = TerminalAttachConsole.shared) {
        self.scenarios = scenarios
        self.nodes = nodes
        self.gatewayFactory = gatewayFactory
        self.attachConsole = attachConsole
    }
}

/// The `list`, `explain`, `run` and `report` subcommands.
public enum ConformanceCommands {
    /// `list`, `explain`, `run` and `report`, in help order.
    public static func all(_ context: HarnessContext) -> [CommandSpec] {
        [list(context), explain(context), run(context), report()]
    }

    // MARK: list

    /// `harness list [--json] [--filter GLOB] [--tag TAG]`.
    public static func list(_ context: HarnessContext) -> CommandSpec {
        CommandSpec(
            name: "list", summary: "List the scenarios: ID, level, title, needed stimuli, profiles.",
            discussion: "With --json, prints an array of objects with the keys id, level, title, needs and profiles.",
            flags: [
                .flag("--json", help: "Print JSON instead of a table."),
                .option("--filter", "GLOB", help: "Only IDs matching the glob (PAIR-*, HS-00[1-5]: * any text, ? one character, [...] one of a class); comma-separated lists allowed.", repeatable: true),
                .option("--tag", "TAG", help: "Only scenarios with this tag.", repeatable: true),
            ]
        ) { arguments, io in
            let selection = RunSelection(filters: splitList(arguments.allValues("--filter")), tags: Set(arguments.allValues("--tag")))
            let scenarios = context.scenarios
                .filter { scenario in !RunPlanner.plan([scenario], selection: selection).isEmpty }
                .sorted { $0.scenarioID < $1.scenarioID }
            if arguments.isSet("--json") {
                io.out(listJSON(scenarios))
                return CommandLineTool.exitSuccess
            }
            io.out(listTable(scenarios))
            return CommandLineTool.exitSuccess
        }
    }

    /// The `list --json` document.
    public static func listJSON(_ scenarios: [Scenario]) -> String {
        let array = JSONValue.array(scenarios.map { scenario in
            .object([
                "id": .string(scenario.id),
                "level": .string(scenario.level.rawValue),
                "title": .string(scenario.title),
                "needs": .array(scenario.clientNeeds.sorted().map { .string($0.rawValue) }),
                "profiles": .array(scenario.profiles.names.map(JSONValue.string)),
            ])
        })
        return array.jsonString + "\n"
    }

    /// The `list` table.
    public static func listTable(_ scenarios: [Scenario]) -> String {
        guard !scenarios.isEmpty else { return "No scenarios.\n" }
        let rows = scenarios.map { scenario in
            [scenario.id, scenario.level.rawValue, scenario.profiles.names.joined(separator: ","),
             scenario.clientNeeds.isEmpty ? "-" : scenario.clientNeeds.sorted().map(\.rawValue).joined(separator: ","), scenario.title]
        }
        let header = ["ID", "LEVEL", "PROFILES", "NEEDS", "TITLE"]
        var widths = header.map(\.count)
        for row in rows { for (index, cell) in row.enumerated() where index < 4 { widths[index] = max(widths[index], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index < 4 ? cell.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0) : cell
            }.joined() + "\n"
        }
        return ([header] + rows).map(line).joined() + "\n\(scenarios.count) scenario\(scenarios.count == 1 ? "" : "s")\n"
    }

    // MARK: explain

    /// `harness explain ID`.
    public static func explain(_ context: HarnessContext) -> CommandSpec {
        CommandSpec(
            name: "explain", summary: "Explain one scenario: requirement, source, what it does, what it needs.",
            positionals: [PositionalSpec("ID", help: "A scenario ID such as PAIR-006.")]
        ) { arguments, io in
            let id = arguments.positionals[0].uppercased()
            guard let scenario = context.scenarios.first(where: { $0.id.uppercased() == id }) else {
                var message = "error: no scenario '\(arguments.positionals[0])'"
                if let suggestion = Suggestion.closest(to: id, among: context.scenarios.map(\.id)) {
                    message += "; did you mean '\(suggestion)'?"
                }
                io.err(message + "\nRun 'harness list' for the catalogue.\n")
                return CommandLineTool.exitUsage
            }
            io.out(explanation(scenario))
            return CommandLineTool.exitSuccess
        }
    }

    /// The `explain` text.
    public static func explanation(_ scenario: Scenario) -> String {
        var out = "\(scenario.id)  \(scenario.level)  \(scenario.title)\n\n"
        out += "Requirement: \(scenario.requirement)\n"
        out += "Level:       \(scenario.level) (a violation yields \(scenario.level == .must ? "fail" : "warn"))\n"
        out += "Source:      \(scenario.source)\n"
        out += "Profiles:    \(scenario.profiles.names.joined(separator: ", "))\n"
        let needs = scenario.clientNeeds.sorted().map(\.rawValue)
        out += "Needs:       \(needs.isEmpty ? "nothing beyond connecting to the Gateway" : needs.joined(separator: ", "))\n"
        if !scenario.tags.isEmpty { out += "Tags:        \(scenario.tags.sorted().joined(separator: ", "))\n" }
        out += "Client:      \(scenario.options.startsClient ? "started by the runner before the script" : "started by the script")\n"
        out += "\nWhat it does:\n\(scenario.discussion ?? "(not described)")\n"
        return out
    }

    // MARK: run

    /// The options of `harness run`, as a table (parsing and help both come from it).
    public static let runFlags: [FlagSpec] = [
        .option("--node", "NAME", help: "Run an in-process client registered under NAME (e.g. reference)."),
        .option("--mutant", "NAME", help: "With --node: switch on one known bug of that client (harness reference-node --list-mutants lists them)."),
        .option("--node-command", "CMD", help: "Start CMD with /bin/sh -c per scenario; it speaks the adapter protocol (docs/adapter-protocol.md)."),
        .flag("--attach", help: "Wait for a client started by a person; stimuli become prompts on this terminal."),
        .option("--filter", "GLOB", help: "Only scenario IDs matching the glob (PAIR-*, HS-00?, HS-00[1-5]: * any text, ? one character, [...] one of a class); comma-separated lists allowed.", repeatable: true),
        .option("--tag", "TAG", help: "Only scenarios with this tag.", repeatable: true),
        .option("--profile", "NAME", help: "Only this Gateway profile (current, legacy, ...).", repeatable: true),
        .option("--shard", Shard.self, help: "Run the I-th of N deterministic slices of the sorted runs (1-based)."),
        .option("--jobs", JobsOption.self, help: "Run N scenarios at once (default: the number of cores for in-process clients, 8 for client processes; attach mode and --port force 1)."),
        .option("--seed", SeedOption.self, help: "Seed every random choice, 0 to 2^53-1, decimal or 0x hex (default: random, printed in the report)."),
        .option("--slowness", SlownessOption.self, help: "Multiply every real-time deadline by X (default 1, or 10 with --attach), for slow machines and clients."),
        .flag("--strict", help: "Count SHOULD violations (warn) as failures."),
        .option("--probe-command", ProbeCommandOption.self, help: "Probe the client with this command of its own (read-only; PARAMS a JSON object) where a scenario only needs to see that it still answers; tried before device.info, device.status, camera.list, debug.counter.", repeatable: true),
        .flag("--no-probe", help: "Skip the handshake probe that decides at once the scenarios needing a session when the client never gets one."),
        .flag("--keep-state", help: "Keep every run's state directory (the path is printed)."),
        .option("--junit", "FILE", help: "Write a JUnit XML report to FILE."),
        .option("--json", "FILE", help: "Write a JSON report to FILE."),
        .option("--html", "FILE", help: "Write one self-contained HTML report to FILE: summary, root causes, every run with its sequence diagram (docs/reports.md)."),
        .option("--transcripts", "DIR", help: "Write every run's transcript to DIR (default: failing runs only, to a temporary directory removed when everything passes)."),
        .flag("--show-secrets", help: "Keep tokens and passwords in transcripts, client logs and reports (redacted by default)."),
        .flag("--quiet", help: "Print only the summary (counts, root causes, result); no progress line."),
        .flag("--tls", help: "Serve wss:// with a fresh self-signed certificate; the client gets its fingerprint (OPENCLAW_GATEWAY_TLS_FINGERPRINT). Needs --node-command or --attach; Linux/OpenSSL only."),
        .option("--port", "N", help: "Bind each run's Gateway to port N instead of a free one (useful with --attach).", validate: { value in
            guard let port = Int(value), port >= 1, port <= 65535 else { return "expected a port from 1 to 65535" }
            return nil
        }),
    ]

    /// `harness run`.
    public static func run(_ context: HarnessContext) -> CommandSpec {
        CommandSpec(
            name: "run", summary: "Run the scenarios against a client and report verdicts.",
            discussion: """
            Choose the client with exactly one of --node, --node-command or --attach. Every scenario runs \
            once per Gateway profile it applies to, against a fresh Gateway and a fresh state directory.
            Exit codes: 0 nothing gated failed; 1 a run failed (fail, error, timeout, or warn with --strict); \
            2 usage or harness error.
            """,
            flags: runFlags
        ) { arguments, io in
            await runCommand(arguments, io: io, context: context)
        }
    }

    /// Comma-separated option values, split and trimmed.
    public static func splitList(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty }
    }

    /// Builds the run configuration from parsed `run` options.
    /// - Throws: `UsageError` for conflicting or missing choices.
    public static func configuration(from arguments: ParsedArguments, context: HarnessContext) throws -> RunConfiguration {
        var configuration = RunConfiguration()
        if let seed = arguments.value("--seed", as: SeedOption.self) { configuration.seed = seed.value }
        if let slowness = arguments.value("--slowness", as: SlownessOption.self)?.value {
            configuration.slowness = slowness
        } else if arguments.isSet("--attach") {
            // A person needs far longer than a program to act on a prompt.
            configuration.slowness = 10
        }
        if let jobs = arguments.value("--jobs", as: JobsOption.self) { configuration.jobs = jobs.value }
        if let port = arguments.value("--port").flatMap(Int.init) {
            if configuration.jobs > 1 { throw UsageError("--port binds one Gateway at a time; it cannot be combined with --jobs above 1") }
            configuration.port = port
        }
        configuration.strict = arguments.isSet("--strict")
        configuration.probe = !arguments.isSet("--no-probe")
        configuration.probeCommands = arguments.allValues("--probe-command").compactMap { try? ProbeCommandOption(option: $0).value }
        configuration.showSecrets = arguments.isSet("--show-secrets")
        configuration.keepState = arguments.isSet("--keep-state")
        if let directory = arguments.value("--transcripts") {
            configuration.transcripts = .all(directory: URL(fileURLWithPath: directory))
        }
        let profiles = splitList(arguments.allValues("--profile"))
        let knownProfiles = Set(GatewayProfile.builtIn.map(\.name) + context.scenarios.flatMap(\.profiles.names))
        for profile in profiles where !knownProfiles.contains(profile) {
            var message = "unknown profile '\(profile)'"
            if let suggestion = Suggestion.closest(to: profile, among: knownProfiles.sorted()) { message += "; did you mean '\(suggestion)'?" }
            throw UsageError(message)
        }
        configuration.selection = RunSelection(
            filters: splitList(arguments.allValues("--filter")), tags: Set(arguments.allValues("--tag")),
            profileNames: profiles, shard: arguments.value("--shard", as: Shard.self))
        return configuration
    }

    /// Picks the driver from `--node`, `--node-command` or `--attach`.
    /// - Throws: `UsageError` unless exactly one is given; `HarnessError` for an unknown node.
    public static func driver(from arguments: ParsedArguments, context: HarnessContext) throws -> any ClientDriver {
        let chosen = ["--node", "--node-command", "--attach"].filter(arguments.isSet)
        guard chosen.count == 1 else {
            if chosen.isEmpty { throw UsageError("choose the client under test: --node NAME, --node-command CMD or --attach") }
            throw UsageError("choose only one of \(chosen.joined(separator: ", "))")
        }
        if let mutant = arguments.value("--mutant") {
            guard let name = arguments.value("--node") else { throw UsageError("--mutant goes with --node (an in-process client with mutants)") }
            let prefix = "\(name)+"
            let mutants = context.nodes.names.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
            guard mutants.contains(mutant) else {
                guard !mutants.isEmpty else { throw UsageError("the client \"\(name)\" has no mutants") }
                var message = "unknown mutant '\(mutant)' of \"\(name)\""
                if let suggestion = Suggestion.closest(to: mutant, among: mutants) { message += "; did you mean '\(suggestion)'?" }
                throw UsageError(message)
            }
            return try context.nodes.driver(named: prefix + mutant)
        }
        if let name = arguments.value("--node") { return try context.nodes.driver(named: name) }
        if let command = arguments.value("--node-command") {
            guard !command.trimmingCharacters(in: .whitespaces).isEmpty else { throw UsageError("--node-command needs a command") }
            return ProcessDriver(command: command)
        }
        return AttachDriver(console: context.attachConsole)
    }

    static func runCommand(_ arguments: ParsedArguments, io: CommandIO, context: HarnessContext) async -> Int32 {
        // Only `run` starts client processes; on an interrupt they must not outlive the harness.
        InterruptHandling.install()
        // Adopting and reaping the orphans of clients is the executable's choice
        // (`OrphanReaping.enableForThisProcess()` in `Harness.main`), not this command's: in a
        // test process or an app, other children's exit statuses would be reaped away from them.
        let configuration: RunConfiguration
        let driver: any ClientDriver
        do {
            configuration = try Self.configuration(from: arguments, context: context)
            driver = try Self.driver(from: arguments, context: context)
        } catch let error as UsageError {
            io.err("error: \(error)\nRun 'harness run --help' for usage.\n")
            return CommandLineTool.exitUsage
        } catch {
            io.err("error: \(error)\n")
            return CommandLineTool.exitUsage
        }
        let problems = ScenarioCatalogue.problems(in: context.scenarios)
        guard problems.isEmpty else {
            io.err("error: the scenario catalogue is inconsistent:\n" + problems.map { "  \($0)\n" }.joined())
            return CommandLineTool.exitUsage
        }
        guard var gatewayFactory = context.gatewayFactory else {
            io.err("error: this harness was built without a Gateway to run scenarios against\n")
            return CommandLineTool.exitUsage
        }
        var temporaryTLS: URL?
        defer { if let temporaryTLS { try? FileManager.default.removeItem(at: temporaryTLS) } }
        if arguments.isSet("--tls") {
            guard driver.runModel == .realTime else {
                io.err("error: --tls needs a client on real sockets (--node-command or --attach); in-process clients run in a simulation without sockets\n")
                return CommandLineTool.exitUsage
            }
            do {
                let (directory, tls) = try Self.temporaryCertificate()
                temporaryTLS = directory
                let standard = gatewayFactory
                gatewayFactory = { launch in
                    var launch = launch
                    if launch.configuration.network == nil { launch.configuration.tls = tls }
                    return try await standard(launch)
                }
            } catch {
                io.err("error: --tls: \(error)\n")
                return CommandLineTool.exitUsage
            }
        }
        let runner = Runner(scenarios: context.scenarios, driver: driver, gatewayFactory: gatewayFactory, configuration: configuration)
        let planned = runner.plan()
        if planned.isEmpty {
            var unsharded = configuration.selection
            unsharded.shard = nil
            if configuration.selection.shard != nil, !RunPlanner.plan(context.scenarios, selection: unsharded).isEmpty {
                io.out("Shard \(configuration.selection.shard?.description ?? "") has no runs (seed \(configuration.seed)).\n")
                return CommandLineTool.exitSuccess
            }
            io.err("error: no scenario matches the selection (\(context.scenarios.count) in the catalogue); see 'harness list'\n")
            return CommandLineTool.exitUsage
        }

        let reporter = TerminalReporter(color: TerminalReporter.shouldUseColor(isTerminal: io.stdoutIsTerminal, environment: io.environment))
        let quiet = arguments.isSet("--quiet")
        if !quiet {
            io.err("Running \(planned.count) run\(planned.count == 1 ? "" : "s") with seed \(configuration.seed) (client: \(driver.summary))\n")
        }
        // A live line only on a terminal: logs of CI (not a terminal) get nothing extra.
        let started = ContinuousClock.now
        let progress = io.stdoutIsTerminal && !quiet
            ? LiveProgress(total: planned.count, width: io.terminalColumns ?? Int(io.environment["COLUMNS"] ?? "") ?? 100,
                           elapsedMs: { (ContinuousClock.now - started).milliseconds }, write: io.out)
            : nil
        let report: RunReport
        do {
            report = try await withThrowingTaskGroup(of: RunReport?.self) { group in
                group.addTask { try await runner.run(observing: { progress?.apply($0) }) }
                if let progress {
                    // The elapsed time on the terminal moves on while a long run is busy: a display
                    // refresh on the wall clock, outside every run (no verdict waits on it).
                    group.addTask {
                        while await WallTimeline().sleep(for: .seconds(1)) != .cancelled {
                            progress.redraw()
                        }
                        return nil
                    }
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let report = next { return report }
                }
                throw HarnessError("the runner ended without a report")
            }
        } catch {
            progress?.finish()
            io.err("error: \(error)\n")
            return CommandLineTool.exitUsage
        }
        progress?.finish()
        io.out(quiet ? reporter.renderSummary(report) : reporter.render(report))
        do {
            if let path = arguments.value("--junit") {
                try write(JUnitReporter().render(report), to: path)
            }
            if let path = arguments.value("--json") {
                try write(JSONReporter().render(report), to: path)
            }
            if let path = arguments.value("--html") {
                var attachments: [String: RunAttachments] = [:]
                for result in report.results { attachments[result.key] = RunAttachments.load(for: result) }
                let html = HTMLReporter(replayBase: replayBase(arguments)).render(report, attachments: attachments)
                try write(html, to: path)
            }
        } catch {
            io.err("error: \(error)\n")
            return CommandLineTool.exitUsage
        }
        return report.exitCode
    }

    /// The options of `run` that choose and shape the client, kept in replay commands.
    static let replayedFlags: Set<String> = ["--node", "--mutant", "--node-command", "--attach", "--slowness", "--strict", "--port", "--tls",
                                             "--probe-command"]

    /// The `harness run` invocation without what selects runs or names outputs, e.g.
    /// `harness run --node reference --mutant wrong-device-id`: a run's replay command is this
    /// plus `--filter ID --profile P --seed N`.
    public static func replayBase(_ arguments: ParsedArguments) -> String {
        var words = ["harness", "run"]
        for flag in runFlags where replayedFlags.contains(flag.name) && arguments.isSet(flag.name) {
            if flag.takesValue {
                for value in arguments.allValues(flag.name) { words += [flag.name, shellWord(value)] }
            } else {
                words.append(flag.name)
            }
        }
        return words.joined(separator: " ")
    }

    /// `text` quoted for a POSIX shell when it needs quoting.
    static func shellWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0)) }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    // MARK: report

    /// `harness report TRANSCRIPT.jsonl... --html FILE`.
    public static func report() -> CommandSpec {
        CommandSpec(
            name: "report", summary: "Render transcript files (from run --transcripts or serve --transcript) as one HTML file.",
            discussion: """
            Each transcript becomes a sequence diagram: the scenario, the Gateway and one lifeline per client \
            connection, every frame an arrow that expands to its JSON. A client log written next to a transcript \
            (ID@profile.client.log beside ID@profile.jsonl) is included. Exit codes: 0 written; 2 a file is \
            missing, unreadable or malformed (the message names the line), or the output cannot be written.
            """,
            positionals: [PositionalSpec("TRANSCRIPT", help: "A JSON Lines transcript file.", variadic: true)],
            flags: [
                .option("--html", "FILE", help: "Write the HTML report to FILE (required)."),
                .option("--title", "TEXT", help: "The page's heading (default: the file names)."),
            ]
        ) { arguments, io in
            guard let output = arguments.value("--html") else {
                io.err("error: choose the output with --html FILE\nRun 'harness report --help' for usage.\n")
                return CommandLineTool.exitUsage
            }
            var documents: [(document: TranscriptDocument, clientLog: [String])] = []
            for path in arguments.positionals {
                do {
                    let document = try TranscriptReader.read(path: path)
                    documents.append((document, siblingClientLog(of: path)))
                } catch {
                    io.err("error: \(error)\n")
                    return CommandLineTool.exitUsage
                }
            }
            let title = arguments.value("--title") ?? "Transcripts: " + arguments.positionals
                .map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", ")
            do {
                try write(HTMLReporter().render(transcripts: documents, title: title), to: output)
            } catch {
                io.err("error: \(error)\n")
                return CommandLineTool.exitUsage
            }
            let entries = documents.reduce(0) { $0 + $1.document.entries.count }
            io.out("Wrote \(output): \(documents.count) transcript\(documents.count == 1 ? "" : "s"), \(entries) entr\(entries == 1 ? "y" : "ies")\n")
            return CommandLineTool.exitSuccess
        }
    }

    /// `X.client.log` next to `X.jsonl`, if there is one.
    static func siblingClientLog(of path: String) -> [String] {
        guard path.hasSuffix(".jsonl") else { return [] }
        let log = String(path.dropLast(".jsonl".count)) + ".client.log"
        guard let data = FileManager.default.contents(atPath: log) else { return [] }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return Array(lines.suffix(2_000))
    }

    /// A self-signed certificate for `--tls`, in a fresh temporary directory.
    static func temporaryCertificate() throws -> (URL, WebSocketTLSServerConfiguration) {
        let made = try WebSocketTLS.makeSelfSignedCertificate(
            commonName: "openclaw harness run", subjectAlternativeNames: ["DNS:localhost", "IP:127.0.0.1", "IP:::1"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-run-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let certificate = directory.appendingPathComponent("gateway-cert.pem")
        let key = directory.appendingPathComponent("gateway-key.pem")
        try Data(made.privateKeyPEM.utf8).write(to: key, options: .atomic)
        try Data(made.certificatePEM.utf8).write(to: certificate, options: .atomic)
        return (directory, WebSocketTLSServerConfiguration(certificateFile: certificate.path, privateKeyFile: key.path))
    }

    private static func write(_ text: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            throw HarnessError("cannot write \(path): \(error.localizedDescription)")
        }
    }
}

