import Conformance
import Foundation
import ReferenceAdapter
import ReferenceNode
import Scenarios
import Testing

/// The catalogue validated by mutation: the correct reference client passes every scenario it
/// has the stimuli for, and every mutant of it is failed by at least one scenario.
@Suite("Catalogue validated by mutation")
struct MutationMatrixTests {
    static let matrix = Task { () throws -> MutationMatrix in
        // A mutant fails at a step deadline; in process, on virtual time, 2 s is ample. The tests
        // share the machine with every other suite, so deadlines and settles are doubled.
        var configuration = RunConfiguration(seed: 20_261_130, slowness: 2, stepTimeoutMs: 2_000)
        configuration.jobs = 4
        return try await MutationMatrix.compute(scenarios: allScenarios, coverage: .mapped, configuration: configuration)
    }

    @Test func theReferenceClientPassesEveryScenario() async throws {
        let matrix = try await Self.matrix.value
        let failures = matrix.referenceFailures.map { "\($0.key): \($0.verdict.rawValue) \($0.message) \($0.expected ?? "") \($0.actual ?? "")" }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(!matrix.reference.isEmpty)
    }

    @Test func everyMutantIsCaughtByAScenario() async throws {
        let matrix = try await Self.matrix.value
        #expect(matrix.survivors.isEmpty, "surviving mutants: \(matrix.survivors)")
    }

    @Test func everyCatalogueIdIsIndexed() {
        let ids = Set(allScenarios.map(\.id))
        #expect(ids.count == allScenarios.count, "scenario IDs are unique")
        #expect(ids.contains("HS-001"))
    }

    @Test func everyMutantNamesOnlyExistingScenarios() {
        let ids = Set(allScenarios.map(\.id))
        for mutant in Mutant.allCases {
            #expect(!mutant.catalogueIDs.isEmpty, "\(mutant.rawValue) names the rule it breaks")
            for id in mutant.catalogueIDs {
                #expect(ids.contains(id), "\(mutant.rawValue) names \(id), which is not a scenario")
            }
        }
    }
}
