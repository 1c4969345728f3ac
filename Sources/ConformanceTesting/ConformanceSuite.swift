import Conformance
import Foundation
import MockGateway
import Testing

/// One scenario on one Gateway profile: a test case of a ``ConformanceSuite``.
public struct ConformanceCase: Sendable, Hashable, CustomTestStringConvertible {
    /// The scenario's ID (`PAIR-006`, `X-ACME-001`).
    public let scenarioID: String
    /// The profile's name (`current`, `legacy`).
    public let profile: String

    /// Creates a case.
    public init(scenarioID: String, profile: String) {
        self.scenarioID = scenarioID
        self.profile = profile
    }

    /// `PAIR-006 [current]`, as Swift Testing lists it.
    public var testDescription: String { "\(scenarioID) [\(profile)]" }
}

/// The conformance catalogue (and scenarios of your own) as test cases of your own test target:
/// every scenario x profile against an in-process client, each one a case of a parameterized
/// Swift Testing test.
///
/// ```swift
/// import ConformanceTesting
/// import Scenarios
///
/// let suite = ConformanceSuite("my-client", scenarios: try! ScenarioCatalogue.combined(allScenarios, with: mine)) {
///     MyClientUnderTest()
/// }
///
/// @Test(arguments: suite.cases)
/// func conformance(_ testCase: ConformanceCase) async {
///     await suite.check(testCase)
/// }
/// ```
///
/// Each case runs as a deterministic simulation (the client must connect through
/// `NodeConfiguration.connector`, sleep on `NodeConfiguration.timeline` and create its tasks with
/// `spawnTask`), so the cases are fast and give the same verdict on every run of the same seed; a
/// client that cannot runs over real loopback sockets instead (`transport: .loopbackSockets`). A failing case records one
/// issue: the requirement, the failure, expected and actual, and the seed with the command that
/// replays it. `unsupported` passes (the client lacks a stimulus the scenario needs). XCTest
/// users call ``failures()`` and assert that it is empty.
public struct ConformanceSuite: Sendable {
    /// The client's name in reports (`in-process "NAME"`).
    public let name: String
    /// The scenarios the cases come from.
    public let scenarios: [Scenario]
    /// How every case runs (seed, deadlines, strictness); `selection` is set per case.
    public let configuration: RunConfiguration
    /// How the client reaches the Gateway.
    public let transport: InProcessTransport
    private let factory: NodeUnderTestRegistry.Factory

    /// Creates a suite.
    /// - Parameters:
    ///   - name: the client's name in reports.
    ///   - scenarios: the scenarios (for example `allScenarios` of the `Scenarios` library,
    ///     combined with your own through `ScenarioCatalogue.combined(_:with:)`).
    ///   - filters: ID globs (`PAIR-*`, `X-ACME-*`); empty selects every scenario.
    ///   - profiles: profile names; empty selects every profile a scenario applies to.
    ///   - seed: the seed of every case (fixed, so that a failure replays).
    ///   - strict: whether a violated SHOULD (`warn`) fails the case.
    ///   - transport: `.simulated` (the default) for a client that connects through
    ///     `NodeConfiguration.connector` and creates its tasks with `spawnTask`;
    ///     `.loopbackSockets` (real sockets and real time, slower, verdicts that wait on real
    ///     events) for one that cannot, such as a client built on `URLSession` or `Task { }`.
    ///   - slowness: multiplies every deadline, as `harness run --slowness` does. Simulated
    ///     cases run on virtual time and need no more than 1; over `.loopbackSockets` the deadlines
    ///     are real time, and a busy CI machine may need more (a passing case takes no longer).
    ///   - client: makes a fresh client for each case.
    public init(_ name: String, scenarios: [Scenario], filters: [String] = [], profiles: [String] = [],
                seed: UInt64 = 20_261_201, strict: Bool = false, transport: InProcessTransport = .simulated,
                slowness: Double = 1, client: @escaping NodeUnderTestRegistry.Factory) {
        self.name = name
        self.scenarios = scenarios
        self.factory = client
        self.transport = transport
        self.configuration = RunConfiguration(
            seed: seed, slowness: slowness, selection: RunSelection(filters: filters, profileNames: profiles), jobs: 1,
            strict: strict,
            transcripts: .none, probe: false)
    }

    /// The cases: every selected scenario on every selected profile, in catalogue order.
    public var cases: [ConformanceCase] {
        RunPlanner.plan(scenarios, selection: configuration.selection).map {
            ConformanceCase(scenarioID: $0.scenario.id, profile: $0.profile.name)
        }
    }

    private func runner(for selection: RunSelection, transcripts: TranscriptPolicy) -> Runner {
        var configuration = self.configuration
        configuration.selection = selection
        configuration.transcripts = transcripts
        return Runner(scenarios: scenarios, driver: InProcessDriver(name: name, transport: transport, factory: factory),
                      gatewayFactory: GatewayFactories.standard, configuration: configuration)
    }

    /// Runs one case.
    /// - Parameter transcripts: where to keep its transcript (none by default).
    /// - Returns: its result.
    /// - Throws: `HarnessError` when the case is not one of ``cases``.
    public func run(_ testCase: ConformanceCase, transcripts: TranscriptPolicy = .none) async throws -> RunResult {
        let selection = RunSelection(filters: [testCase.scenarioID], profileNames: [testCase.profile])
        let report = try await runner(for: selection, transcripts: transcripts).run()
        guard let result = report.results.first(where: { $0.id == testCase.scenarioID && $0.profile == testCase.profile }) else {
            throw HarnessError("no scenario \(testCase.testDescription) in this suite")
        }
        return result
    }

    /// Whether `result` fails the suite: `fail`, `error`, `timeout`, and `warn` when strict.
    public func isFailure(_ result: RunResult) -> Bool {
        result.verdict.isGatedFailure(strict: configuration.strict)
    }

    /// The text of an issue for a failing result: the requirement, the failure, expected and
    /// actual, and how to replay it.
    public static func describe(_ result: RunResult) -> String {
        var lines = ["\(result.id) [\(result.profile)] \(result.verdict.rawValue.uppercased()) (\(result.level.rawValue)): \(result.requirement)"]
        lines.append("failure:  \(result.message)")
        if let expected = result.expected { lines.append("expected: \(expected)") }
        if let actual = result.actual { lines.append("actual:   \(actual)") }
        if let cause = result.rootCause { lines.append("cause:    \(cause.summary)") }
        lines.append("seed:     \(result.baseSeed) (replay: --filter \(result.id) --profile \(result.profile) --seed \(result.baseSeed))")
        return lines.joined(separator: "\n")
    }

    /// Runs one case and records a Swift Testing issue when it fails.
    public func check(_ testCase: ConformanceCase, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            let result = try await run(testCase)
            if isFailure(result) {
                Issue.record(Comment(rawValue: Self.describe(result)), sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record(error, sourceLocation: sourceLocation)
        }
    }

    /// Runs every case and returns the failing results (for XCTest: `XCTAssertEqual(failures, [])`,
    /// or one `XCTFail(ConformanceSuite.describe(result))` each).
    public func failures() async throws -> [RunResult] {
        let report = try await runner(for: configuration.selection, transcripts: .none).run()
        return report.results.filter(isFailure)
    }
}
