import Foundation
import Simulation
import Locking

/// Starts the client under test as a process per run (`--node-command`) and talks to it over
/// the adapter protocol.
///
/// The command runs as `/bin/sh -c COMMAND` in its own process group with
/// `OPENCLAW_GATEWAY_URL`, `OPENCLAW_GATEWAY_TOKEN` (only when set) and `OPENCLAW_STATE_DIR`
/// added to the harness's environment. At the end of the run (or a restart) the harness closes
/// its stdin and sends SIGTERM to the group, then SIGKILL after the grace period.
public struct ProcessDriver: ClientDriver {
    /// The shell command line.
    public let command: String
    /// Variables added to the environment.
    public let environment: [String: String]
    /// How long the process may take to exit after SIGTERM, before scaling.
    public let graceMs: Int

    /// Creates a driver.
    public init(command: String, environment: [String: String] = [:], graceMs: Int = 2_000) {
        self.command = command
        self.environment = environment
        self.graceMs = graceMs
    }

    /// `command "..."`.
    public var summary: String { "command \"\(command)\"" }

    /// Processes run in parallel freely.
    public var maximumParallelRuns: Int? { nil }

    /// A session that starts the process on `start`.
    public func makeSession(_ context: ClientSessionContext) async throws -> any ClientSession {
        ProcessSession(command: command, environment: environment, context: context)
    }
}

final class ProcessSession: ClientSession {
    /// The commands the client's hello named as safe to probe it with.
    var probeCommands: [ProbeCommand] { state.withLock { $0.probeCommands } }

    private struct State: Sendable {
        var child: ChildProcess?
        /// Increments per process start; lines and exits of older processes are ignored.
        var generation = 0
        var stopping = false
        var hello: ResumeOnce<Set<StimulusKind>>?
        var pending: [String: (kind: StimulusKind, once: ResumeOnce<StimulusReply>)] = [:]
        var nextID = 0
        var announced: Set<StimulusKind> = []
        /// The hello's `probeCommands`.
        var probeCommands: [ProbeCommand] = []
        var configuration: NodeConfiguration?
        var log: [String] = []
        var droppedLogLines = 0
        var notes: [String] = []
        var groups: [Int32] = []
    }

    private static let maximumLogLines = 5_000
    private static let maximumNotes = 200

    private let command: String
    private let environment: [String: String]
    private let context: ClientSessionContext
    private let grace: Duration
    // All mutable state is behind the lock; continuations are resumed outside of it.
    private let state = Locked(State())

    init(command: String, environment: [String: String], context: ClientSessionContext) {
        self.command = command
        self.environment = environment
        self.context = context
        self.grace = context.scaled(2_000)
    }

    func start(_ configuration: NodeConfiguration) async throws -> Set<StimulusKind> {
        var environment = ProcessInfo.processInfo.environment.merging(self.environment) { $1 }
        environment["OPENCLAW_GATEWAY_URL"] = configuration.gatewayURL
        environment["OPENCLAW_STATE_DIR"] = configuration.stateDirectory.path
        environment["OPENCLAW_GATEWAY_TOKEN"] = configuration.sharedToken
        environment["OPENCLAW_GATEWAY_TLS_FINGERPRINT"] = configuration.tlsFingerprint
        environment["OPENCLAW_HARNESS_RUN"] = context.runKey
        environment["OPENCLAW_HARNESS_SEED"] = String(configuration.seed)

        let hello = ResumeOnce<Set<StimulusKind>>()
        let generation = state.withLock { state -> Int in
            state.generation += 1
            state.stopping = false
            state.hello = hello
            state.configuration = configuration
            return state.generation
        }
        let child = try ChildProcess.spawn(
            command: command, environment: environment,
            onStdoutLine: { [weak self] line in self?.handleStdout(line, generation: generation) },
            onStderrLine: { [weak self] line in self?.appendLog("stderr: \(line)") },
            onExit: { [weak self] exit in self?.handleExit(exit, generation: generation) })
        state.withLock { state in
            state.child = child
            state.groups.append(child.pid)
        }
        let timeout = context.scaled(context.helloTimeoutMs)
        return try await withDeadline(
            timeout, ScenarioTimedOut("no hello from the client within \(timeout.milliseconds) ms")
        ) {
            try await withCheckedThrowingContinuation { hello.install($0) }
        }
    }

    func apply(_ stimulus: Stimulus, timeout: Duration) async throws -> StimulusReply {
        let once = ResumeOnce<StimulusReply>()
        let (id, child) = state.withLock { state -> (String, ChildProcess?) in
            state.nextID += 1
            let id = String(state.nextID)
            state.pending[id] = (stimulus.kind, once)
            return (id, state.child)
        }
        guard let child, child.exit == nil else {
            forget(id)
            throw HarnessError("the client is not running")
        }
        do {
            try child.writeLine(AdapterProtocol.encode(stimulus: stimulus, id: id))
        } catch {
            forget(id)
            throw error
        }
        do {
            return try await withDeadline(
                timeout, ScenarioTimedOut("no reply to stimulus \"\(stimulus.kind)\" within \(timeout.milliseconds) ms")
            ) {
                try await withCheckedThrowingContinuation { once.install($0) }
            }
        } catch {
            forget(id)
            throw error
        }
    }

    func restart(timeout: Duration) async throws -> Set<StimulusKind> {
        let (announced, configuration) = state.withLock { ($0.announced, $0.configuration) }
        if announced.contains(.restart) {
            if case .error(let message) = try await apply(.restart, timeout: timeout) {
                throw HarnessError("the client could not restart: \(message)")
            }
            return announced
        }
        guard let configuration else { throw HarnessError("restart before start") }
        await stop()
        appendLog("--- harness: restarting the client ---")
        return try await start(configuration)
    }

    func stop() async {
        let child = state.withLock { state -> ChildProcess? in
            state.stopping = true
            defer { state.child = nil }
            return state.child
        }
        guard let child else { return }
        let termination = await child.terminate(grace: grace)
        appendLog("--- harness: client stopped: pid \(child.pid) (\(termination.command)) \(termination.exit) ---")
        for process in termination.ended {
            appendLog("--- harness: \(process) ---")
            if process.reason == .leftProcessGroup || process.reason == .ignoredSIGTERM { addNote(process.description) }
        }
    }

    func diagnostics() -> ClientDiagnostics {
        state.withLock { state in
            var log = state.log
            if state.droppedLogLines > 0 { log.insert("(\(state.droppedLogLines) earlier lines dropped)", at: 0) }
            return ClientDiagnostics(log: log, notes: state.notes, processGroups: state.groups)
        }
    }

    // MARK: Events from the reader and waiter threads

    private func handleStdout(_ line: String, generation: Int) {
        let current = state.withLock { $0.generation == generation }
        guard current else { return }
        let message: AdapterProtocol.ClientMessage
        do {
            message = try AdapterProtocol.decode(line)
        } catch {
            addNote("ignored a line on stdout (\(error)): \(Self.clip(line))")
            return
        }
        switch message {
        case .hello(let version, _, let stimuli, let probeCommands):
            let hello = state.withLock { state -> ResumeOnce<Set<StimulusKind>>? in
                defer { state.hello = nil }
                if state.hello != nil {
                    state.announced = Set(stimuli)
                    state.probeCommands = probeCommands
                }
                return state.hello
            }
            guard let hello else {
                addNote("ignored a second hello")
                return
            }
            if version != AdapterProtocol.version {
                hello.resume(.failure(HarnessError(
                    "the client speaks adapter protocol \(version); this harness speaks \(AdapterProtocol.version)")))
            } else {
                hello.resume(.success(Set(stimuli)))
            }
        case .reply(let id, let status, let message):
            let entry = state.withLock { $0.pending.removeValue(forKey: id) }
            guard let entry else {
                addNote("ignored a reply to an unknown or expired stimulus id \"\(id)\"")
                return
            }
            switch status {
            case "ok": entry.once.resume(.success(.ok))
            case "unsupported":
                entry.once.resume(.failure(ScenarioUnsupported(
                    "the client answered \"unsupported\" to \"\(entry.kind)\"\(message.map { ": \($0)" } ?? "")")))
            default: entry.once.resume(.success(.error(message ?? "no message")))
            }
        case .log(let level, let message):
            appendLog("log[\(level)]: \(message)")
        }
    }

    private func handleExit(_ exit: ChildExit, generation: Int) {
        let (unexpected, hello, pending) = state.withLock {
            state -> (Bool, ResumeOnce<Set<StimulusKind>>?, [(kind: StimulusKind, once: ResumeOnce<StimulusReply>)]) in
            guard state.generation == generation else { return (false, nil, []) }
            let hello = state.hello
            state.hello = nil
            let pending = Array(state.pending.values)
            state.pending = [:]
            return (!state.stopping, hello, pending)
        }
        guard unexpected else { return }
        let message = "the client exited unexpectedly (\(exit))"
        appendLog("--- harness: \(message) ---")
        hello?.resume(.failure(HarnessError("\(message) before its hello")))
        for entry in pending { entry.once.resume(.failure(HarnessError("\(message) while handling \"\(entry.kind)\""))) }
        context.reportFatal(message)
    }

    private func forget(_ id: String) {
        _ = state.withLock { $0.pending.removeValue(forKey: id) }
    }

    private func appendLog(_ line: String) {
        state.withLock { state in
            state.log.append(line)
            if state.log.count > Self.maximumLogLines {
                state.log.removeFirst()
                state.droppedLogLines += 1
            }
        }
    }

    private func addNote(_ note: String) {
        state.withLock { state in
            if state.notes.count < Self.maximumNotes { state.notes.append(note) }
        }
    }

    private static func clip(_ line: String) -> String {
        line.count <= 200 ? line : String(line.prefix(200)) + "..."
    }
}
