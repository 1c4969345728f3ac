import Conformance
import ConformanceTesting
import Foundation
import ReferenceAdapter
import ReferenceNode
import Scenarios
import Testing

/// The catalogue as parameterized Swift Testing cases, as a client team runs it in its own test
/// target (the separate package examples/client-package does it with a client of its own).
private let suite = ConformanceSuite("reference", scenarios: allScenarios, filters: ["HS-00[1-5]", "PAIR-001", "INV-001"]) {
    ReferenceNodeUnderTest()
}

@Suite("Conformance as Swift Testing cases")
struct ConformanceSuiteTests {
    @Test func theCasesAreTheSelectedScenariosOnEveryProfile() {
        let names = suite.cases.map(\.testDescription)
        #expect(names.contains("HS-003 [legacy]") && names.contains("PAIR-001 [current]") && names.contains("INV-001 [legacy]"))
        #expect(names.count == 14)
        #expect(!names.contains { $0.hasPrefix("HS-006") })
    }

    @Test(arguments: suite.cases)
    func theReferenceClientPasses(_ testCase: ConformanceCase) async {
        await suite.check(testCase)
    }

    @Test func aFailingCaseRecordsTheRequirementExpectedActualAndSeed() async throws {
        let broken = ConformanceSuite("reference+wrong-device-id", scenarios: allScenarios, filters: ["HS-003"],
                                      profiles: ["current"], seed: 42) {
            ReferenceNodeUnderTest(mutants: [.wrongDeviceId])
        }
        let testCase = try #require(broken.cases.first)
        let result = try await broken.run(testCase)
        #expect(broken.isFailure(result))
        let text = ConformanceSuite.describe(result)
        #expect(text.hasPrefix("HS-003 [current] FAIL (MUST): \(result.requirement)"))
        #expect(text.contains("expected: ") && text.contains("actual:   "))
        #expect(text.contains("seed:     42 (replay: --filter HS-003 --profile current --seed 42)"))
        await withKnownIssue("the mutant breaks HS-003") {
            await broken.check(testCase)
        }
        #expect(try await broken.failures().map(\.key) == ["HS-003@current"])
    }

    /// HS-011 runs even when the probe finds no session; a client whose device proof is refused
    /// again and again fails it at the second refusal, with the refusal's code, instead of
    /// waiting out the 20 s (a real-time run would spend them).
    @Test func aRepeatedDeviceAuthRefusalEndsTheSchemaScenarioAtOnce() async throws {
        let broken = ConformanceSuite("reference+wrong-device-id", scenarios: allScenarios, filters: ["HS-011"],
                                      profiles: ["current"], seed: 42) {
            ReferenceNodeUnderTest(mutants: [.wrongDeviceId])
        }
        let testCase = try #require(broken.cases.first)
        let result = try await broken.run(testCase)
        #expect(result.verdict == .fail)
        #expect(result.message == "the client never got a node session: its node connects were refused twice with DEVICE_AUTH_DEVICE_ID_MISMATCH",
                "\(ConformanceSuite.describe(result))")
        #expect(result.actual == "DEVICE_AUTH_DEVICE_ID_MISMATCH")
    }

    /// A client that cannot run in the simulation runs over real loopback sockets instead. Real
    /// time: the test process runs hundreds of tests at once, so the deadlines get a margin
    /// (`slowness` 10; with 1 the 5 s wait for the first connection ran out on a loaded machine).
    @Test func aClientOverLoopbackSocketsPassesToo() async throws {
        let sockets = ConformanceSuite("reference", scenarios: allScenarios, filters: ["HS-001"], profiles: ["current"],
                                       transport: .loopbackSockets, slowness: 10) {
            ReferenceNodeUnderTest()
        }
        let testCase = try #require(sockets.cases.first)
        let result = try await sockets.run(testCase)
        #expect(result.verdict == .pass, "\(ConformanceSuite.describe(result))")
    }

    /// A client whose connect runs in a plain `Task { }` escapes the simulation. It never passes:
    /// either its connect from outside is caught or the run stalls waiting for it (an error that
    /// names the cause), or the scenario gives up on it first (a failure; which one depends on
    /// when the escaped task runs, which is why the contract forbids it).
    @Test func aClientThatEscapesTheSimulationNeverPasses() async throws {
        let escaping = ConformanceSuite("escaping", scenarios: allScenarios, filters: ["PAIR-001"], profiles: ["current"]) {
            EscapingNode()
        }
        let testCase = try #require(escaping.cases.first)
        for _ in 0..<5 {
            let result = try await escaping.run(testCase)
            #expect(result.verdict == .error || result.verdict == .fail, "\(ConformanceSuite.describe(result))")
            if result.verdict == .error {
                #expect(result.message.contains("outside the simulat") && result.message.contains("docs/in-process-clients.md"),
                        "\(result.message)")
            }
        }
    }
}

/// Connects from a plain `Task { }`, as a client written without `spawnTask` would.
private actor EscapingNode: NodeUnderTest {
    nonisolated let supportedStimuli: Set<StimulusKind> = []
    private var task: Task<Void, Never>?

    func start(_ configuration: NodeConfiguration) async throws {
        task = Task {
            _ = try? await configuration.connector.connect(to: configuration.gatewayURL)
        }
    }

    func stop() async { task?.cancel() }

    func apply(_ stimulus: Stimulus) async throws -> StimulusReply { throw ScenarioUnsupported("none") }
}
