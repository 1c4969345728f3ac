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
}
