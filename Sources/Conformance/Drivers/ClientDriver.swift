import Foundation
import MockGateway
import WebSocketTransport

/// Where and how a client under test is started: the values a real client reads from
/// `OPENCLAW_GATEWAY_URL`, `OPENCLAW_GATEWAY_TOKEN` and `OPENCLAW_STATE_DIR`.
public struct NodeConfiguration: Sendable {
    /// The Gateway to connect to (`ws://127.0.0.1:PORT`).
    public var gatewayURL: String
    /// The shared Gateway token, when the Gateway wants one.
    public var sharedToken: String?
    /// A directory that is fresh for every run and kept across restarts inside it. Deleting its
    /// contents is a reinstall.
    public var stateDirectory: URL
    /// A seed for the client's own random choices, if it wants reproducible runs.
    public var seed: UInt64
    /// The run's virtual clock in a simulated run (``RunModel/simulation``): an in-process client
    /// takes all its time from here (backoff, timeouts, tick watchdog), so it waits in the run's
    /// virtual time, which moves whenever the run is idle. `nil` for real time.
    public var clock: GatewayClock?
    /// How the client opens its sockets: the run's in-memory network in a simulated run, real
    /// TCP otherwise. An in-process client must connect through it.
    public var connector: any WebSocketConnector
    /// The SHA-256 fingerprint of the Gateway's TLS certificate when it serves `wss://`
    /// (`OPENCLAW_GATEWAY_TLS_FINGERPRINT`): the client pins it.
    public var tlsFingerprint: String?
    /// Whether ``stateDirectory`` is kept after the run for inspection (`harness run
    /// --keep-state`): an in-process client that keeps its state elsewhere (in memory in a
    /// simulated run) writes it into the directory when it stops.
    public var keepsState: Bool

    /// Creates a configuration.
    public init(gatewayURL: String, sharedToken: String? = nil, stateDirectory: URL, seed: UInt64 = 0,
                clock: GatewayClock? = nil, connector: any WebSocketConnector = SocketConnector(), tlsFingerprint: String? = nil,
                keepsState: Bool = false) {
        self.keepsState = keepsState
        self.gatewayURL = gatewayURL
        self.sharedToken = sharedToken
        self.stateDirectory = stateDirectory
        self.seed = seed
        self.clock = clock
        self.connector = connector
        self.tlsFingerprint = tlsFingerprint
    }

    /// Whether the run is a simulation (the client runs on the run's virtual clock).
    public var isSimulated: Bool { clock?.virtualTimeline?.isDriven ?? false }

    /// The time line the client's deadlines run on: the run's virtual time in a simulation,
    /// real time otherwise.
    public var timeline: any Timeline { clock?.waitTimeline ?? WallTimeline() }
}

/// What a driver learns about the run it makes a session for.
public struct ClientSessionContext: Sendable {
    /// `ID@profile`, for logs and prompts.
    public var runKey: String
    /// The run's `--slowness` factor.
    public var slowness: Double
    /// How long the client may take to say hello, before scaling.
    public var helloTimeoutMs: Int
    /// Called when the client dies on its own (a crash): the run ends with `error` and this message.
    public var reportFatal: @Sendable (String) -> Void
    /// The time line of the run's deadlines: virtual time in a simulated run, real time otherwise.
    public var timeline: any Timeline

    /// Creates a context.
    public init(runKey: String, slowness: Double = 1, helloTimeoutMs: Int = 10_000,
                reportFatal: @escaping @Sendable (String) -> Void = { _ in }, timeline: any Timeline = WallTimeline()) {
        self.runKey = runKey
        self.slowness = slowness
        self.helloTimeoutMs = helloTimeoutMs
        self.reportFatal = reportFatal
        self.timeline = timeline
    }

    /// `milliseconds` scaled by `slowness` (not scaled on virtual time, where the machine's
    /// speed makes no difference).
    public func scaled(_ milliseconds: Int) -> Duration {
        let factor = timeline is VirtualTimeline ? 1 : slowness
        return .milliseconds(Int64((Double(milliseconds) * factor).rounded(.up)))
    }
}

/// What a client wrote besides its protocol messages, kept for the report.
public struct ClientDiagnostics: Sendable, Hashable {
    /// Its output: stderr lines and adapter `log` lines, prefixed, oldest first (capped).
    public var log: [String]
    /// Things the harness noticed and ignored: garbage on stdout, unknown messages, late replies.
    public var notes: [String]
    /// The process groups the driver started (process driver only), for leak checks.
    public var processGroups: [Int32]

    /// Creates diagnostics.
    public init(log: [String] = [], notes: [String] = [], processGroups: [Int32] = []) {
        self.log = log
        self.notes = notes
        self.processGroups = processGroups
    }
}

/// One client under test for the duration of one run. Drivers implement it; scenarios talk to
/// it through `ScenarioClient`.
public protocol ClientSession: Sendable {
    /// Starts the client and returns the stimuli it supports.
    /// - Throws: `ScenarioTimedOut` when it does not become ready in time, `HarnessError` when it
    ///   cannot be started.
    func start(_ configuration: NodeConfiguration) async throws -> Set<StimulusKind>
    /// Applies a stimulus the client said it supports.
    /// - Throws: `ScenarioUnsupported`, `ScenarioTimedOut` or `HarnessError`.
    func apply(_ stimulus: Stimulus, timeout: Duration) async throws -> StimulusReply
    /// Stops and starts the client, keeping its state directory.
    func restart(timeout: Duration) async throws -> Set<StimulusKind>
    /// Stops the client and releases everything it holds. Idempotent.
    func stop() async
    /// Output and notes collected so far.
    func diagnostics() -> ClientDiagnostics
    /// The read-only commands the client named as safe to probe it with when it started (an
    /// adapter's hello `probeCommands`); empty by default.
    var probeCommands: [ProbeCommand] { get }
}

extension ClientSession {
    /// None: a client names no probe commands unless its session says so.
    public var probeCommands: [ProbeCommand] { [] }
}

/// How a run passes time.
public enum RunModel: Sendable, Hashable {
    /// A deterministic simulation: the Gateway, the in-process client and the scenario share one
    /// virtual time line and one executor; connections are in memory; time jumps to the next
    /// deadline whenever every task is idle. The same seed gives the same run on any machine.
    case simulation
    /// Real time: the client has its own wall clock (a process, a phone, an in-process client on
    /// real sockets); scenarios wait for the events that prove the client acted.
    case realTime
}

/// Makes one `ClientSession` per run: in-process, a process speaking the adapter protocol, or a
/// person at a terminal.
public protocol ClientDriver: Sendable {
    /// A short description for report headers (`in-process "reference"`, `command "..."`).
    var summary: String { get }
    /// How many runs may share it at once (`nil`: no limit). A person can follow only one.
    var maximumParallelRuns: Int? { get }
    /// Makes a session for one run.
    func makeSession(_ context: ClientSessionContext) async throws -> any ClientSession
    /// How runs with this driver pass time: ``RunModel/simulation`` for in-process clients on
    /// the in-memory network, ``RunModel/realTime`` for clients with their own wall clock.
    var runModel: RunModel { get }
}

extension ClientDriver {
    /// Real time, unless a driver says otherwise.
    public var runModel: RunModel { .realTime }
}
