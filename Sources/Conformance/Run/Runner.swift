import Foundation
import MockGateway
import Simulation
import Locking
import WebSocketTransport

/// Which transcripts to write.
public enum TranscriptPolicy: Sendable, Hashable {
    /// Only runs that did not pass (nor were unsupported), into `directory` or, when `nil`, one
    /// temporary directory per invocation (``TranscriptDirectory/temporaryParent()``), created on
    /// the first such run, reported, and removed again when the invocation passes.
    case failing(directory: URL?)
    /// Every run, into `directory` (`--transcripts DIR`).
    case all(directory: URL)
    /// None.
    case none
}

/// How to run: seed, deadlines, parallelism, what to keep.
public struct RunConfiguration: Sendable {
    /// The `--seed` every random choice derives from.
    public var seed: UInt64
    /// `--slowness`: every deadline is multiplied by it.
    public var slowness: Double
    /// What to run.
    public var selection: RunSelection
    /// `--jobs`: runs at once (limited further by the driver, and to 1 with a fixed `port`); 0
    /// (the default) picks the number of cores for simulated runs, which are CPU-bound, and
    /// ``defaultRealTimeJobs`` for real-time runs, which mostly wait.
    public var jobs: Int
    /// `--strict`: `warn` fails the run.
    public var strict: Bool
    /// `--keep-state`: keep every run's state directory.
    public var keepState: Bool
    /// Which transcripts to write.
    public var transcripts: TranscriptPolicy
    /// Where state directories go (default: a fresh temporary directory).
    public var stateRoot: URL?
    /// The Gateway's port (`--port`); 0 picks a free one per Gateway.
    public var port: Int
    /// The default deadline of one scenario step, before scaling.
    public var stepTimeoutMs: Int
    /// How long a client may take to announce itself, before scaling.
    public var helloTimeoutMs: Int
    /// How long a client may take to answer one stimulus, before scaling.
    public var stimulusTimeoutMs: Int
    /// Whether each profile gets a handshake probe first, which decides at once the scenarios
    /// that need a session when the client never gets one (`--no-probe` turns it off).
    public var probe: Bool
    /// `--show-secrets`: keep tokens and passwords in transcripts, client logs and the report
    /// (by default every Gateway's ``MockGateway/SecretRedactor`` removes them).
    public var showSecrets: Bool = false
    /// `--probe-command`: the client's own commands to probe it with, tried before the built-in
    /// ``ProbeCommand/readOnly`` set (see ``ScenarioRun/probeCommand()``).
    public var probeCommands: [ProbeCommand] = []

    /// Creates a configuration.
    public init(seed: UInt64 = Seed.random(), slowness: Double = 1, selection: RunSelection = RunSelection(), jobs: Int = 0,
                strict: Bool = false, keepState: Bool = false, transcripts: TranscriptPolicy = .failing(directory: nil),
                stateRoot: URL? = nil, port: Int = 0, stepTimeoutMs: Int = 5_000, helloTimeoutMs: Int = 10_000,
                stimulusTimeoutMs: Int = 10_000, probe: Bool = true) {
        self.seed = seed
        self.slowness = slowness
        self.selection = selection
        self.jobs = jobs
        self.strict = strict
        self.keepState = keepState
        self.transcripts = transcripts
        self.stateRoot = stateRoot
        self.port = port
        self.stepTimeoutMs = stepTimeoutMs
        self.helloTimeoutMs = helloTimeoutMs
        self.stimulusTimeoutMs = stimulusTimeoutMs
        self.probe = probe
    }

    /// `milliseconds` scaled by `slowness`.
    func scaled(_ milliseconds: Int) -> Duration {
        .milliseconds(Int64((Double(milliseconds) * slowness).rounded(.up)))
    }
}

/// What a runner reports while it works.
public enum RunnerEvent: Sendable, Hashable {
    /// A run (`ID@profile`) started.
    case started(key: String)
    /// A run finished.
    case finished(RunResult)
}

/// Runs the matrix of scenarios x profiles: a fresh Gateway and a fresh state directory per
/// run, a client from the driver, every step under a deadline, one verdict per run.
public struct Runner: Sendable {
    /// The catalogue to select from.
    public let scenarios: [Scenario]
    /// Makes the client under test.
    public let driver: any ClientDriver
    /// Starts Gateways.
    public let gatewayFactory: GatewayFactory
    /// How to run.
    public let configuration: RunConfiguration

    /// Creates a runner.
    public init(scenarios: [Scenario], driver: any ClientDriver, gatewayFactory: @escaping GatewayFactory,
                configuration: RunConfiguration) {
        self.scenarios = scenarios
        self.driver = driver
        self.gatewayFactory = gatewayFactory
        self.configuration = configuration
    }

    /// The runs this runner would make, in order.
    public func plan() -> [PlannedRun] {
        RunPlanner.plan(scenarios, selection: configuration.selection)
    }

    /// The automatic `--jobs` of real-time runs: client processes mostly wait on the wire.
    public static let defaultRealTimeJobs = 8

    /// How many runs go at once.
    public var effectiveJobs: Int {
        var jobs = configuration.jobs
        if jobs <= 0 {
            jobs = driver.runModel == .simulation ? max(1, ProcessInfo.processInfo.activeProcessorCount) : Self.defaultRealTimeJobs
        }
        if let limit = driver.maximumParallelRuns { jobs = min(jobs, max(1, limit)) }
        if configuration.port != 0 { jobs = 1 }
        return jobs
    }

    /// Runs every planned run and returns the report. Every temporary state directory is
    /// removed unless `keepState`.
    /// - Parameter progress: called as each run finishes (in completion order).
    /// - Throws: `HarnessError` when the state directory cannot be created.
    public func run(progress: @escaping @Sendable (RunResult) -> Void = { _ in }) async throws -> RunReport {
        try await run(observing: { event in
            if case .finished(let result) = event { progress(result) }
        })
    }

    /// Runs every planned run and returns the report, telling `observer` as each run starts
    /// and finishes (for a live progress line).
    /// - Throws: `HarnessError` when the state directory cannot be created.
    public func run(observing observer: @escaping @Sendable (RunnerEvent) -> Void) async throws -> RunReport {
        let runs = plan()
        let fileManager = FileManager.default
        let stateRoot: URL
        let ownsStateRoot: Bool
        if let root = configuration.stateRoot {
            stateRoot = root
            ownsStateRoot = false
        } else {
            stateRoot = fileManager.temporaryDirectory.appendingPathComponent("openclaw-harness-state-\(UUID().uuidString.prefix(8))")
            ownsStateRoot = true
        }
        do {
            try fileManager.createDirectory(at: stateRoot, withIntermediateDirectories: true)
        } catch {
            throw HarnessError("cannot create the state directory \(stateRoot.path): \(error.localizedDescription)")
        }
        let transcripts = TranscriptDirectory(policy: configuration.transcripts)
        let jobs = effectiveJobs
        let probes = await probe(runs, jobs: jobs, stateRoot: stateRoot, transcripts: transcripts)

        var results = [RunResult?](repeating: nil, count: runs.count)
        await withTaskGroup(of: (Int, RunResult).self) { group in
            var next = 0
            func schedule(_ index: Int) {
                let planned = runs[index]
                observer(.started(key: planned.key))
                if let decided = Self.decidedByProbe(planned, probes: probes, baseSeed: configuration.seed) {
                    group.addTask { (index, decided) }
                    return
                }
                group.addTask { (index, await execute(planned, stateRoot: stateRoot, transcripts: transcripts)) }
            }
            while next < min(jobs, runs.count) {
                schedule(next)
                next += 1
            }
            while let (index, result) = await group.next() {
                results[index] = result
                observer(.finished(result))
                if next < runs.count {
                    schedule(next)
                    next += 1
                }
            }
        }
        if ownsStateRoot && !configuration.keepState {
            try? fileManager.removeItem(at: stateRoot)
        }
        var finished = results.compactMap { $0 }
        let probeResults = Self.pointToShowingScenario(probes.values.map(\.result), results: &finished)
        var report = RunReport(
            seed: configuration.seed, slowness: configuration.slowness, strict: configuration.strict,
            client: driver.summary, transcriptDirectory: transcripts.usedPath, shard: configuration.selection.shard,
            keptStateDirectory: configuration.keepState ? stateRoot.path : nil, results: finished,
            probes: probeResults.sorted { $0.profile < $1.profile })
        if report.exitCode == 0, transcripts.removeIfTemporary() {
            // A passing invocation leaves nothing in the temporary directory.
            report.transcriptDirectory = nil
            for index in report.results.indices {
                report.results[index].transcriptPath = nil
                report.results[index].extraTranscriptPaths = []
                report.results[index].clientLogPath = nil
            }
        }
        return report
    }

    /// A probe's result and what the client announced in it.
    private struct Probe: Sendable {
        var result: ProbeResult
        var announced: Set<StimulusKind>
        /// The probe run's root cause, shared by the runs it decides.
        var rootCause: RootCause?
    }

    /// Runs the handshake probe once for each profile that a scenario needing a session runs on
    /// (unless `probe` is off), in parallel.
    private func probe(_ runs: [PlannedRun], jobs: Int, stateRoot: URL,
                       transcripts: TranscriptDirectory) async -> [String: Probe] {
        guard configuration.probe else { return [:] }
        var profiles: [GatewayProfile] = []
        for run in runs where run.scenario.options.needsSession && !profiles.contains(where: { $0.name == run.profile.name }) {
            profiles.append(run.profile)
        }
        guard !profiles.isEmpty else { return [:] }
        return await withTaskGroup(of: (String, Probe).self) { group in
            for profile in profiles {
                group.addTask {
                    let announced = Locked<Set<StimulusKind>>([])
                    let scenario = HandshakeProbe.scenario(announced: { stimuli in announced.withLock { $0 = stimuli } })
                    let result = await execute(PlannedRun(scenario: scenario, profile: profile), stateRoot: stateRoot,
                                               transcripts: transcripts)
                    let admitted = result.verdict != .fail
                    let probe = ProbeResult(
                        profile: profile.name, admitted: admitted, causeKey: admitted ? nil : result.actual,
                        cause: admitted ? nil : result.message,
                        seeAlso: admitted ? nil : result.actual.flatMap(HandshakeProbe.seeAlso(forKey:)),
                        durationMs: result.durationMs)
                    return (profile.name, Probe(result: probe, announced: announced.withLock { $0 }, rootCause: result.rootCause))
                }
            }
            var probes: [String: Probe] = [:]
            for await (name, probe) in group { probes[name] = probe }
            return probes
        }
    }

    /// The verdict of a run the probe decides: the client never got a session on its profile, so
    /// a scenario that needs one fails at once with the probe's cause (or is unsupported when the
    /// client lacks a stimulus it needs, which its adapter announced whether or not it got in).
    ///
    /// The commands of a refused connect decide nothing here: a client that never gets in has
    /// never been offered an invoke, so what it declares (or leaves out) cannot make a scenario
    /// that invokes it `unsupported`; the probe's cause is what keeps it from being judged.
    private static func decidedByProbe(_ planned: PlannedRun, probes: [String: Probe], baseSeed: UInt64) -> RunResult? {
        let scenario = planned.scenario
        guard scenario.options.needsSession, let probe = probes[planned.profile.name], !probe.result.admitted else { return nil }
        var result = Self.result(for: planned, seed: Seed.derive(baseSeed, planned.key), baseSeed: baseSeed)
        result.decidedByProbe = true
        if let reason = Scenario.unsupportedReason(needs: scenario.clientNeeds,
                                                   announced: probe.announced.union(StimulusKind.providedByHarness)) {
            result.verdict = .unsupported
            result.message = reason
            return result
        }
        result.verdict = scenario.level == .must ? .fail : .warn
        let cause = probe.result.cause ?? "the client never got a session"
        result.message = "not run: \(cause) in the handshake probe\(probe.result.seeAlso.map { " (see \($0))" } ?? "")"
        result.expected = "a session (hello-ok) from a Gateway that approves every device, which this scenario needs"
        result.actual = probe.result.causeKey
        result.rootCause = probe.rootCause
        return result
    }

    /// Points each failed probe's "see also" at a scenario that really shows its cause in this
    /// invocation: the handshake scenario the refusal code names when it failed here (or was not
    /// run), otherwise a scenario that ran on the same profile and failed, preferring one whose
    /// failure names the refusal code (a client that fails only HS-011 with INVALID_REQUEST is not
    /// sent to HS-001, which it passed). The runs the probe decided are reworded to match.
    static func pointToShowingScenario(_ probes: [ProbeResult], results: inout [RunResult]) -> [ProbeResult] {
        probes.map { probe in
            guard !probe.admitted, let named = probe.seeAlso else { return probe }
            let onProfile = results.filter { $0.profile == probe.profile && !$0.decidedByProbe }
            let showing = onProfile.filter { $0.verdict != .pass && $0.verdict != .unsupported }
            if showing.contains(where: { $0.id == named }) || !onProfile.contains(where: { $0.id == named }) { return probe }
            let code = probe.causeKey.flatMap { key in key.hasPrefix("refused:") ? String(key.dropFirst("refused:".count).prefix { $0 != "," }) : nil }
            let better = showing.first { result in code.map { result.message.contains($0) || (result.actual ?? "").contains($0) } ?? false }
                ?? showing.first
            var pointed = probe
            pointed.seeAlso = better?.id
            let old = " (see \(named))"
            let new = better.map { " (see \($0.id))" } ?? ""
            for index in results.indices where results[index].profile == probe.profile && results[index].decidedByProbe {
                results[index].message = results[index].message.replacingOccurrences(of: old, with: new)
            }
            return pointed
        }
    }

    private enum Outcome: Sendable {
        case finished
        case threw(any Error)
        case fatal(String)
        case timedOut(Duration, WakeReason)
        case cancelled
    }

    /// Where a simulated run's virtual time starts: 2026-01-01T00:00:00Z, the instant of the
    /// specification's examples, so that every run of a seed sees the same timestamps.
    public static let simulationStartMs: Int64 = 1_767_225_600_000

    /// The real time one simulated run may take before it is stopped as a run that never
    /// settles (a safety net; a simulated run normally takes milliseconds).
    public static let simulationWallClockLimit: Duration = .seconds(120)

    /// The time and network a run's Gateways and client live in.
    private enum Environment: Sendable {
        case simulated(VirtualTimeline, InMemoryNetwork)
        case realTime
    }

    /// Runs one scenario against one profile; never throws: every problem becomes a verdict.
    private func execute(_ planned: PlannedRun, stateRoot: URL, transcripts: TranscriptDirectory) async -> RunResult {
        switch driver.runModel {
        case .realTime:
            return await execute(planned, in: .realTime, stateRoot: stateRoot, transcripts: transcripts)
        case .simulation:
            // Task executors (and so simulated runs) need the Swift 6 runtime: macOS 15, iOS 18.
            // Earlier systems run in-process clients in real time over loopback sockets.
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else {
                return await execute(planned, in: .realTime, stateRoot: stateRoot, transcripts: transcripts)
            }
            let started = ContinuousClock.now
            let runSeed = Seed.derive(configuration.seed, planned.key)
            let timeline = VirtualTimeline(startMs: Self.simulationStartMs)
            let executor = SimulationExecutor(
                seed: Seed.derive(runSeed, "schedule"), timeline: timeline,
                limits: .init(wallClock: Self.simulationWallClockLimit * max(1, configuration.slowness)))
            let environment = Environment.simulated(timeline, InMemoryNetwork())
            do {
                return try await executor.run {
                    await execute(planned, in: environment, stateRoot: stateRoot, transcripts: transcripts)
                }
            } catch {
                // The simulation itself broke down (a task escaped it, or it never settled).
                var result = Self.result(for: planned, seed: runSeed, baseSeed: configuration.seed)
                result.verdict = .error
                result.message = "\(error)"
                result.durationMs = (ContinuousClock.now - started).milliseconds
                return result
            }
        }
    }

    /// How many of the client's last log lines a result keeps (``RunResult/clientLogTail``).
    static let clientLogTailLines = 20

    private static func result(for planned: PlannedRun, seed: UInt64, baseSeed: UInt64) -> RunResult {
        let scenario = planned.scenario
        return RunResult(
            id: scenario.id, title: scenario.title, area: scenario.area.code, level: scenario.level,
            requirement: scenario.requirement, source: scenario.source, profile: planned.profile.name, verdict: .pass,
            seed: seed, baseSeed: baseSeed, durationMs: 0)
    }

    private func execute(_ planned: PlannedRun, in environment: Environment, stateRoot: URL,
                         transcripts: TranscriptDirectory) async -> RunResult {
        let started = ContinuousClock.now
        let scenario = planned.scenario
        let runSeed = Seed.derive(configuration.seed, planned.key)
        var result = Self.result(for: planned, seed: runSeed, baseSeed: configuration.seed)
        func finish(_ verdict: Verdict, _ message: String) -> RunResult {
            result.verdict = verdict
            result.message = message
            result.durationMs = (ContinuousClock.now - started).milliseconds
            return result
        }

        let stateDirectory = stateRoot.appendingPathComponent(TranscriptDirectory.fileName(for: planned.key), isDirectory: true)
        defer {
            // An empty directory (the in-process client keeps its files in memory) goes with
            // one rmdir; FileManager removes whatever a client left in it otherwise.
            if !configuration.keepState, rmdir(stateDirectory.path) != 0 {
                try? FileManager.default.removeItem(at: stateDirectory)
            }
        }
        // The state root exists (run(observing:) made it): one mkdir answers the common case.
        if mkdir(stateDirectory.path, 0o700) != 0 {
            do {
                try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
            } catch {
                return finish(.error, "cannot create the state directory \(stateDirectory.path): \(error.localizedDescription)")
            }
        }

        let (fatalMessages, fatalContinuation) = AsyncStream<String>.makeStream()
        var gatewayConfiguration = GatewayLaunch.standardConfiguration(
            profile: planned.profile, seed: runSeed, port: configuration.port, sharedToken: scenario.options.sharedToken)
        let connector: any WebSocketConnector
        let timeline: any Timeline
        switch environment {
        case .simulated(let virtual, let network):
            // One virtual time line and one in-memory network for the run's Gateways and client.
            gatewayConfiguration.clock = .manual(on: virtual)
            gatewayConfiguration.network = network
            connector = SimulatedClientConnector(network: network, reportEscape: { fatalContinuation.yield($0) })
            timeline = virtual
        case .realTime:
            connector = SocketConnector()
            timeline = WallTimeline()
        }
        gatewayConfiguration.redactSecrets = !configuration.showSecrets
        scenario.options.configureGateway(&gatewayConfiguration)
        let launch = GatewayLaunch(configuration: gatewayConfiguration, label: "gateway")
        let gateway: Gateway
        do {
            gateway = try await gatewayFactory(launch)
        } catch {
            return finish(.error, "cannot start the Gateway: \(error)")
        }

        let context = ClientSessionContext(
            runKey: planned.key, slowness: configuration.slowness, helloTimeoutMs: configuration.helloTimeoutMs,
            reportFatal: { fatalContinuation.yield($0) }, timeline: timeline)
        let session: any ClientSession
        do {
            session = try await driver.makeSession(context)
        } catch {
            await gateway.shutdown()
            return finish(.error, "cannot prepare the client: \(error)")
        }
        let simulated: Bool = if case .simulated = environment { true } else { false }
        // A Gateway on TLS (`harness run --tls`) is trusted by its certificate's fingerprint.
        let pinned = gateway.tlsFingerprint.map { SocketConnector(tls: WebSocketTLSClientConfiguration(pinnedCertificateSHA256: $0)) }
        let nodeConfiguration = NodeConfiguration(
            gatewayURL: gateway.url, sharedToken: scenario.options.sharedToken, stateDirectory: stateDirectory, seed: runSeed,
            clock: simulated ? gateway.clock : nil, connector: pinned ?? connector, tlsFingerprint: gateway.tlsFingerprint,
            keepsState: configuration.keepState)
        let client = ScenarioClient(
            session: session, configuration: nodeConfiguration, needs: scenario.needs,
            stimulusTimeout: context.scaled(configuration.stimulusTimeoutMs),
            note: { ScenarioRun.note($0, on: gateway) })
        let run = ScenarioRun(
            scenario: scenario, profile: planned.profile, seed: runSeed, slowness: configuration.slowness,
            stepTimeoutMs: configuration.stepTimeoutMs, gateway: gateway, client: client, stateDirectory: stateDirectory,
            probeCommands: configuration.probeCommands, gatewayFactory: gatewayFactory)
        run.note("run \(planned.key) --seed \(configuration.seed)\(simulated ? ", simulated" : ", real time")")

        let deadline = simulated ? .milliseconds(Int64(scenario.options.simulatedTimeoutMs))
            : context.scaled(scenario.options.timeoutMs)
        let outcome: Outcome = await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                do {
                    if scenario.options.startsClient { try await client.start() }
                    try await scenario.body(run)
                    return .finished
                } catch {
                    return .threw(error)
                }
            }
            group.addTask {
                for await message in fatalMessages { return .fatal(message) }
                return .cancelled
            }
            group.addTask {
                let reason = await timeline.sleep(for: deadline, purpose: .deadline)
                return reason == .cancelled ? .cancelled : .timedOut(deadline, reason)
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            fatalContinuation.finish()
            return first
        }

        let (verdict, message) = Self.verdict(for: outcome, scenario: scenario, warnings: run.warnings, result: &result)
        if verdict != .pass && verdict != .unsupported {
            // Where the scenario gave up, for a reader of the transcript (before the client stops
            // and its connections close).
            gateway.transcript.record(TranscriptEntry(
                monotonicMs: gateway.transcript.elapsedMs, gatewayMs: gateway.clock.nowMs, connectionId: "",
                kind: .failure, text: "\(verdict.rawValue): \(message)"))
        }
        await session.stop()
        for gateway in run.gateways { await gateway.shutdown() }

        // What the client logged and what the scenario reported may quote a token: everything
        // that reaches the report and the files goes through the Gateways' redactors, which
        // know every secret the run configured, issued or saw.
        let redactors = run.gateways.map(\.secrets)
        func redact(_ text: String) -> String { redactors.reduce(text) { $1.redact(text: $0) } }
        let diagnostics = session.diagnostics()
        // Only the lines that are kept are redacted: the report's tail, or every line when the
        // transcript is written. The others still teach the redactors the secrets they reveal
        // (as redacting them did), so that later lines and messages are redacted alike.
        let writesTranscript = transcripts.shouldWrite(verdict)
        let keptLines = writesTranscript ? diagnostics.log.count : min(Self.clientLogTailLines, diagnostics.log.count)
        for line in diagnostics.log.dropLast(keptLines) {
            var text = line
            for (index, redactor) in redactors.enumerated() {
                if index == redactors.count - 1 { redactor.learnSecrets(inText: text) } else { text = redactor.redact(text: text) }
            }
        }
        let clientLog = diagnostics.log.suffix(keptLines).map(redact)
        result.warnings = run.warnings.map { warning in
            var warning = warning
            warning.message = redact(warning.message)
            warning.expected = warning.expected.map(redact)
            warning.actual = warning.actual.map(redact)
            return warning
        }
        result.notes = diagnostics.notes.map(redact)
        if let unserved = UnservedMethodNote.note(events: run.gateways.flatMap(\.events.all)) { result.notes.append(unserved) }
        result.clientLogTail = Array(clientLog.suffix(Self.clientLogTailLines))
        let redactedMessage = redact(message)
        result = finish(verdict, redactedMessage)
        result.expected = result.expected.map(redact)
        result.actual = result.actual.map(redact)
        if verdict != .pass && verdict != .unsupported && result.rootCause == nil {
            result.rootCause = RootCauseAnalysis.cause(
                events: run.gateways.flatMap(\.events.all), failure: RootCauseAnalysis.Failure(message: redactedMessage, verdict: verdict))
        }

        if writesTranscript {
            transcripts.write(key: planned.key, gateways: run.gateways, clientLog: clientLog, into: &result)
        }
        return result
    }

    private static func verdict(for outcome: Outcome, scenario: Scenario, warnings: [ScenarioFailure],
                                result: inout RunResult) -> (Verdict, String) {
        switch outcome {
        case .finished:
            guard let first = warnings.first else { return (.pass, "") }
            result.expected = first.expected
            result.actual = first.actual
            return (.warn, first.message)
        case .threw(let error as ScenarioFailure):
            result.expected = error.expected
            result.actual = error.actual
            let level = error.level ?? scenario.level
            return (level == .must ? .fail : .warn, error.message)
        case .threw(let error as ScenarioUnsupported):
            return (.unsupported, error.message)
        case .threw(let error as ScenarioTimedOut):
            return (.timeout, error.message)
        case .threw(let error as HarnessError):
            return (.error, error.message)
        case .threw(is CancellationError):
            return (.error, "the scenario was cancelled")
        case .threw(let error):
            return (.error, "\(type(of: error)): \(error)")
        case .fatal(let message):
            return (.error, message)
        case .timedOut(_, .nothingPending):
            return (.timeout, "the scenario stopped making progress: nothing more can happen in the simulated run (no task "
                        + "is ready, no timer is pending) and it has not finished")
        case .timedOut(let deadline, _):
            return (.timeout, "the scenario did not finish within \(deadline.milliseconds) ms")
        case .cancelled:
            return (.error, "the scenario was cancelled")
        }
    }
}

/// Where transcripts go; the failing-runs default directory is created on first use.
///
/// The default is one directory per invocation under a per-user base in the system temporary
/// directory, `<tmp>/openclaw-harness-<uid>/transcripts-<pid>-<random>`. It is removed when the
/// invocation passes; a failing invocation keeps it (the report names it) until the next
/// invocation of the same user starts, which removes every directory of an invocation that is no
/// longer running. So the temporary directory never holds more than the current invocation's
/// transcripts (and those of invocations still running, which a fixed directory emptied at
/// start would have destroyed). `--transcripts DIR` is never cleaned.
final class TranscriptDirectory: Sendable {
    private let policy: TranscriptPolicy
    // The lock guards the lazily created directory.
    private let created = Locked<URL?>(nil)

    init(policy: TranscriptPolicy) {
        self.policy = policy
    }

    var usedPath: String? { created.withLock { $0?.path } }

    func shouldWrite(_ verdict: Verdict) -> Bool {
        switch policy {
        case .none: false
        case .all: true
        case .failing: verdict != .pass && verdict != .unsupported
        }
    }

    /// `ID@profile` made safe for a file name.
    static func fileName(for key: String) -> String {
        String(key.map { $0.isLetter || $0.isNumber || "@._-".contains($0) ? $0 : "_" })
    }

    /// The per-user base: `<tmp>/openclaw-harness-<uid>`, private to the user. `nil` when it
    /// exists but belongs to somebody else or is not a directory.
    static func temporaryBase() -> URL? {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-harness-\(getuid())")
        _ = mkdir(base.path, 0o700)
        var info = stat()
        guard lstat(base.path, &info) == 0, (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFDIR), info.st_uid == getuid() else { return nil }
        return base
    }

    /// A fresh directory for this invocation's transcripts, after removing those of
    /// invocations that are no longer running.
    static func temporaryParent() -> URL {
        let name = "transcripts-\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"
        guard let base = temporaryBase() else {
            return FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-harness-\(name)")
        }
        removeStale(in: base)
        return base.appendingPathComponent(name)
    }

    /// Removes `transcripts-<pid>-*` directories whose process is gone.
    static func removeStale(in base: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base.path) else { return }
        for name in names where name.hasPrefix("transcripts-") {
            let parts = name.split(separator: "-")
            guard parts.count >= 3, let pid = pid_t(parts[1]) else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(at: base.appendingPathComponent(name))
            }
        }
    }

    /// Removes the directory when it is this invocation's temporary one.
    /// - Returns: whether it was removed.
    func removeIfTemporary() -> Bool {
        guard case .failing(directory: nil) = policy else { return false }
        return created.withLock { created in
            guard let url = created else { return false }
            try? FileManager.default.removeItem(at: url)
            created = nil
            return true
        }
    }

    private func directory() -> URL? {
        created.withLock { created in
            if let created { return created }
            let url: URL
            switch policy {
            case .none: return nil
            case .all(let directory): url = directory
            case .failing(let directory): url = directory ?? Self.temporaryParent()
            }
            guard (try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)) != nil else {
                return nil
            }
            created = url
            return url
        }
    }

    func write(key: String, gateways: [Gateway], clientLog: [String], into result: inout RunResult) {
        guard let directory = directory() else {
            result.notes.append("could not create the transcript directory")
            return
        }
        let base = Self.fileName(for: key)
        for (index, gateway) in gateways.enumerated() {
            let name = index == 0 ? "\(base).jsonl" : "\(base).gateway\(index + 1).jsonl"
            let url = directory.appendingPathComponent(name)
            do {
                try gateway.transcript.write(to: url)
                if index == 0 { result.transcriptPath = url.path } else { result.extraTranscriptPaths.append(url.path) }
            } catch {
                result.notes.append("could not write \(url.path): \(error.localizedDescription)")
            }
        }
        if !clientLog.isEmpty {
            let url = directory.appendingPathComponent("\(base).client.log")
            do {
                try Data(clientLog.map { $0 + "\n" }.joined().utf8).write(to: url, options: .atomic)
                result.clientLogPath = url.path
            } catch {
                result.notes.append("could not write \(url.path): \(error.localizedDescription)")
            }
        }
    }
}

/// The in-memory network as a simulated client sees it: a connect from a task outside the
/// simulation (a plain `Task { }` in the client) would race the run instead of being part of it,
/// so it ends the run with an error that says so instead of a verdict that depends on timing.
struct SimulatedClientConnector: WebSocketConnector {
    let network: InMemoryNetwork
    let reportEscape: @Sendable (String) -> Void

    static let escapeMessage = "the client connected from a task outside the simulated run (a plain Task { } or "
        + "Task.detached, or a thread of its own): create the client's tasks with spawnTask (module Simulation), or run it "
        + "over real sockets (transport .loopbackSockets); see docs/in-process-clients.md"

    func connect(to url: String, headers: WebSocketHTTPHeaders, configuration: WebSocketConfiguration) async throws
        -> WebSocketConnection {
        guard SimulationThread.isCurrent() else {
            reportEscape(Self.escapeMessage)
            throw WebSocketError(WebSocketError.connectionFailed.kind, detail: "connect from outside the simulated run")
        }
        return try await network.connect(to: url, headers: headers, configuration: configuration)
    }

    func send(_ request: HTTPRequest, to url: String, configuration: WebSocketConfiguration) async throws -> HTTPResponse {
        guard SimulationThread.isCurrent() else {
            reportEscape(Self.escapeMessage)
            throw WebSocketError(WebSocketError.connectionFailed.kind, detail: "HTTP request from outside the simulated run")
        }
        return try await network.send(request, to: url, configuration: configuration)
    }
}
