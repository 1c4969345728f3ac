import Conformance
import MockGateway
import Testing

@Suite struct PlannerTests {
    static let catalogue: [Scenario] = {
        var scenarios: [Scenario] = []
        for area in ["HS", "PAIR", "INV", "LIFE"] {
            for number in 1...7 {
                let id = ScenarioID("\(area)-\(String(repeating: "0", count: 3 - String(number).count))\(number)")
                let profiles: ProfileSelection = number % 3 == 0 ? .current : (number % 3 == 1 ? .all : .legacy)
                scenarios.append(Scenario(id, number.isMultiple(of: 2) ? .should : .must, requirement: "r", source: "s",
                                          tags: number == 2 ? ["smoke"] : [], profiles: profiles) { _ in })
            }
        }
        return scenarios
    }()

    @Test func theMatrixHasOneRunPerScenarioAndProfileSortedByKey() {
        let runs = RunPlanner.plan(Self.catalogue, selection: RunSelection())
        let expected = Self.catalogue.reduce(0) { $0 + $1.profiles.profiles.count }
        #expect(runs.count == expected)
        #expect(runs.map(\.key) == runs.map(\.key).sorted())
        #expect(runs.contains { $0.key == "HS-001@legacy" })
        #expect(!runs.contains { $0.key == "HS-003@legacy" })
    }

    @Test(arguments: [1, 2, 3, 5, 8, 100])
    func theUnionOfAllShardsIsTheFullRunWithoutOverlap(count: Int) throws {
        let full = RunPlanner.plan(Self.catalogue, selection: RunSelection()).map(\.key)
        var seen: [String] = []
        for index in 1...count {
            let shard = try #require(Shard(index: index, count: count))
            seen += RunPlanner.plan(Self.catalogue, selection: RunSelection(shard: shard)).map(\.key)
        }
        #expect(seen.count == full.count)
        #expect(Set(seen) == Set(full))
    }

    @Test func shardingIsDeterministic() throws {
        let shard = try #require(Shard(parsing: "2/3"))
        let first = RunPlanner.plan(Self.catalogue, selection: RunSelection(shard: shard)).map(\.key)
        let second = RunPlanner.plan(Self.catalogue.reversed(), selection: RunSelection(shard: shard)).map(\.key)
        #expect(first == second)
    }

    @Test func shardsParseOnlyWhenInRange() {
        #expect(Shard(parsing: "1/1") != nil)
        #expect(Shard(parsing: "3/3")?.index == 3)
        #expect(Shard(parsing: "0/3") == nil)
        #expect(Shard(parsing: "4/3") == nil)
        #expect(Shard(parsing: "1/0") == nil)
        #expect(Shard(parsing: "a/b") == nil)
        #expect(Shard(parsing: "1/2/3") == nil)
    }

    @Test func filtersTagsAndProfilesNarrowTheRun() {
        let pairOnly = RunPlanner.plan(Self.catalogue, selection: RunSelection(filters: ["pair-*"]))
        #expect(!pairOnly.isEmpty && pairOnly.allSatisfy { $0.scenario.id.hasPrefix("PAIR-") })
        let two = RunPlanner.plan(Self.catalogue, selection: RunSelection(filters: ["HS-00?", "LIFE-001"], profileNames: ["current"]))
        #expect(two.allSatisfy { $0.profile.name == "current" })
        #expect(Set(two.map(\.scenario.id)) == ["HS-001", "HS-003", "HS-004", "HS-006", "HS-007", "LIFE-001", ])
        let smoke = RunPlanner.plan(Self.catalogue, selection: RunSelection(tags: ["smoke"]))
        #expect(Set(smoke.map(\.scenario.id)) == ["HS-002", "PAIR-002", "INV-002", "LIFE-002"])
    }

    @Test func globsMatchLikeAShell() {
        #expect(Glob.matches("PAIR-*", "PAIR-006"))
        #expect(Glob.matches("*-006", "PAIR-006"))
        #expect(Glob.matches("P?IR-00*", "PAIR-006"))
        #expect(Glob.matches("*", "HS-001"))
        #expect(!Glob.matches("PAIR-*", "HS-001"))
        #expect(!Glob.matches("PAIR-00", "PAIR-006"))
        #expect(Glob.matches("pair-006", "PAIR-006"))
    }
}
