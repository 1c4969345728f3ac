import MockGateway

/// One conformance check: a stable identifier, the requirement it checks and the script that
/// checks it.
///
/// ```swift
/// let pair002 = Scenario(
///     "PAIR-002", .must,
///     title: "Retries while pending keep one request",
///     requirement: "While pending, every retry presents the same device identity ...",
///     source: "docs/protocol.md §5.9",
///     profiles: .all
/// ) { run in
///     let first = try await run.waitForEvent("a pairing request") { event in
///         if case .pairingRequested(let request) = event { request } else { nil }
///     }
///     try await run.expectNoEvent(within: .seconds(2), "no second request") { event in
///         if case .pairingRequested = event { true } else { false }
///     }
///     _ = first
/// }
/// ```
public struct Scenario: Sendable, Identifiable {
    /// The script: runs once per profile, against a fresh Gateway and a fresh client.
    public typealias Body = @Sendable (ScenarioRun) async throws -> Void

    /// Per-scenario knobs with sensible defaults.
    public struct Options: Sendable {
        /// Whether the runner starts the client before the body runs. Scenarios that set the
        /// Gateway up first (faults, tokens) turn this off and call `run.client.start()`.
        public var startsClient: Bool
        /// The shared Gateway token the client is started with (`OPENCLAW_GATEWAY_TOKEN`).
        public var sharedToken: String?
        /// The whole scenario's deadline in milliseconds of real time, before `--slowness`
        /// scaling (real-time runs).
        public var timeoutMs: Int
        /// The whole scenario's deadline in milliseconds of virtual time (simulated runs, where
        /// scenarios may let hours pass in microseconds; a run that stops making progress ends
        /// at once anyway).
        public var simulatedTimeoutMs: Int
        /// Adjusts the run's Gateway before it starts (auto-approval, tick interval, clock, ...).
        /// The runner has already set the profile, port, seed, identity and shared token.
        public var configureGateway: @Sendable (inout GatewayConfiguration) -> Void
        /// Whether the scenario needs the client to get a session. When the runner's handshake
        /// probe finds that the client never gets one on a profile, such scenarios fail at once
        /// with the probe's cause; scenarios that judge the handshake itself turn this off.
        public var needsSession: Bool
        /// The node commands the scenario invokes, as groups of which the client must declare at
        /// least one command each in `connect.commands` (a name ending in `*` matches a prefix,
        /// `canvas.*`). A real Gateway invokes only declared commands, so a client that lacks a
        /// group is `unsupported`, which the body decides with `run.requireDeclared` /
        /// `run.probeCommand` before waiting for anything. (A client that never gets a session
        /// fails with the handshake probe's cause instead: it is never offered an invoke.)
        public var needsCommands: [[String]]

        /// Creates options.
        public init(startsClient: Bool = true, sharedToken: String? = nil, timeoutMs: Int = 60_000,
                    simulatedTimeoutMs: Int = 86_400_000, needsSession: Bool = true, needsCommands: [[String]] = [],
                    configureGateway: @escaping @Sendable (inout GatewayConfiguration) -> Void = { _ in }) {
            self.startsClient = startsClient
            self.sharedToken = sharedToken
            self.timeoutMs = timeoutMs
            self.simulatedTimeoutMs = simulatedTimeoutMs
            self.needsSession = needsSession
            self.needsCommands = needsCommands
            self.configureGateway = configureGateway
        }

        /// The groups of ``needsCommands`` of which `declared` holds no command (all of them
        /// when the client declared nothing).
        public func missingCommands(declared: [String]) -> [[String]] {
            needsCommands.filter { group in !group.contains { pattern in declared.contains { Self.matches($0, pattern) } } }
        }

        /// Whether `command` matches `pattern` (exactly, or by prefix for a pattern ending in `*`).
        public static func matches(_ command: String, _ pattern: String) -> Bool {
            pattern.hasSuffix("*") ? command.hasPrefix(pattern.dropLast()) : command == pattern
        }

        /// The defaults: the client is started first, no shared token, a 60 s deadline (24 h of
        /// virtual time in a simulated run).
        public static let standard = Options()
    }

    /// The stable identifier (`PAIR-006`).
    public let scenarioID: ScenarioID
    /// A short title for lists.
    public let title: String
    /// `MUST` or `SHOULD`.
    public let level: RequirementLevel
    /// The requirement, one sentence, as a failure report quotes it.
    public let requirement: String
    /// Where the requirement comes from (`docs/protocol.md §5.9`, an upstream `path@commit`).
    public let source: String
    /// What the script does, in a few sentences, for `harness explain`.
    public let discussion: String?
    /// Free-form tags for `--tag`.
    public let tags: Set<String>
    /// The stimuli the client must support; without them the verdict is `unsupported`.
    public let needs: Set<StimulusKind>
    /// What the client itself must support of ``needs``: all of it but the stimuli the harness
    /// provides for any client (``StimulusKind/providedByHarness``, `restart`). What `harness
    /// list` and `explain` show, and what the runner checks against the announced stimuli.
    public var clientNeeds: Set<StimulusKind> { needs.subtracting(StimulusKind.providedByHarness) }
    /// The Gateway profiles the scenario runs against.
    public let profiles: ProfileSelection
    /// Runner knobs.
    public let options: Options
    /// The script.
    public let body: Body

    /// The identifier as text; `Identifiable` conformance.
    public var id: String { scenarioID.rawValue }
    /// The area (from the identifier's prefix).
    public var area: ScenarioArea { scenarioID.area }

    /// Declares a scenario.
    /// - Parameters:
    ///   - id: the stable `AREA-NNN` identifier.
    ///   - level: `.must` or `.should`.
    ///   - title: a short title; defaults to the requirement.
    ///   - requirement: the requirement in one sentence.
    ///   - source: the protocol document section it comes from.
    ///   - discussion: what the script does, for `harness explain`.
    ///   - tags: free-form tags for `--tag`.
    ///   - needs: the stimuli the client must support.
    ///   - profiles: the Gateway profiles to run against.
    ///   - options: runner knobs.
    ///   - body: the script.
    public init(
        _ id: ScenarioID,
        _ level: RequirementLevel,
        title: String? = nil,
        requirement: String,
        source: String,
        discussion: String? = nil,
        tags: Set<String> = [],
        needs: Set<StimulusKind> = [],
        profiles: ProfileSelection = .all,
        options: Options = .standard,
        body: @escaping Body
    ) {
        self.scenarioID = id
        self.level = level
        self.title = title ?? requirement
        self.requirement = requirement
        self.source = source
        self.discussion = discussion
        self.tags = tags
        self.needs = needs
        self.profiles = profiles
        self.options = options
        self.body = body
    }
}

extension Scenario {
    /// Why a scenario that needs the stimuli `needs` does not apply to a client that announced
    /// `announced` (the stimuli the harness provides included), or `nil` when it applies: a
    /// stimulus it needs is missing; or the client is an Apple Watch in direct mode (it announced
    /// ``StimulusKind/watchPair``), which has no WebSocket session, and the scenario is not one of
    /// the Watch's (it does not need `watch-pair`).
    public static func unsupportedReason(needs: Set<StimulusKind>, announced: Set<StimulusKind>) -> String? {
        let missing = needs.subtracting(announced).sorted()
        if !missing.isEmpty {
            return "the client does not support \(missing.map { "\"\($0)\"" }.joined(separator: ", "))"
        }
        if announced.contains(.watchPair), !needs.contains(.watchPair) {
            return "the client is an Apple Watch in direct mode (it announced \"\(StimulusKind.watchPair)\"): it has no WebSocket session, which this scenario judges"
        }
        return nil
    }
}

/// Checks a list of scenarios for mistakes that would make IDs unstable or runs ambiguous.
public enum ScenarioCatalogue {
    /// Problems in `scenarios`, one sentence each; empty when the catalogue is sound: every ID is
    /// well formed (`AREA-NNN`, known area) and unique, every scenario applies to at least one
    /// profile, and profile names are unique within a scenario.
    public static func problems(in scenarios: [Scenario]) -> [String] {
        var problems: [String] = []
        var seen: Set<String> = []
        for scenario in scenarios {
            if !scenario.scenarioID.isWellFormed {
                problems.append("\(scenario.id): not a well-formed ID (AREA-NNN with area one of \(ScenarioArea.known.map(\.code).joined(separator: ", ")), or X-OWNER-NNN for a scenario of your own)")
            }
            if !seen.insert(scenario.id).inserted {
                problems.append("\(scenario.id): declared more than once")
            }
            if scenario.profiles.profiles.isEmpty {
                problems.append("\(scenario.id): applies to no profile")
            }
            if Set(scenario.profiles.names).count != scenario.profiles.profiles.count {
                problems.append("\(scenario.id): lists a profile name twice")
            }
            if scenario.requirement.isEmpty {
                problems.append("\(scenario.id): has no requirement text")
            }
        }
        return problems
    }

    /// The built-in catalogue followed by scenarios written elsewhere, checked: every extra
    /// scenario must use an ID of the user namespace (`X-OWNER-NNN`, see
    /// ``ScenarioID/userPrefix``), so that it can never take or shadow a built-in ID, and the
    /// result must have no ``problems(in:)``.
    /// - Parameters:
    ///   - builtIn: the catalogue of this package (`allScenarios` of the `Scenarios` library).
    ///   - extra: your own scenarios.
    /// - Returns: both, built-in first.
    /// - Throws: `HarnessError` naming every problem.
    public static func combined(_ builtIn: [Scenario], with extra: [Scenario]) throws -> [Scenario] {
        var problems: [String] = []
        for scenario in extra where !scenario.scenarioID.isUserDefined {
            problems.append("\(scenario.id): a scenario of your own needs an ID of the form X-OWNER-NNN (for example X-ACME-001); "
                            + "IDs without the X- prefix belong to the built-in catalogue")
        }
        let all = builtIn + extra
        problems += Self.problems(in: all)
        guard problems.isEmpty else { throw HarnessError(problems.joined(separator: "\n")) }
        return all
    }
}
