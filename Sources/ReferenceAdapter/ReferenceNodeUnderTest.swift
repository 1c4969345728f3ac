import Conformance
import Foundation
import MockGateway
import ReferenceNode
import Locking

/// The reference client as a `NodeUnderTest`, optionally with mutants switched on: what
/// `harness run --node reference [--mutant NAME]` and `harness selftest` run.
public final class ReferenceNodeUnderTest: NodeUnderTest {
    /// The mutants switched on (none for the correct client).
    public let mutants: Set<Mutant>
    // The running client; guarded by the lock so start, stop and apply may come from any task.
    private let client = Locked<ReferenceClient?>(nil)
    // The observations of every client started so far (a restart starts a new one), for the log.
    private let logs = Locked<[ObservationLog]>([])
    // The state files of a simulated run, by state directory: a restart in the run finds them.
    private let memory = Locked<(directory: URL, files: InMemoryStateFiles, keep: Bool)?>(nil)

    /// Who the client says it is in `connect.client` (the iPhone app by default).
    public let persona: ClientPersona

    /// Where it waits for an explicit `connect` instead of reconnecting by itself (legal variants,
    /// `ReferenceConfiguration.waitsForUser`).
    public let waitsForUser: UserWaits

    /// How the client reaches the Gateway: WebSocket sessions, or the Apple Watch direct mode.
    public let transport: ReferenceTransport

    /// Creates the adapter.
    /// - Parameters:
    ///   - mutants: the bugs to switch on; a mutant of the Watch mode (``Mutant/isWatchMode``)
    ///     makes the client a Watch client whatever `transport` says.
    ///   - persona: the client it presents itself as (`.nodeHost` for a node host).
    ///   - waitsForUser: where to wait for the user (after `PAIRING_REQUIRED`, as upstream's
    ///     TypeScript client and OpenClawKit do; after an invalid challenge, as the TypeScript
    ///     client does).
    ///   - transport: WebSocket sessions (the default), or the Apple Watch direct mode (the
    ///     persona is then the Apple Watch, and only the `watch-pair` stimulus is announced).
    public init(mutants: Set<Mutant> = [], persona: ClientPersona = .iPhone, waitsForUser: UserWaits = [],
                transport: ReferenceTransport = .webSocket) {
        self.mutants = mutants
        self.transport = mutants.contains(where: \.isWatchMode) ? .watchDirect : transport
        self.persona = self.transport == .watchDirect ? .appleWatch : persona
        self.waitsForUser = waitsForUser
    }

    /// What the reference client can do, in the engine's terms.
    public var supportedStimuli: Set<StimulusKind> {
        // The operator session is on by default, so every stimulus name is supported; a Watch
        // client acts only on the Watch's own stimuli.
        let names = transport == .watchDirect ? ReferenceStimulus.watchNames : ReferenceStimulus.allNames
        return Set(names.map { StimulusKind(rawValue: $0) })
    }

    /// Starts the client against the run's Gateway: on the run's virtual clock and in-memory
    /// network in a simulated run, with keys and request ids derived from the run's seed. In a
    /// simulated run the client's state files are in memory too (written into the state
    /// directory when it stops, if the run keeps it).
    public func start(_ configuration: NodeConfiguration) async throws {
        let clock: any ClientClock = configuration.clock.map(VirtualClientClock.init) ?? SystemClientClock()
        let files: InMemoryStateFiles? = configuration.isSimulated ? memory.withLock { memory in
            if let memory, memory.directory == configuration.stateDirectory { return memory.files }
            let files = InMemoryStateFiles()
            memory = (configuration.stateDirectory, files, configuration.keepsState)
            return files
        } : nil
        var referenceConfiguration = ReferenceConfiguration(
            gatewayURL: configuration.gatewayURL, sharedToken: configuration.sharedToken,
            stateDirectory: configuration.stateDirectory, seed: configuration.seed, clock: clock, mutants: mutants,
            persona: persona, connector: configuration.connector, reproducible: true, durableState: false, memoryState: files)
        referenceConfiguration.waitsForUser = waitsForUser
        if transport == .watchDirect {
            referenceConfiguration.transport = .watchDirect
            referenceConfiguration.operatorSession = .disabled
        }
        let reference = ReferenceClient(configuration: referenceConfiguration)
        let previous = client.withLock { current -> ReferenceClient? in
            defer { current = reference }
            return current
        }
        logs.withLock { $0.append(reference.observations) }
        await previous?.stop()
        try await reference.start()
    }

    /// Stops the client.
    public func stop() async {
        let current = client.withLock { current -> ReferenceClient? in
            defer { current = nil }
            return current
        }
        await current?.stop()
        if let kept = memory.withLock({ $0 }), kept.keep {
            // Best effort, as the client's own writes: the run's verdict does not depend on it.
            try? kept.files.write(to: kept.directory)
        }
    }

    /// The client's observations (what it did and decided), one line each.
    public func logLines() -> [String] {
        logs.withLock { $0 }.enumerated().flatMap { index, log in
            log.all.map { "reference[\(index + 1)]: \($0)" }
        }
    }

    /// Applies a stimulus by its adapter-protocol name and parameters.
    /// - Throws: `ScenarioUnsupported` when the client cannot act on it.
    public func apply(_ stimulus: Stimulus) async throws -> StimulusReply {
        guard let reference = client.withLock({ $0 }) else { return .error("the client is not running") }
        switch await reference.apply(name: stimulus.kind.rawValue, params: stimulus.params) {
        case .ok: return .ok
        case .error(let message): return .error(message)
        case .unsupported(let message): throw ScenarioUnsupported(message)
        }
    }
}

/// The Gateway's manual clock as the reference client's clock: the client's backoff, timeouts
/// and tick watchdog wait in the run's virtual time (also the clock of the reference client's
/// own end-to-end tests).
package struct VirtualClientClock: ClientClock {
    let clock: GatewayClock

    /// Reads `clock`.
    package init(clock: GatewayClock) { self.clock = clock }

    package var nowMs: Int64 { clock.nowMs }

    package func sleep(untilMs deadlineMs: Int64) async throws {
        await clock.sleep(untilMs: deadlineMs)
        try Task.checkCancellation()
    }

    package var waitTimeline: any Timeline { clock.waitTimeline }
}

extension NodeUnderTestRegistry {
    /// Registers `reference` (the correct client) and, for each mutant, `reference+MUTANT`.
    public mutating func registerReferenceClients() {
        register("reference", summary: "the reference Swift client (correct)") { ReferenceNodeUnderTest() }
        register("reference-watch", summary: "the reference Swift client as an Apple Watch in direct mode (correct)") {
            ReferenceNodeUnderTest(transport: .watchDirect)
        }
        for mutant in Mutant.allCases {
            register("reference+\(mutant.rawValue)", summary: "the reference client with the \(mutant.rawValue) bug") {
                ReferenceNodeUnderTest(mutants: [mutant])
            }
        }
    }
}
