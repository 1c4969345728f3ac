import Foundation
import Simulation
import Locking

/// A client implementation that runs inside the harness process (the reference node, or a
/// Swift client's own code under test).
///
/// The harness creates a fresh instance per run, calls `start` once, then `apply` for each
/// stimulus, then `stop`. A `restart` stimulus is turned into `stop` and `start` with the same
/// configuration unless `supportedStimuli` contains `.restart`.
public protocol NodeUnderTest: Sendable {
    /// The stimuli this client can act on.
    var supportedStimuli: Set<StimulusKind> { get }
    /// Connects to `configuration.gatewayURL` and keeps state in `configuration.stateDirectory`.
    func start(_ configuration: NodeConfiguration) async throws
    /// Disconnects and releases resources.
    func stop() async
    /// Acts on a stimulus.
    /// - Returns: `.ok`, or `.error` when the client tried and could not.
    /// - Throws: `ScenarioUnsupported` when it cannot act on this stimulus after all.
    func apply(_ stimulus: Stimulus) async throws -> StimulusReply
    /// What the client logged so far (its decisions, in its own words), for the report's client
    /// log. Optional: empty by default.
    func logLines() -> [String]
}

extension NodeUnderTest {
    /// No log.
    public func logLines() -> [String] { [] }
}

/// Named in-process clients that `harness run --node NAME` can use.
///
/// ```swift
/// var nodes = NodeUnderTestRegistry()
/// nodes.register("reference", summary: "the reference Swift client") { ReferenceNode() }
/// let driver = try nodes.driver(named: "reference")
/// ```
public struct NodeUnderTestRegistry: Sendable {
    /// Makes a fresh client for one run.
    public typealias Factory = @Sendable () -> any NodeUnderTest

    private struct Entry: Sendable {
        var summary: String
        var transport: InProcessTransport
        var factory: Factory
    }

    private var entries: [String: Entry] = [:]

    /// An empty registry.
    public init() {}

    /// Registers (or replaces) a client called `name`.
    /// - Parameters:
    ///   - name: the name for `harness run --node NAME`.
    ///   - summary: one line for `run --help` and reports.
    ///   - transport: `.simulated` (in memory, virtual time; the default) for a client that
    ///     connects through `NodeConfiguration.connector` and creates its tasks with `spawnTask`;
    ///     `.loopbackSockets` (real sockets, real time) for one that does not, for example a
    ///     client built on `URLSession` or plain `Task { }` (see docs/in-process-clients.md).
    ///   - factory: makes a fresh client for each run.
    public mutating func register(_ name: String, summary: String, transport: InProcessTransport = .simulated,
                                  factory: @escaping Factory) {
        entries[name] = Entry(summary: summary, transport: transport, factory: factory)
    }

    /// The registered names, sorted.
    public var names: [String] { entries.keys.sorted() }

    /// The summary given for `name`.
    public func summary(of name: String) -> String? { entries[name]?.summary }

    /// A driver that runs the client called `name`.
    /// - Throws: `HarnessError` naming the unknown client and the registered ones.
    public func driver(named name: String) throws -> any ClientDriver {
        guard let entry = entries[name] else {
            let known = names.isEmpty ? "none is registered" : "registered: \(names.joined(separator: ", "))"
            throw HarnessError("unknown node \"\(name)\" (\(known))")
        }
        return InProcessDriver(name: name, transport: entry.transport, factory: entry.factory)
    }
}

/// How an in-process client reaches the Gateway.
public enum InProcessTransport: String, Sendable, Hashable, CaseIterable {
    /// The run's in-memory network: the run is a deterministic simulation (the default).
    case simulated
    /// Real loopback sockets and real time, as a client process would; keeps the socket path
    /// of a client covered.
    case loopbackSockets = "sockets"
}

/// Runs a `NodeUnderTest` inside the harness process.
public struct InProcessDriver: ClientDriver {
    private let name: String
    private let factory: NodeUnderTestRegistry.Factory
    /// How the client reaches the Gateway.
    public let transport: InProcessTransport

    /// Creates a driver that makes a fresh client per run with `factory`.
    /// - Parameters:
    ///   - name: the client's name for reports.
    ///   - transport: simulated (in memory, virtual time; the default) or real loopback sockets.
    ///   - factory: makes a fresh client for each run.
    public init(name: String, transport: InProcessTransport = .simulated, factory: @escaping NodeUnderTestRegistry.Factory) {
        self.name = name
        self.transport = transport
        self.factory = factory
    }

    /// `in-process "NAME"`, with `over sockets` for the socket transport.
    public var summary: String {
        transport == .simulated ? "in-process \"\(name)\"" : "in-process \"\(name)\" over sockets"
    }

    /// Simulated runs, unless the client uses real sockets.
    public var runModel: RunModel { transport == .simulated ? .simulation : .realTime }

    /// In-process clients run in parallel freely.
    public var maximumParallelRuns: Int? { nil }

    /// A session around a fresh client.
    public func makeSession(_ context: ClientSessionContext) async throws -> any ClientSession {
        InProcessSession(node: factory(), helloTimeout: context.scaled(context.helloTimeoutMs), timeline: context.timeline)
    }
}

/// Adapts a `NodeUnderTest` to `ClientSession`.
final class InProcessSession: ClientSession {
    private struct State: Sendable {
        var configuration: NodeConfiguration?
        var started = false
    }

    private let node: any NodeUnderTest
    private let helloTimeout: Duration
    private let timeline: any Timeline
    // The lock guards the configuration remembered for restarts.
    private let state = Locked(State())

    init(node: any NodeUnderTest, helloTimeout: Duration, timeline: any Timeline) {
        self.node = node
        self.helloTimeout = helloTimeout
        self.timeline = timeline
    }

    func start(_ configuration: NodeConfiguration) async throws -> Set<StimulusKind> {
        state.withLock { $0.configuration = configuration; $0.started = true }
        let node = node
        try await withDeadline(helloTimeout, on: timeline,
                               ScenarioTimedOut("the client did not start within \(helloTimeout.milliseconds) ms")) {
            try await node.start(configuration)
        }
        return node.supportedStimuli
    }

    func apply(_ stimulus: Stimulus, timeout: Duration) async throws -> StimulusReply {
        let node = node
        return try await withDeadline(timeout, on: timeline,
                                      ScenarioTimedOut("no reply to stimulus \"\(stimulus.kind)\" within \(timeout.milliseconds) ms")) {
            try await node.apply(stimulus)
        }
    }

    func restart(timeout: Duration) async throws -> Set<StimulusKind> {
        if node.supportedStimuli.contains(.restart) {
            let reply = try await apply(.restart, timeout: timeout)
            if case .error(let message) = reply { throw HarnessError("the client could not restart: \(message)") }
            return node.supportedStimuli
        }
        guard let configuration = state.withLock({ $0.configuration }) else {
            throw HarnessError("restart before start")
        }
        await node.stop()
        return try await start(configuration)
    }

    func stop() async {
        let wasStarted = state.withLock { state in
            defer { state.started = false }
            return state.started
        }
        if wasStarted { await node.stop() }
    }

    func diagnostics() -> ClientDiagnostics { ClientDiagnostics(log: node.logLines()) }
}
