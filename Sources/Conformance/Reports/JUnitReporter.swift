/// JUnit XML for CI: one `testsuite` per area, one `testcase` per scenario x profile named
/// `ID [profile]` with `classname` the area. `fail` (and `warn` with `--strict`) become
/// `<failure>`, `error` and `timeout` become `<error>`, `unsupported` becomes `<skipped>`.
public struct JUnitReporter: Sendable {
    /// Creates a reporter.
    public init() {}

    /// The XML document.
    public func render(_ report: RunReport) -> String {
        let summary = report.summary
        let failures = report.results.filter { isFailure($0, strict: report.strict) }.count
        let errors = summary[.error] + summary[.timeout]
        let skipped = summary[.unsupported]
        let total = Double(report.results.reduce(0) { $0 + $1.durationMs }) / 1000
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"openclaw-conformance\" tests=\"\(summary.total)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(Self.seconds(total))\">\n"
        let byArea = Dictionary(grouping: report.results) { ScenarioID($0.id).area }
        for area in byArea.keys.sorted() {
            let results = byArea[area] ?? []
            let areaFailures = results.filter { isFailure($0, strict: report.strict) }.count
            let areaErrors = results.filter { $0.verdict == .error || $0.verdict == .timeout }.count
            let areaSkipped = results.filter { $0.verdict == .unsupported }.count
            let time = Double(results.reduce(0) { $0 + $1.durationMs }) / 1000
            out += "  <testsuite name=\"\(Self.escape(area.code))\" tests=\"\(results.count)\" failures=\"\(areaFailures)\" errors=\"\(areaErrors)\" skipped=\"\(areaSkipped)\" time=\"\(Self.seconds(time))\">\n"
            out += "    <properties>\n"
            out += "      <property name=\"seed\" value=\"\(report.seed)\"/>\n"
            out += "      <property name=\"client\" value=\"\(Self.escape(report.client))\"/>\n"
            out += "    </properties>\n"
            for result in results { out += testcase(result, strict: report.strict, group: report.rootCauseGroup(of: result)) }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }

    private func isFailure(_ result: RunResult, strict: Bool) -> Bool {
        result.verdict == .fail || (result.verdict == .warn && strict)
    }

    private func testcase(_ result: RunResult, strict: Bool, group: RootCauseGroup?) -> String {
        let name = Self.escape("\(result.id) [\(result.profile)]")
        let time = Self.seconds(Double(result.durationMs) / 1000)
        var out = "    <testcase name=\"\(name)\" classname=\"\(Self.escape(result.area))\" time=\"\(time)\">\n"
        switch result.verdict {
        case .pass:
            break
        case .unsupported:
            out += "      <skipped message=\"\(Self.escape(result.message))\"/>\n"
        case .fail:
            out += "      <failure message=\"\(Self.escape(result.message))\" type=\"\(result.level)\">\(Self.escape(details(result, group: group)))</failure>\n"
        case .warn:
            if strict {
                out += "      <failure message=\"\(Self.escape(result.message))\" type=\"SHOULD\">\(Self.escape(details(result, group: group)))</failure>\n"
            } else {
                out += "      <system-out>\(Self.escape("WARN (SHOULD): " + details(result, group: group)))</system-out>\n"
            }
        case .error, .timeout:
            out += "      <error message=\"\(Self.escape(result.message))\" type=\"\(result.verdict)\">\(Self.escape(details(result, group: group)))</error>\n"
        }
        if !result.clientLogTail.isEmpty && result.verdict != .pass {
            out += "      <system-err>\(Self.escape(result.clientLogTail.joined(separator: "\n")))</system-err>\n"
        }
        out += "    </testcase>\n"
        return out
    }

    private func details(_ result: RunResult, group: RootCauseGroup?) -> String {
        var lines = [
            "\(result.id) [\(result.profile)] \(result.level): \(result.requirement) (\(result.source))",
            "failure: \(result.message)",
        ]
        if let expected = result.expected { lines.append("expected: \(expected)") }
        if let actual = result.actual { lines.append("actual: \(actual)") }
        if let group { lines.append("root cause: \(group.sentence)") }
        lines.append("seed: \(result.baseSeed) (replay with --filter \(result.id) --profile \(result.profile) --seed \(result.baseSeed))")
        lines.append("transcript: \(result.transcriptPath ?? "(not written)")")
        for note in result.notes { lines.append("note: \(note)") }
        return lines.joined(separator: "\n")
    }

    static func seconds(_ value: Double) -> String {
        let millis = Int64((value * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// Escapes text for XML 1.0 attribute values and content; characters XML 1.0 cannot carry
    /// (most control characters, from a client's garbage output) become U+FFFD.
    static func escape(_ text: String) -> String {
        MarkupEscaping.escape(text, entity: xmlEntity, allowed: xmlAllows)
    }

    /// The entity XML 1.0 attribute values need for `scalar`, if any (white space kept as
    /// character references, which attribute normalisation leaves alone).
    private static func xmlEntity(_ scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "'": return "&apos;"
        case "\n": return "&#10;"
        case "\t": return "&#9;"
        default: return MarkupEscaping.reserved(scalar)
        }
    }

    /// Whether XML 1.0 carries the scalar `value` (no control character, surrogate or
    /// non-character).
    private static func xmlAllows(_ value: UInt32) -> Bool {
        value >= 0x20 && !(0xD800...0xDFFF).contains(value) && value != 0xFFFE && value != 0xFFFF
    }
}
