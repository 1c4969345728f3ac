import GatewayProtocol

/// The machine-readable report: `{"summary": {...}, "runs": [...], "rootCauses": [...],
/// "probes": [...]}`, one record per scenario x profile with `id`, `profile`, `verdict`, `level`,
/// `message`, `rootCause`, `decidedByProbe`, `transcript`, `seed`, `durationMs` and more, one
/// record per root cause and one per handshake probe (`docs/reports.md`). Keys are sorted, so
/// equal reports are byte-identical once the wall-time fields (`durationMs`) are removed.
public struct JSONReporter: Sendable {
    /// Creates a reporter.
    public init() {}

    /// The report as a JSON value.
    public func value(_ report: RunReport) -> JSONValue {
        let summary = report.summary
        var counts: [String: JSONValue] = [:]
        for verdict in Verdict.allCases { counts[verdict.rawValue] = .int(Int64(summary[verdict])) }
        var summaryObject: [String: JSONValue] = [
            "total": .int(Int64(summary.total)),
            "verdicts": .object(counts),
            "seed": Self.number(report.seed),
            "slowness": .double(report.slowness),
            "strict": .bool(report.strict),
            "client": .string(report.client),
            "exitCode": .int(Int64(report.exitCode)),
            "transcriptDirectory": report.transcriptDirectory.map(JSONValue.string) ?? .null,
        ]
        if let shard = report.shard { summaryObject["shard"] = .string(shard.description) }
        return .object([
            "summary": .object(summaryObject),
            "runs": .array(report.results.map(value(of:))),
            "probes": .array(report.probes.map(probe)),
            "rootCauses": .array(report.rootCauseGroups.map(Self.group)),
        ])
    }

    /// The report as pretty-printed JSON text (two-space indent, sorted keys) with a final newline.
    public func render(_ report: RunReport) -> String {
        Self.pretty(value(report), indent: "") + "\n"
    }

    /// A stable pretty printer: the same value gives the same bytes on every platform.
    static func pretty(_ value: JSONValue, indent: String) -> String {
        let inner = indent + "  "
        switch value {
        case .object(let members):
            guard !members.isEmpty else { return "{}" }
            let lines = members.keys.sorted().map { key in
                "\(inner)\(JSONValue.string(key).jsonString): \(pretty(members[key] ?? .null, indent: inner))"
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n\(indent)}"
        case .array(let items):
            guard !items.isEmpty else { return "[]" }
            return "[\n" + items.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        default:
            return value.jsonString
        }
    }

    /// One run's record, as it appears in `runs`.
    public func value(of result: RunResult) -> JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        return .object([
            "id": .string(result.id),
            "title": .string(result.title),
            "area": .string(result.area),
            "profile": .string(result.profile),
            "verdict": .string(result.verdict.rawValue),
            "level": .string(result.level.rawValue),
            "requirement": .string(result.requirement),
            "source": .string(result.source),
            "message": .string(result.message),
            "expected": optional(result.expected),
            "actual": optional(result.actual),
            "warnings": .array(result.warnings.map { .string($0.description) }),
            "transcript": optional(result.transcriptPath),
            "extraTranscripts": .array(result.extraTranscriptPaths.map(JSONValue.string)),
            "clientLog": optional(result.clientLogPath),
            "clientLogTail": .array(result.clientLogTail.map(JSONValue.string)),
            "notes": .array(result.notes.map(JSONValue.string)),
            "seed": Self.number(result.seed),
            "baseSeed": Self.number(result.baseSeed),
            "durationMs": .int(result.durationMs),
            "decidedByProbe": .bool(result.decidedByProbe),
            "rootCause": result.rootCause.map { .object(["key": .string($0.key), "summary": .string($0.summary)]) } ?? .null,
        ])
    }

    private func probe(_ probe: ProbeResult) -> JSONValue {
        .object([
            "profile": .string(probe.profile),
            "admitted": .bool(probe.admitted),
            "causeKey": probe.causeKey.map(JSONValue.string) ?? .null,
            "cause": probe.cause.map(JSONValue.string) ?? .null,
            "seeAlso": probe.seeAlso.map(JSONValue.string) ?? .null,
            "durationMs": .int(probe.durationMs),
        ])
    }

    private static func group(_ group: RootCauseGroup) -> JSONValue {
        .object([
            "key": .string(group.cause.key),
            "summary": .string(group.cause.summary),
            "count": .int(Int64(group.count)),
            "runs": .array(group.runKeys.map(JSONValue.string)),
            "first": .string(group.runKeys.first ?? ""),
            "text": .string(group.sentence),
        ])
    }

    private static func number(_ value: UInt64) -> JSONValue {
        value <= UInt64(Int64.max) ? .int(Int64(value)) : .string(String(value))
    }
}
