/// Why a run failed, as far as it can be told: a stable key that groups the runs sharing the
/// cause, and a sentence for a person.
///
/// Whoever finds the cause fills `RunResult.rootCause` (the runner's `RootCauseAnalysis` of the
/// Gateway's event log, or any other check that knows better); reports group by `key` only.
public struct RootCause: Sendable, Hashable {
    /// Groups runs: equal keys mean the same first cause (`connect-refused:NOT_PAIRED`).
    public var key: String
    /// The cause in one sentence, without counts or run names (`the client never got a session;
    /// its connects were refused with NOT_PAIRED`).
    public var summary: String

    /// Creates a cause.
    public init(key: String, summary: String) {
        self.key = key
        self.summary = summary
    }
}

/// The failed runs that share one root cause.
public struct RootCauseGroup: Sendable, Hashable {
    /// The cause (the summary of the first run that had it).
    public var cause: RootCause
    /// The runs (`ID@profile`) in report order; never empty.
    public var runKeys: [String]
    /// The runs as `ID [profile]`, in report order.
    public var runNames: [String]

    /// How many runs share the cause.
    public var count: Int { runKeys.count }

    /// `42 runs: the client never got a session; ... (first in HS-004 [current])`.
    public var sentence: String {
        "\(count) run\(count == 1 ? "" : "s"): \(cause.summary) (first in \(runNames.first ?? "?"))"
    }
}

extension RunReport {
    /// The root causes of the runs that have one, largest group first (ties: the group whose
    /// first run comes first in the report).
    public var rootCauseGroups: [RootCauseGroup] {
        var order: [String] = []
        var groups: [String: RootCauseGroup] = [:]
        for result in results {
            guard let cause = result.rootCause else { continue }
            let name = "\(result.id) [\(result.profile)]"
            if groups[cause.key] == nil {
                order.append(cause.key)
                groups[cause.key] = RootCauseGroup(cause: cause, runKeys: [result.key], runNames: [name])
            } else {
                groups[cause.key]?.runKeys.append(result.key)
                groups[cause.key]?.runNames.append(name)
            }
        }
        let ranked = order.enumerated().compactMap { index, key in groups[key].map { (index, $0) } }
        return ranked.sorted { $0.1.count != $1.1.count ? $0.1.count > $1.1.count : $0.0 < $1.0 }.map(\.1)
    }

    /// The group `result` belongs to, if it has a root cause.
    public func rootCauseGroup(of result: RunResult) -> RootCauseGroup? {
        guard let key = result.rootCause?.key else { return nil }
        return rootCauseGroups.first { $0.cause.key == key }
    }
}
