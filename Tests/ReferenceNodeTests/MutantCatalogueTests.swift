import Testing
@testable import ReferenceNode

struct MutantCatalogueTests {
    @Test func everyCatalogueRowHasAtLeastOneMutant() {
        let rows = ["HS-001", "HS-002", "HS-003", "HS-004", "HS-005", "HS-006", "HS-007", "HS-008", "HS-009", "HS-010",
                    "HS-011", "HS-012", "HS-013", "HS-014", "HS-015", "HS-016",
                    "PAIR-001", "PAIR-002", "PAIR-003", "PAIR-004", "PAIR-005", "PAIR-006", "PAIR-007", "PAIR-008",
                    "PAIR-009", "PAIR-010", "PAIR-011", "PAIR-012", "PAIR-013", "PAIR-014", "PAIR-015", "PAIR-016", "PAIR-017",
                    "INV-001", "INV-002", "INV-003", "INV-004", "INV-005", "INV-006", "INV-007", "INV-008", "INV-009",
                    "PRES-001", "PRES-002", "PRES-003", "PRES-004", "PRES-005", "PRES-006", "PUSH-001", "PUSH-002",
                    "PUSH-003", "PUSH-004",
                    "APPR-001", "APPR-002", "APPR-003", "APPR-004", "APPR-005", "APPR-006", "APPR-007", "APPR-008",
                    "QUES-001", "QUES-002", "QUES-003", "QUES-004", "QUES-005",
                    "LIFE-001", "LIFE-002", "LIFE-003", "LIFE-004", "LIFE-005"]
        let missing = Set(rows).subtracting(Mutant.coveredCatalogueIDs)
        #expect(missing.isEmpty, "rows without a mutant: \(missing.sorted())")
    }

    @Test func mutantNamesAreUniqueKebabCase() {
        let names = Mutant.allCases.map(\.rawValue)
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "-" || $0.isNumber } })
        #expect(Mutant.allCases.allSatisfy { !$0.rule.isEmpty && !$0.catalogueIDs.isEmpty })
    }
}
