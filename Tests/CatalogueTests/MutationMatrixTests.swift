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
        // The full matrix, every mutant against every scenario: in-process runs are simulations,
        // so a mutant is judged as fast as the correct client and the result does not depend on
        // how busy the machine is.
        let configuration = RunConfiguration(seed: 20_261_130)
        return try await MutationMatrix.compute(scenarios: allScenarios, coverage: .full, configuration: configuration)
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

    /// Every text a run can show a person (message, expected, actual, warnings, notes, root
    /// cause), for the correct client and every mutant, is free of Swift's debug formatting.
    @Test func noMessageShowsSwiftOptionals() async throws {
        let matrix = try await Self.matrix.value
        let runs = matrix.reference.map { ("reference", $0) } + matrix.mutants.flatMap { name, results in results.map { (name, $0) } }
        var offenders: [String] = []
        for (client, result) in runs {
            let texts = [result.message, result.expected ?? "", result.actual ?? "", result.rootCause?.summary ?? ""]
                + result.warnings.map(\.description) + result.notes
            for text in texts where text.contains("Optional(") || text.range(of: #"\bnil\b"#, options: .regularExpression) != nil {
                offenders.append("\(result.key) (\(client)): \(text.prefix(200))")
            }
        }
        #expect(offenders.isEmpty, "\(offenders.count) texts:\n\(offenders.prefix(20).joined(separator: "\n"))")
    }

    @Test func everyScenarioCatchesAMutant() async throws {
        let matrix = try await Self.matrix.value
        #expect(matrix.scenariosWithoutKill.isEmpty, "scenarios that catch no mutant: \(matrix.scenariosWithoutKill)")
    }

    @Test func everyMutantIsCaughtByAScenarioItNames() async throws {
        let matrix = try await Self.matrix.value
        for mutant in Mutant.allCases {
            let killers = Set(matrix.killers(of: mutant.rawValue))
            #expect(!killers.isDisjoint(with: mutant.catalogueIDs),
                    "\(mutant.rawValue) names \(mutant.catalogueIDs) but is caught by \(killers.sorted())")
        }
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
