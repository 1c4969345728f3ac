/// The human report: a tree grouped by area, with the requirement, expected versus actual, the
/// seed and the transcript path under every run that did not pass.
public struct TerminalReporter: Sendable {
    /// Whether to use ANSI colours.
    public var color: Bool

    /// Creates a reporter.
    public init(color: Bool) {
        self.color = color
    }

    /// Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value
    /// (https://no-color.org).
    public static func shouldUseColor(isTerminal: Bool, environment: [String: String]) -> Bool {
        guard isTerminal else { return false }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        if environment["TERM"] == "dumb" { return false }
        return true
    }

    /// The whole report.
    public func render(_ report: RunReport) -> String {
        var out = ""
        let shard = report.shard.map { ", shard \($0)" } ?? ""
        out += "OpenClaw conformance: \(report.results.count) run\(report.results.count == 1 ? "" : "s"), client: \(report.client), "
        out += "seed \(report.seed), slowness \(Self.format(report.slowness))\(shard)\(report.strict ? ", strict" : "")\n"

        for probe in report.probes where !probe.admitted {
            let decided = report.results.filter { $0.decidedByProbe && $0.profile == probe.profile }.count
            out += "\n" + paint("Handshake probe [\(probe.profile)]: \(probe.cause ?? "no session")", .red)
            out += "\(probe.seeAlso.map { " (see \($0))" } ?? ""); \(decided) run\(decided == 1 ? "" : "s") decided by it\n"
        }

        let byArea = Dictionary(grouping: report.results) { ScenarioID($0.id).area }
        for area in byArea.keys.sorted() {
            out += "\n" + paint("\(area.code)  \(area.name)", .bold) + "\n"
            for result in byArea[area] ?? [] {
                out += renderRun(result, report: report)
            }
        }

        out += "\n" + renderSummary(report)
        return out
    }

    /// The summary alone (what `--quiet` prints): counts by verdict, root causes, where the
    /// transcripts are, the result.
    public func renderSummary(_ report: RunReport) -> String {
        var out = ""
        let summary = report.summary
        let counts = Verdict.allCases.map { "\(summary[$0]) \($0)" }.joined(separator: ", ")
        out += "Summary: \(summary.total) run\(summary.total == 1 ? "" : "s"): \(counts)\n"
        let groups = report.rootCauseGroups
        if !groups.isEmpty {
            out += "Root causes:\n"
            for group in groups {
                out += "  \(group.sentence)\n"
                if group.count > 1 {
                    let shown = group.runNames.prefix(8).joined(separator: ", ")
                    let more = group.count > 8 ? ", and \(group.count - 8) more" : ""
                    out += "    \(shown)\(more)\n"
                }
            }
        }
        if let directory = report.transcriptDirectory {
            out += "Transcripts: \(directory)\n"
        }
        if let directory = report.keptStateDirectory {
            out += "State directories: \(directory)\n"
        }
        let failures = report.gatedFailures.count
        if failures == 0 {
            out += paint("Result: passed", .green) + "\n"
        } else {
            out += paint("Result: \(failures) gated failure\(failures == 1 ? "" : "s") (exit 1)", .red) + "\n"
        }
        return out
    }

    private func renderRun(_ result: RunResult, report: RunReport) -> String {
        var out = "  \(badge(result.verdict))  \(result.id) [\(result.profile)]  \(result.level)  \(result.title)\n"
        let indent = "        "
        switch result.verdict {
        case .pass:
            break
        case .unsupported:
            out += "\(indent)\(result.message)\n"
        case .fail, .warn, .error, .timeout:
            out += "\(indent)requirement: \(result.requirement) (\(result.source))\n"
            out += "\(indent)failure:     \(result.message)\n"
            if let expected = result.expected { out += "\(indent)expected:    \(expected)\n" }
            if let actual = result.actual { out += "\(indent)actual:      \(actual)\n" }
            for warning in result.warnings.dropFirst(result.verdict == .warn ? 1 : 0) {
                out += "\(indent)warning:     \(warning)\n"
            }
            if let group = report.rootCauseGroup(of: result), group.cause.summary != result.message || group.count > 1 {
                let shared = group.count > 1 ? " (\(group.count) runs)" : ""
                out += "\(indent)root cause:  \(group.cause.summary)\(shared)\n"
            }
            // The --seed of the invocation is the one seed that replays the run (its own seed is
            // derived from it and the run's key).
            out += "\(indent)seed:        \(result.baseSeed) (replay with --filter \(result.id) --profile \(result.profile) --seed \(result.baseSeed))\n"
            if result.decidedByProbe {
                out += "\(indent)decided by:  the handshake probe of [\(result.profile)] (the scenario did not run)\n"
            } else {
                out += "\(indent)transcript:  \(result.transcriptPath ?? "(not written)")\n"
            }
            for extra in result.extraTranscriptPaths { out += "\(indent)transcript:  \(extra)\n" }
            if let log = result.clientLogPath { out += "\(indent)client log:  \(log)\n" }
            for line in result.clientLogTail.suffix(10) { out += "\(indent)  | \(line)\n" }
        }
        for note in result.notes { out += "\(indent)note: \(note)\n" }
        return out
    }

    private func badge(_ verdict: Verdict) -> String {
        let text = verdict.rawValue.uppercased()
        let padded = text + String(repeating: " ", count: max(0, 11 - text.count))
        switch verdict {
        case .pass: return paint(padded, .green)
        case .fail, .timeout: return paint(padded, .red)
        case .warn: return paint(padded, .yellow)
        case .unsupported: return paint(padded, .cyan)
        case .error: return paint(padded, .magenta)
        }
    }

    private enum Style: String {
        case bold = "1", red = "31", green = "32", yellow = "33", magenta = "35", cyan = "36"
    }

    private func paint(_ text: String, _ style: Style) -> String {
        color ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
