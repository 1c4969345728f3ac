import Foundation
import Locking

/// The client under test as a scenario sees it (`run.client`): start it, stimulate it, restart
/// it. Whatever the driver (in-process, process, a person), the calls are the same.
public final class ScenarioClient: Sendable {
    private struct State: Sendable {
        var supported: Set<StimulusKind> = []
        var running = false
        var configuration: NodeConfiguration
    }

    private let session: any ClientSession
    private let needs: Set<StimulusKind>
    private let stimulusTimeout: Duration
    private let note: @Sendable (String) -> Void
    // The lock guards what the client announced and whether it runs.
    private let state: Locked<State>

    init(session: any ClientSession, configuration: NodeConfiguration, needs: Set<StimulusKind>,
         stimulusTimeout: Duration, note: @escaping @Sendable (String) -> Void) {
        self.session = session
        self.needs = needs
        self.stimulusTimeout = stimulusTimeout
        self.note = note
        self.state = Locked(State(configuration: configuration))
    }

    /// The stimuli the client announced (empty before `start`). `restart` is always included:
    /// the harness can restart any client.
    public var supportedStimuli: Set<StimulusKind> { state.withLock { $0.supported } }

    /// The read-only commands the client named as safe to probe it with when it started (an
    /// adapter's hello `probeCommands`).
    public var announcedProbeCommands: [ProbeCommand] { session.probeCommands }

    /// Whether the client announced `kind`.
    public func supports(_ kind: StimulusKind) -> Bool { supportedStimuli.contains(kind) }

    /// The configuration the client was (or will be) started with.
    public var configuration: NodeConfiguration { state.withLock { $0.configuration } }

    /// Starts the client against the run's Gateway.
    /// - Parameters:
    ///   - gatewayURL: another Gateway to start against (default: the run's).
    ///   - sharedToken: the shared token to give it (default: the scenario's option).
    /// - Throws: `ScenarioUnsupported` when the client lacks a stimulus the scenario needs,
    ///   `ScenarioTimedOut` when it does not become ready, `HarnessError` when it cannot start.
    public func start(gatewayURL: String? = nil, sharedToken: String?? = nil) async throws {
        let configuration = state.withLock { state -> NodeConfiguration in
            if let gatewayURL { state.configuration.gatewayURL = gatewayURL }
            if let sharedToken { state.configuration.sharedToken = sharedToken }
            return state.configuration
        }
        note("client: start (gateway \(configuration.gatewayURL))")
        let supported = try await session.start(configuration).union(StimulusKind.providedByHarness)
        state.withLock { $0.supported = supported; $0.running = true }
        try checkNeeds(supported)
    }

    /// Asks the client to act and requires it to succeed.
    /// - Throws: `ScenarioUnsupported` when the client does not support it, `ScenarioTimedOut`
    ///   when it does not answer in time, `HarnessError` when it answers with an error.
    public func stimulate(_ stimulus: Stimulus) async throws {
        if case .error(let message) = try await reply(to: stimulus) {
            throw HarnessError("the client reported an error for stimulus \"\(stimulus.kind)\": \(message)")
        }
    }

    /// Asks the client to act and returns its answer, including an error answer (which may be
    /// correct behaviour, such as refusing to answer an expired question).
    /// - Throws: `ScenarioUnsupported` or `ScenarioTimedOut`.
    @discardableResult
    public func reply(to stimulus: Stimulus) async throws -> StimulusReply {
        if stimulus.kind == .restart {
            try await restart()
            return .ok
        }
        guard supports(stimulus.kind) else {
            throw ScenarioUnsupported("the client does not support the stimulus \"\(stimulus.kind)\"")
        }
        note("stimulus: \(stimulus)")
        let reply = try await session.apply(stimulus, timeout: stimulusTimeout)
        switch reply {
        case .ok: note("stimulus \(stimulus.kind): ok")
        case .error(let message): note("stimulus \(stimulus.kind): error: \(message)")
        }
        return reply
    }

    /// Restarts the client, keeping its state directory (an app relaunch).
    public func restart() async throws {
        note("client: restart")
        let supported = try await session.restart(timeout: stimulusTimeout).union(StimulusKind.providedByHarness)
        state.withLock { $0.supported = supported; $0.running = true }
    }

    /// Stops the client (it can be started again).
    public func stop() async {
        note("client: stop")
        state.withLock { $0.running = false }
        await session.stop()
    }

    /// What the client wrote besides protocol messages.
    public func diagnostics() -> ClientDiagnostics { session.diagnostics() }

    private func checkNeeds(_ supported: Set<StimulusKind>) throws {
        if let reason = Scenario.unsupportedReason(needs: needs, announced: supported) { throw ScenarioUnsupported(reason) }
    }
}
