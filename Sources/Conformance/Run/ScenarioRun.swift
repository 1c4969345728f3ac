import Foundation
import MockGateway
import Simulation
import Locking

/// A position in a Gateway's event log: waits look at events from here on.
public struct EventCursor: Sendable, Hashable {
    /// The index of the first event to look at.
    public var position: Int

    /// Creates a cursor.
    public init(position: Int) { self.position = position }

    /// The start of the log: every event the Gateway ever recorded.
    public static let start = EventCursor(position: 0)
}

/// Everything one scenario run works with, and the DSL its script is written in: the Gateway,
/// the client, deadlines, checks.
///
/// Every wait has a deadline (default: the runner's step deadline). In a simulated run
/// (``isSimulated``) deadlines are virtual time: waiting lets the run's time pass, and a wait that
/// nothing pending can satisfy fails at once. In a real-time run they are real time, scaled by
/// `--slowness`. Checks throw `ScenarioFailure` with expected and actual values; the runner turns
/// that into `fail` (MUST) or `warn` (SHOULD).
public final class ScenarioRun: Sendable {
    private struct State: Sendable {
        var random: SeededRandom
        var warnings: [ScenarioFailure] = []
        var gateways: [Gateway] = []
        /// Per Gateway (by object identity): where the next wait starts by default.
        var cursors: [ObjectIdentifier: Int] = [:]
    }

    /// The scenario being run.
    public let scenario: Scenario
    /// The profile of this run.
    public let profile: GatewayProfile
    /// This run's seed (derived from `--seed` and the run's key).
    public let seed: UInt64
    /// The `--slowness` factor every deadline is multiplied by.
    public let slowness: Double
    /// The default deadline of one step, already scaled.
    public let stepTimeout: Duration
    /// The run's Gateway.
    public let gateway: Gateway
    /// The client under test.
    public let client: ScenarioClient
    /// The client's state directory for this run.
    public let stateDirectory: URL
    /// The commands named with `--probe-command`, tried before the built-in probes.
    public let configuredProbeCommands: [ProbeCommand]

    private let gatewayFactory: GatewayFactory
    // All mutable state is behind this lock.
    private let state: Locked<State>

    init(scenario: Scenario, profile: GatewayProfile, seed: UInt64, slowness: Double, stepTimeoutMs: Int,
         gateway: Gateway, client: ScenarioClient, stateDirectory: URL, probeCommands: [ProbeCommand] = [],
         gatewayFactory: @escaping GatewayFactory) {
        self.scenario = scenario
        self.profile = profile
        self.seed = seed
        self.slowness = slowness
        let simulated = gateway.clock.virtualTimeline?.isDriven ?? false
        self.stepTimeout = .milliseconds(Int64((Double(stepTimeoutMs) * (simulated ? 1 : slowness)).rounded(.up)))
        self.gateway = gateway
        self.client = client
        self.stateDirectory = stateDirectory
        self.configuredProbeCommands = probeCommands
        self.gatewayFactory = gatewayFactory
        self.state = Locked(State(random: SeededRandom(seed: seed), gateways: [gateway]))
    }

    // MARK: Time and randomness

    /// `duration` multiplied by `--slowness` in a real-time run; unchanged in a simulated run,
    /// where the machine's speed makes no difference.
    public func scaled(_ duration: Duration) -> Duration {
        isSimulated ? duration : duration * slowness
    }

    /// `milliseconds` multiplied by `--slowness`.
    public func deadline(ms milliseconds: Int) -> Duration {
        scaled(.milliseconds(milliseconds))
    }

    /// The next value of the run's seeded random source: every random choice a scenario makes
    /// must come from here so that `--seed` replays it.
    public func random(in range: ClosedRange<Int>) -> Int {
        state.withLock { Int.random(in: range, using: &$0.random) }
    }

    /// Whether the run is a deterministic simulation: the Gateway, an in-process client and this
    /// script share the run's virtual time, which moves whenever every task is idle.
    public var isSimulated: Bool { gateway.clock.virtualTimeline?.isDriven ?? false }

    /// Whether the run's time is virtual (a simulated run).
    public var usesVirtualTime: Bool { isSimulated }

    /// The time line every deadline of the run is on: the run's virtual time in a simulation,
    /// the wall clock otherwise.
    public var timeline: any Timeline { gateway.clock.waitTimeline }

    /// Lets `duration` of the run's time pass, for rules about what a client does (or must not
    /// do) over time: backoff, reconnect rates, minimum intervals.
    ///
    /// In a simulated run, everything that is due meanwhile happens at its own instant (the
    /// client's timers, the Gateway's), and the call returns when the run's virtual time has
    /// moved by `duration`; no real time passes. In a real-time run it waits `duration` scaled by
    /// `--slowness`: only rules about real time should need it there.
    public func elapse(_ duration: Duration) async {
        note("let \(duration) pass\(isSimulated ? " on the virtual clock" : "")")
        await timeline.sleep(for: scaled(duration), purpose: .activity)
    }

    /// Jumps the run's Gateway clock forward (timers, expiry), without real waiting: everything
    /// due by then happens at the new time, as after a sleep of the machine. A client that signs
    /// with its own clock is not affected on a real-time run (see `GatewayClock.peerNowMs`).
    ///
    /// In a simulated run the jump comes once everything due at the current instant is done
    /// (the client has read what it was sent), as a machine goes to sleep between two moments,
    /// never in the middle of one.
    public func advance(by duration: Duration) async {
        await gateway.clock.virtualTimeline?.untilIdle()
        note("advance the Gateway clock by \(duration)")
        // The Gateways share one clock: move it once, then let each run what became due.
        await gateway.advance(by: duration)
        for other in gateways where other !== gateway { await other.advance(by: .zero) }
    }

    // MARK: More Gateways

    /// Starts another Gateway (its own identity, state and transcript), for example the target
    /// of a `switch-gateway` stimulus. The runner shuts it down and writes its transcript.
    /// - Parameters:
    ///   - profile: its profile (default: the run's).
    ///   - sharedToken: the shared token it requires, if any.
    ///   - configure: further adjustments (auto-approval, tick interval, ...).
    public func startGateway(profile: GatewayProfile? = nil, sharedToken: String? = nil,
                             configure: @Sendable (inout GatewayConfiguration) -> Void = { _ in }) async throws -> Gateway {
        let index = state.withLock { $0.gateways.count + 1 }
        let label = "gateway\(index)"
        var configuration = GatewayLaunch.standardConfiguration(
            profile: profile ?? self.profile, seed: Seed.derive(seed, label), port: 0, sharedToken: sharedToken)
        // Every Gateway of a run shares the run's time line (virtual or real) and network.
        configuration.clock = self.gateway.clock
        configuration.network = self.gateway.configuration.network
        configure(&configuration)
        let gateway = try await gatewayFactory(GatewayLaunch(configuration: configuration, label: label))
        state.withLock { $0.gateways.append(gateway) }
        note("started \(label) at \(gateway.url)")
        return gateway
    }

    /// Every Gateway of the run, the run's own first.
    public var gateways: [Gateway] { state.withLock { $0.gateways } }

    // MARK: Events

    /// The end of `gateway`'s event log now: waits `from:` this cursor see only what happens next.
    public func mark(on gateway: (Gateway)? = nil) -> EventCursor {
        EventCursor(position: (gateway ?? self.gateway).events.count)
    }

    /// Waits for the first event (from `from`, by default just after the event the previous
    /// wait on that Gateway returned) that `match` turns into a value.
    /// - Parameters:
    ///   - what: what is awaited, for the failure message (`a pairing request`).
    ///   - within: the deadline before scaling (default: the step deadline).
    ///   - from: where to start looking.
    ///   - gateway: which Gateway (default: the run's).
    ///   - level: the level of this check, when it differs from the scenario's.
    ///   - match: returns a value for the wanted event, `nil` for others. It runs while the event
    ///     log's lock is held, so it must not read the log (`gateway.events`) itself.
    /// - Returns: the matched value.
    /// - Throws: `ScenarioFailure` when the deadline passes first.
    public func waitForEvent<T: Sendable>(
        _ what: String, within: Duration? = nil, from: EventCursor? = nil, on gateway: (Gateway)? = nil,
        level: RequirementLevel? = nil, _ match: @escaping @Sendable (MockGateway.GatewayEvent) -> T?
    ) async throws -> T {
        try await waitForMatch(what, within: within, from: from, on: gateway, level: level, match).value
    }

    /// ``waitForEvent(_:within:from:on:level:_:)`` that also returns the cursor just after the
    /// matched event, for waits that continue from there.
    public func waitForMatch<T: Sendable>(
        _ what: String, within: Duration? = nil, from: EventCursor? = nil, on gateway: (Gateway)? = nil,
        level: RequirementLevel? = nil, _ match: @escaping @Sendable (MockGateway.GatewayEvent) -> T?
    ) async throws -> (value: T, next: EventCursor) {
        let gateway = gateway ?? self.gateway
        let key = ObjectIdentifier(gateway)
        let start = from?.position ?? state.withLock { $0.cursors[key] ?? 0 }
        let timeout = within.map(scaled) ?? stepTimeout
        let events = gateway.events
        let outcome = await events.wait(from: start, timeout: timeout, on: timeline) { match($0) != nil }
        switch outcome {
        case .found(let position, let element):
            guard let value = match(element) else { break }
            state.withLock { $0.cursors[key] = max($0.cursors[key] ?? 0, position + 1) }
            return (value, EventCursor(position: position + 1))
        case .cancelled:
            throw CancellationError()
        case .timedOut(.nothingPending):
            throw ScenarioFailure(
                "\(what) never came: nothing more can happen in the run", expected: "\(what) within \(Self.format(timeout))",
                actual: "no client or Gateway timer is pending and no task can run; "
                    + Self.describeNothing(events: events, from: start), level: level)
        case .timedOut, .finished:
            break
        }
        throw ScenarioFailure(
            "timed out waiting for \(what)", expected: "\(what) within \(Self.format(timeout))",
            actual: Self.describeNothing(events: events, from: start), level: level)
    }

    /// Waits until `count` events since `from` have matched, all within one deadline.
    /// - Parameters:
    ///   - what: what is awaited, for the failure message (`3 node connects`).
    ///   - count: how many matches are needed.
    ///   - within: the deadline for all of them (default: the step deadline).
    ///   - from: where to start looking (default: after the previous wait's event).
    /// - Returns: the matched values, in order.
    /// - Throws: `ScenarioFailure` naming how many came when the deadline passes first.
    public func waitForEvents<T: Sendable>(
        _ what: String, count: Int, within: Duration? = nil, from: EventCursor? = nil, on gateway: (Gateway)? = nil,
        level: RequirementLevel? = nil, _ match: @escaping @Sendable (MockGateway.GatewayEvent) -> T?
    ) async throws -> [T] {
        let total = within.map(scaled) ?? stepTimeout
        let deadlineMs = timeline.nowMs + total.milliseconds
        var found: [T] = []
        var cursor = from
        while found.count < count {
            do {
                let (value, next) = try await waitForMatch(what, within: remaining(untilMs: deadlineMs), from: cursor,
                                                           on: gateway, level: level, match)
                found.append(value)
                cursor = next
            } catch var failure as ScenarioFailure {
                failure.actual = "\(found.count) of \(count) within \(Self.format(total)); " + (failure.actual ?? "")
                throw failure
            }
        }
        return found
    }

    /// The run-timeline instant `within` from now, scaled as the waits scale it: the deadline of
    /// a series of waits that share one time limit (pass ``remaining(untilMs:)`` to each).
    public func deadlineMs(within: Duration) -> Int64 {
        timeline.nowMs + scaled(within).milliseconds
    }

    /// What is left until `deadlineMs` (see ``deadlineMs(within:)``), as a `within:` argument for
    /// the waits: they scale it again, so the scaling is undone here.
    public func remaining(untilMs deadlineMs: Int64) -> Duration {
        let remaining = Duration.milliseconds(max(0, deadlineMs - timeline.nowMs))
        return isSimulated || slowness == 0 ? remaining : remaining / slowness
    }

    /// Waits for an event for which `predicate` holds; see `waitForEvent(_:within:from:on:level:_:)`.
    @discardableResult
    public func waitForEvent(
        _ what: String, within: Duration? = nil, from: EventCursor? = nil, on gateway: (Gateway)? = nil,
        level: RequirementLevel? = nil, where predicate: @escaping @Sendable (MockGateway.GatewayEvent) -> Bool
    ) async throws -> MockGateway.GatewayEvent {
        try await waitForEvent(what, within: within, from: from, on: gateway, level: level) { predicate($0) ? $0 : nil }
    }

    /// Requires that no event for which `predicate` holds happens within `within` (scaled),
    /// counting from `from` (default: now).
    /// - Throws: `ScenarioFailure` naming the event that happened.
    public func expectNoEvent(
        within: Duration, _ what: String, from: EventCursor? = nil, on gateway: (Gateway)? = nil,
        level: RequirementLevel? = nil, where predicate: @escaping @Sendable (MockGateway.GatewayEvent) -> Bool
    ) async throws {
        let gateway = gateway ?? self.gateway
        let start = from ?? mark(on: gateway)
        let timeout = scaled(within)
        let events = gateway.events
        let outcome = await events.wait(from: start.position, timeout: timeout, on: timeline, where: predicate)
        switch outcome {
        case .found(_, let element):
            throw ScenarioFailure(
                "unexpected \(what)", expected: "no \(what) within \(Self.format(timeout))",
                actual: element.description, level: level)
        case .cancelled:
            throw CancellationError()
        case .timedOut, .finished:
            return
        }
    }

    // MARK: Preconditions

    /// Runs a step that only sets the scene for the rule (a refusal to provoke, a session to
    /// get): when it fails, the rule was never tested, and the failure says so, with what the
    /// Gateway saw instead ("could not reach the precondition: a connect refused with
    /// PROTOCOL_MISMATCH; the client's connects were refused with DEVICE_AUTH_NONCE_REQUIRED").
    /// - Parameters:
    ///   - what: the precondition, as the failure names it.
    ///   - step: the step that reaches it.
    /// - Returns: what the step returned.
    /// - Throws: the step's `ScenarioFailure`, reworded.
    public func precondition<T: Sendable>(_ what: String, _ step: () async throws -> T) async throws -> T {
        do {
            return try await step()
        } catch var failure as ScenarioFailure {
            let cause = Self.preconditionCause(events: gateway.events.all)
            failure.message = "could not reach the precondition: \(what); \(cause)"
            failure.actual = [cause, failure.actual].compactMap { $0 }.joined(separator: "; ")
            throw failure
        }
    }

    /// What kept a run from its precondition, from the Gateway's log: the refusal codes its
    /// connects got, or why it got no refusal at all.
    static func preconditionCause(events: [MockGateway.GatewayEvent]) -> String {
        var refusals: [String] = []
        var sessions = 0
        for event in events {
            switch event {
            case .handshakeRejected(_, let error, _):
                let code = error.detailCode ?? error.code
                if !refusals.contains(code) { refusals.append(code) }
            case .sessionOpened: sessions += 1
            default: break
            }
        }
        if !refusals.isEmpty {
            return "the client's connects were refused with \(refusals.joined(separator: ", ")) instead"
                + (sessions > 0 ? " (and \(sessions) got a session)" : "")
        }
        if sessions > 0 { return "the client's connects were admitted (\(sessions) session\(sessions == 1 ? "" : "s")) instead" }
        return HandshakeProbe.diagnose(events).sentence
    }

    // MARK: Checks

    /// Requires `condition`.
    /// - Throws: `ScenarioFailure` when it is false, whose message says what happened:
    ///   `message`, then what was expected and what came (``happened(_:expected:actual:)``).
    public func expect(_ condition: Bool, _ message: @autoclosure () -> String, expected: @autoclosure () -> String? = nil,
                       actual: @autoclosure () -> String? = nil, level: RequirementLevel? = nil) throws {
        guard !condition else { return }
        let (expected, actual) = (expected(), actual())
        throw ScenarioFailure(Self.happened(message(), expected: expected, actual: actual), expected: expected, actual: actual,
                              level: level)
    }

    /// Requires `actual == expected`.
    /// - Throws: `ScenarioFailure` showing both values (as ``describe(_:)`` writes them), in the
    ///   message too.
    public func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ message: @autoclosure () -> String,
                                          level: RequirementLevel? = nil) throws {
        guard actual != expected else { return }
        let (expected, actual) = (Self.describe(expected), Self.describe(actual))
        throw ScenarioFailure(Self.happened(message(), expected: expected, actual: actual), expected: expected, actual: actual,
                              level: level)
    }

    /// A failed check's message as a report's `failure:` line shows it: what the check was
    /// about (often worded as the requirement), then what happened ("...: expected 1002, got
    /// 1008"), each value cut to 100 characters (the `expected:` and `actual:` lines keep them
    /// whole).
    static func happened(_ message: String, expected: String?, actual: String?) -> String {
        func cut(_ text: String) -> String { text.count > 100 ? String(text.prefix(99)) + "…" : text }
        switch (expected, actual) {
        case (let expected?, let actual?): return "\(message): expected \(cut(expected)), got \(cut(actual))"
        case (nil, let actual?): return "\(message): got \(cut(actual))"
        case (let expected?, nil): return "\(message): expected \(cut(expected))"
        case (nil, nil): return message
        }
    }

    /// A value as people read it in a report: an optional as its value or `none`, never
    /// `Optional(...)` or `nil`.
    public static func describe(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "none" }
            return describe(wrapped)
        }
        if mirror.displayStyle == .collection, let items = value as? [Any] {
            return "[" + items.map(describe).joined(separator: ", ") + "]"
        }
        return String(describing: value)
    }

    /// Requires `operation` to throw, and returns the error for further checks.
    /// - Throws: `ScenarioFailure` when it returns normally.
    @discardableResult
    public func expectThrows(_ message: @autoclosure () -> String, level: RequirementLevel? = nil,
                             _ operation: () async throws -> Void) async throws -> any Error {
        do {
            try await operation()
        } catch let error as ScenarioFailure {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return error
        }
        throw ScenarioFailure(message(), expected: "an error", actual: "success", level: level)
    }

    /// Fails the scenario now.
    public func fail(_ message: String, expected: String? = nil, actual: String? = nil,
                     level: RequirementLevel? = nil) throws -> Never {
        throw ScenarioFailure(message, expected: expected, actual: actual, level: level)
    }

    /// Records a violated `SHOULD` and goes on: a run that otherwise passes gets `warn`.
    public func warn(_ message: String, expected: String? = nil, actual: String? = nil) {
        note("warning: \(message)")
        state.withLock {
            $0.warnings.append(ScenarioFailure(message, expected: expected, actual: actual, level: .should))
        }
    }

    /// Ends the scenario with `unsupported` (the client lacks what this check needs).
    public func unsupported(_ message: String) throws -> Never {
        throw ScenarioUnsupported(message)
    }

    /// Requires that the client supports `kind`.
    /// - Throws: `ScenarioUnsupported` when it does not.
    public func require(_ kind: StimulusKind) throws {
        guard client.supports(kind) else {
            throw ScenarioUnsupported("the client does not support the stimulus \"\(kind)\"")
        }
    }

    /// The warnings recorded so far.
    public var warnings: [ScenarioFailure] { state.withLock { $0.warnings } }

    /// Writes a note into the transcript of the run's Gateway, so a reader sees what the
    /// scenario did between the frames.
    public func note(_ text: String) {
        Self.note(text, on: gateway)
    }

    static func note(_ text: String, on gateway: Gateway) {
        gateway.transcript.record(TranscriptEntry(
            monotonicMs: gateway.transcript.elapsedMs, gatewayMs: gateway.clock.nowMs, connectionId: "",
            kind: .note, text: text))
    }

    static func format(_ duration: Duration) -> String {
        "\(duration.milliseconds) ms"
    }

    private static func describeNothing(events: EventLog<MockGateway.GatewayEvent>, from start: Int) -> String {
        let all = events.all
        let seen = max(0, all.count - start)
        let nothing = seen == 0 ? "no event at all" : "nothing matching among \(seen) other event\(seen == 1 ? "" : "s")"
        // What the client did last tells a reader more than a count of events.
        guard let last = RootCauseAnalysis.lastClientActivity(in: all) else {
            return nothing + "; the client never connected to this Gateway"
        }
        return nothing + "; the last the Gateway saw from the client: " + last
    }
}
