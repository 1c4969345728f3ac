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

/// Shell-style globs on scenario IDs, case-insensitive: `*` any run of characters, `?` one
/// character, `[...]` one character of a class (`[1-5]`, `[AB]`, `[!0]` for any but `0`). An
/// unterminated `[` stands for itself.
public enum Glob {
    private enum Token: Equatable {
        case literal(Character)
        case any
        case star
        case oneOf([ClosedRange<Character>], negated: Bool)

        func matches(_ character: Character) -> Bool {
            switch self {
            case .literal(let literal): return literal == character
            case .any: return true
            case .star: return false
            case .oneOf(let ranges, let negated): return ranges.contains { $0.contains(character) } != negated
            }
        }
    }

    private static func tokens(_ pattern: String) -> [Token] {
        let characters = Array(pattern.uppercased())
        var tokens: [Token] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "*": tokens.append(.star)
            case "?": tokens.append(.any)
            case "[":
                // A class runs to the first `]` after at least one member.
                var end = index + 1
                if end < characters.count, characters[end] == "!" || characters[end] == "^" { end += 1 }
                if end < characters.count, characters[end] == "]" { end += 1 }
                while end < characters.count, characters[end] != "]" { end += 1 }
                guard end < characters.count else {
                    tokens.append(.literal(character))
                    break
                }
                var member = index + 1
                let negated = characters[member] == "!" || characters[member] == "^"
                if negated { member += 1 }
                var ranges: [ClosedRange<Character>] = []
                while member < end {
                    let low = characters[member]
                    if member + 2 < end, characters[member + 1] == "-" {
                        let high = characters[member + 2]
                        ranges.append(low <= high ? low...high : high...low)
                        member += 3
                    } else {
                        ranges.append(low...low)
                        member += 1
                    }
                }
                tokens.append(.oneOf(ranges, negated: negated))
                index = end
            default:
                tokens.append(.literal(character))
            }
            index += 1
        }
        return tokens
    }

    /// Whether `pattern` matches all of `text`.
    public static func matches(_ pattern: String, _ text: String) -> Bool {
        let pattern = tokens(pattern)
        let text = Array(text.uppercased())
        var p = 0, t = 0
        var star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] != .star, pattern[p].matches(text[t]) {
                p += 1
                t += 1
            } else if p < pattern.count, pattern[p] == .star {
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
        while p < pattern.count, pattern[p] == .star { p += 1 }
        return p == pattern.count
    }
}
