import MockGateway

/// `--shard i/n`: run every `n`-th run of the sorted plan, starting with the `i`-th (1-based).
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// 1-based shard number.
    public let index: Int
    /// How many shards there are.
    public let count: Int

    /// Creates a shard; `nil` unless `1 <= index <= count`.
    public init?(index: Int, count: Int) {
        guard count >= 1, index >= 1, index <= count else { return nil }
        self.index = index
        self.count = count
    }

    /// Parses `i/n`.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// `i/n`.
    public var description: String { "\(index)/\(count)" }
}

/// What to run: which scenarios, profiles and shard.
public struct RunSelection: Sendable, Hashable {
    /// ID globs (`PAIR-*`, `HS-00?`); empty selects all. A scenario matching any glob is selected.
    public var filters: [String]
    /// Tags; empty selects all. A scenario with any of the tags is selected.
    public var tags: Set<String>
    /// Profile names; empty keeps each scenario's own profiles.
    public var profileNames: [String]
    /// The shard, if any.
    public var shard: Shard?

    /// Creates a selection.
    public init(filters: [String] = [], tags: Set<String> = [], profileNames: [String] = [], shard: Shard? = nil) {
        self.filters = filters
        self.tags = tags
        self.profileNames = profileNames
        self.shard = shard
    }
}

/// One scenario against one profile.
public struct PlannedRun: Sendable {
    /// The scenario.
    public let scenario: Scenario
    /// The profile.
    public let profile: GatewayProfile

    /// `ID@profile`: the run's name in file names and its sort key.
    public var key: String { "\(scenario.id)@\(profile.name)" }
}

/// Builds the matrix of scenarios x profiles and selects from it.
public enum RunPlanner {
    /// The runs `selection` picks from `scenarios`, sorted by `ID@profile` (the order sharding
    /// relies on).
    public static func plan(_ scenarios: [Scenario], selection: RunSelection) -> [PlannedRun] {
        var runs: [PlannedRun] = []
        for scenario in scenarios where matches(scenario, selection) {
            for profile in scenario.profiles.profiles
            where selection.profileNames.isEmpty || selection.profileNames.contains(profile.name) {
                runs.append(PlannedRun(scenario: scenario, profile: profile))
            }
        }
        runs.sort { $0.key < $1.key }
        guard let shard = selection.shard else { return runs }
        return runs.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element)
    }

    private static func matches(_ scenario: Scenario, _ selection: RunSelection) -> Bool {
        let idMatches = selection.filters.isEmpty || selection.filters.contains { Glob.matches($0, scenario.id) }
        let tagMatches = selection.tags.isEmpty || !selection.tags.isDisjoint(with: scenario.tags)
        return idMatches && tagMatches
    }
}

/// Shell-style globs on scenario IDs: `*` any run of characters, `?` one character; case-insensitive.
public enum Glob {
    /// Whether `pattern` matches all of `text`.
    public static func matches(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.uppercased())
        let text = Array(text.uppercased())
        var p = 0, t = 0
        var star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = p
                mark = t
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
