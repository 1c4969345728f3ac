import Foundation

/// The result of one scenario against one profile: what reports are made of.
public struct RunResult: Sendable, Hashable {
    /// The scenario ID.
    public var id: String
    /// The scenario title.
    public var title: String
    /// The area code (`PAIR`).
    public var area: String
    /// `MUST` or `SHOULD`.
    public var level: RequirementLevel
    /// The requirement text.
    public var requirement: String
    /// The requirement's source.
    public var source: String
    /// The profile name.
    public var profile: String
    /// The verdict.
    public var verdict: Verdict
    /// Why it is not `pass` (empty for a clean pass).
    public var message: String
    /// What the requirement wanted, when the failing check said.
    public var expected: String?
    /// What happened instead.
    public var actual: String?
    /// Violated `SHOULD`s recorded with `run.warn`.
    public var warnings: [ScenarioFailure]
    /// The transcript of the run's Gateway, when one was written.
    public var transcriptPath: String?
    /// Transcripts of further Gateways the scenario started.
    public var extraTranscriptPaths: [String]
    /// The client's output (stderr and adapter logs), when it was written.
    public var clientLogPath: String?
    /// The last lines of the client's output.
    public var clientLogTail: [String]
    /// What the harness noticed and ignored (garbage on stdout, unknown messages).
    public var notes: [String]
    /// The run's seed.
    public var seed: UInt64
    /// The `--seed` of the whole run (what to pass to replay it).
    public var baseSeed: UInt64
    /// Wall time in milliseconds.
    public var durationMs: Int64
    /// Whether the verdict came from the handshake probe (the client never got a session on this
    /// profile) instead of running the scenario.
    public var decidedByProbe: Bool = false
    /// The first cause of a failure, shared by the runs it groups with in reports; `nil` for
    /// `pass` and `unsupported`. The runner fills it from the Gateway's event log
    /// (`RootCauseAnalysis`) unless something that knows better filled it first.
    public var rootCause: RootCause?

    /// `ID@profile`.
    public var key: String { "\(id)@\(profile)" }

    /// Creates a result.
    public init(id: String, title: String, area: String, level: RequirementLevel, requirement: String, source: String,
                profile: String, verdict: Verdict, message: String = "", expected: String? = nil, actual: String? = nil,
                warnings: [ScenarioFailure] = [], transcriptPath: String? = nil, extraTranscriptPaths: [String] = [],
                clientLogPath: String? = nil, clientLogTail: [String] = [], notes: [String] = [],
                seed: UInt64, baseSeed: UInt64, durationMs: Int64, rootCause: RootCause? = nil) {
        self.id = id
        self.title = title
        self.area = area
        self.level = level
        self.requirement = requirement
        self.source = source
        self.profile = profile
        self.verdict = verdict
        self.message = message
        self.expected = expected
        self.actual = actual
        self.warnings = warnings
        self.transcriptPath = transcriptPath
        self.extraTranscriptPaths = extraTranscriptPaths
        self.clientLogPath = clientLogPath
        self.clientLogTail = clientLogTail
        self.notes = notes
        self.seed = seed
        self.baseSeed = baseSeed
        self.durationMs = durationMs
        self.rootCause = rootCause
    }
}

/// All results of a run, with what is needed to describe and replay it.
public struct RunReport: Sendable, Hashable {
    /// Counts by verdict.
    public struct Summary: Sendable, Hashable {
        /// Runs in total.
        public var total = 0
        /// Runs per verdict.
        public var counts: [Verdict: Int] = [:]

        /// The count for `verdict`.
        public subscript(verdict: Verdict) -> Int { counts[verdict] ?? 0 }
    }

    /// The `--seed`.
    public var seed: UInt64
    /// The `--slowness`.
    public var slowness: Double
    /// Whether `warn` fails the run.
    public var strict: Bool
    /// The driver's summary (`in-process "reference"`).
    public var client: String
    /// Where transcripts were written, if anywhere.
    public var transcriptDirectory: String?
    /// The shard, if any.
    public var shard: Shard?
    /// Where state directories were kept (`--keep-state`), if they were.
    public var keptStateDirectory: String?
    /// Results in plan order (`ID@profile`).
    public var results: [RunResult]
    /// The handshake probe of each profile that was probed, in plan order.
    public var probes: [ProbeResult] = []

    /// Creates a report.
    public init(seed: UInt64, slowness: Double, strict: Bool, client: String, transcriptDirectory: String?,
                shard: Shard? = nil, keptStateDirectory: String? = nil, results: [RunResult], probes: [ProbeResult] = []) {
        self.seed = seed
        self.slowness = slowness
        self.strict = strict
        self.client = client
        self.transcriptDirectory = transcriptDirectory
        self.shard = shard
        self.keptStateDirectory = keptStateDirectory
        self.results = results
        self.probes = probes
    }

    /// Counts by verdict.
    public var summary: Summary {
        var summary = Summary()
        for result in results {
            summary.total += 1
            summary.counts[result.verdict, default: 0] += 1
        }
        return summary
    }

    /// The results that fail the run.
    public var gatedFailures: [RunResult] {
        results.filter { $0.verdict.isGatedFailure(strict: strict) }
    }

    /// 0 when nothing gated failed, 1 otherwise (usage and harness errors, exit 2, never get a report).
    public var exitCode: Int32 { gatedFailures.isEmpty ? 0 : 1 }

    /// A copy with wall times zeroed and `path` prefixes replaced by `placeholder`, so that
    /// reports of identical runs are byte-identical (golden files).
    public func normalized(replacingPath path: String?, with placeholder: String = "<dir>") -> RunReport {
        var copy = self
        func fix(_ text: String?) -> String? {
            guard let text, let path, !path.isEmpty else { return text }
            return text.replacingOccurrences(of: path, with: placeholder)
        }
        copy.transcriptDirectory = fix(transcriptDirectory)
        copy.keptStateDirectory = fix(keptStateDirectory)
        copy.results = results.map { result in
            var result = result
            result.durationMs = 0
            result.transcriptPath = fix(result.transcriptPath)
            result.extraTranscriptPaths = result.extraTranscriptPaths.compactMap(fix)
            result.clientLogPath = fix(result.clientLogPath)
            result.message = fix(result.message) ?? ""
            result.notes = result.notes.compactMap(fix)
            result.clientLogTail = result.clientLogTail.compactMap(fix)
            return result
        }
        copy.probes = probes.map { probe in
            var probe = probe
            probe.durationMs = 0
            return probe
        }
        return copy
    }
}
