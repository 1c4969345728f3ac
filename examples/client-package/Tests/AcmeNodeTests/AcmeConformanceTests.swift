import AcmeNode
import AcmeScenarios
import Conformance
import ConformanceTesting
import Scenarios
import Testing

/// The built-in catalogue plus Acme's own scenarios. `combined` refuses a user scenario whose ID
/// is not in the `X-` namespace or repeats one, so Acme's scenarios can never shadow the catalogue.
let catalogue = try! ScenarioCatalogue.combined(Scenarios.allScenarios, with: AcmeScenarios.allScenarios)

/// The part of the catalogue Acme's small node implements (it has no operator session, no
/// presence beacon and no push), plus every Acme scenario.
let suite = ConformanceSuite(
    "acme", scenarios: catalogue,
    filters: ["HS-00[1-7]", "HS-009", "HS-010", "PAIR-00[1-4]", "INV-00[1-4]", "LIFE-00[1-4]", "X-ACME-*"]
) { AcmeNode() }

@Suite("Acme's node against the conformance catalogue")
struct AcmeConformanceTests {
    /// One test case per scenario and profile; a failure shows the requirement, expected and
    /// actual, and the seed that replays it.
    @Test(arguments: suite.cases)
    func conformance(_ testCase: ConformanceCase) async {
        await suite.check(testCase)
    }

    /// The custom scenario is real: a node whose acme.weather ignores the city fails it.
    @Test func theWeatherScenarioCatchesABrokenNode() async throws {
        let broken = ConformanceSuite("acme-broken", scenarios: catalogue, filters: ["X-ACME-001"]) {
            AcmeNode(bug: .weatherIgnoresCity)
        }
        #expect(!broken.cases.isEmpty)
        for testCase in broken.cases {
            let result = try await broken.run(testCase)
            #expect(result.verdict == .fail, "\(ConformanceSuite.describe(result))")
            #expect(result.message.contains("city"), "\(result.message)")
        }
    }

    /// A scenario of Acme's may not take a built-in ID.
    @Test func aUserScenarioCannotShadowABuiltInOne() throws {
        let impostor = Scenario("HS-001", .must, title: "impostor", requirement: "none", source: "none",
                                tags: [], profiles: .all) { _ in }
        #expect(throws: (any Error).self) { try ScenarioCatalogue.combined(Scenarios.allScenarios, with: [impostor]) }
    }
}
