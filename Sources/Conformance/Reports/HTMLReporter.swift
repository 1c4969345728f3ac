import Foundation
import GatewayProtocol
import MockGateway

/// What a run's HTML section shows beyond its result: its transcripts and its client's log.
public struct RunAttachments: Sendable, Hashable {
    /// The transcripts, the run's own Gateway first.
    public var transcripts: [TranscriptDocument]
    /// Transcripts that could not be read, with why.
    public var problems: [String]
    /// The client's log lines.
    public var clientLog: [String]

    /// Creates attachments.
    public init(transcripts: [TranscriptDocument] = [], problems: [String] = [], clientLog: [String] = []) {
        self.transcripts = transcripts
        self.problems = problems
        self.clientLog = clientLog
    }

    /// Reads what the result points to: its transcript files and client log (or, without a log
    /// file, the log tail kept in the result). Problems become notes, never errors.
    public static func load(for result: RunResult, maxLogLines: Int = 2_000) -> RunAttachments {
        var attachments = RunAttachments()
        for path in [result.transcriptPath].compactMap({ $0 }) + result.extraTranscriptPaths {
            do {
                attachments.transcripts.append(try TranscriptReader.read(path: path))
            } catch {
                attachments.problems.append(error.description)
            }
        }
        if let path = result.clientLogPath, let data = FileManager.default.contents(atPath: path) {
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            attachments.clientLog = lines.suffix(maxLogLines).map(String.init)
            if attachments.clientLog.last == "" { attachments.clientLog.removeLast() }
        } else {
            attachments.clientLog = result.clientLogTail
        }
        return attachments
    }
}

/// One self-contained HTML file: inline CSS and JavaScript, no network access (a Content
/// Security Policy forbids it), readable from a CI artifact.
///
/// A run report shows the summary by area and profile, the root causes, then every run, failures
/// first: requirement, level, expected and actual, seed and replay command, client log, and a
/// sequence diagram of each transcript. Everything taken from a run or a transcript is
/// HTML-escaped; frames are embedded as JSON in a `<script type="application/json">` block
/// with `<`, `>` and `&` escaped, so a frame containing `</script>` cannot end it. Stable ids
/// and classes are documented in `docs/reports.md`.
public struct HTMLReporter: Sendable {
    /// The `harness run` invocation without its selection, e.g. `harness run --node reference`;
    /// each run's replay command is this plus `--filter ID --profile P --seed N`.
    public var replayBase: String?

    /// Creates a reporter.
    public init(replayBase: String? = nil) {
        self.replayBase = replayBase
    }

    /// The replay command of `result`.
    public func replayCommand(_ result: RunResult) -> String {
        "\(replayBase ?? "harness run") --filter \(result.id) --profile \(result.profile) --seed \(result.baseSeed)"
    }

    // MARK: - Documents

    /// The report of a `harness run`.
    /// - Parameters:
    ///   - report: the results.
    ///   - attachments: transcripts and logs by run key (`ID@profile`).
    public func render(_ report: RunReport, attachments: [String: RunAttachments]) -> String {
        var frames = FrameData()
        var body = ""
        body += header(report)
        body += summary(report)
        body += rootCauses(report)
        body += "<section id=\"runs\">\n<h2>Runs</h2>\n"
        for (position, result) in Self.failuresFirst(report.results).enumerated() {
            body += run(result, report: report, attachments: attachments[result.key] ?? RunAttachments(),
                        number: position, frames: &frames)
        }
        body += "</section>\n"
        return document(title: "OpenClaw conformance: \(report.client)", body: body, frames: frames)
    }

    /// A report of transcript files alone (`harness report`).
    /// - Parameters:
    ///   - transcripts: the files, each with its client log if there is one.
    ///   - title: the page's heading.
    public func render(transcripts: [(document: TranscriptDocument, clientLog: [String])], title: String) -> String {
        var frames = FrameData()
        var body = "<header id=\"report-header\">\n<h1>\(Self.escape(title))</h1>\n"
        body += "<p class=\"meta\">\(transcripts.count) transcript\(transcripts.count == 1 ? "" : "s")</p>\n</header>\n"
        body += "<section id=\"transcripts\">\n"
        for (number, item) in transcripts.enumerated() {
            let entries = item.document.entries.count
            body += "<article class=\"transcript\" id=\"transcript-\(number)\" data-file=\"\(Self.escape(item.document.name))\">\n"
            body += "<h2 class=\"file\">\(Self.escape(item.document.name))</h2>\n"
            body += "<p class=\"meta\">\(entries) entr\(entries == 1 ? "y" : "ies")</p>\n"
            if !item.clientLog.isEmpty { body += clientLog(item.clientLog, open: false) }
            body += diagram(item.document, id: "d\(number)", frames: &frames)
            body += "</article>\n"
        }
        body += "</section>\n"
        return document(title: title, body: body, frames: frames)
    }

    // MARK: - Page

    /// Frames to embed, by row id.
    struct FrameData {
        var frames: [String: JSONValue] = [:]
    }

    private func document(title: String, body: String, frames: FrameData) -> String {
        var out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        out += "<meta name=\"generator\" content=\"openclaw-conformance harness\">\n"
        out += "<title>\(Self.escape(title))</title>\n"
        out += "<style>\n\(HTMLAssets.css)</style>\n</head>\n<body>\n"
        out += "<noscript><p class=\"noscript\">Frames expand with JavaScript; everything else reads without it.</p></noscript>\n"
        out += body
        out += "<script type=\"application/json\" id=\"report-data\">\(Self.embed(.object(["frames": .object(frames.frames)])))</script>\n"
        out += "<script>\n\(HTMLAssets.script)</script>\n"
        out += "</body>\n</html>\n"
        return out
    }

    private func header(_ report: RunReport) -> String {
        let summary = report.summary
        let failures = report.gatedFailures.count
        var out = "<header id=\"report-header\">\n<h1>OpenClaw conformance report</h1>\n<p class=\"meta\">"
        out += "client \(Self.escape(report.client)) · seed \(report.seed) · slowness \(TerminalReporter.format(report.slowness))"
        if let shard = report.shard { out += " · shard \(shard.description)" }
        if report.strict { out += " · strict" }
        out += "</p>\n"
        let result = failures == 0 ? "passed" : "\(failures) gated failure\(failures == 1 ? "" : "s") (exit 1)"
        out += "<p id=\"result\" class=\"result \(failures == 0 ? "result-pass" : "result-fail")\">\(summary.total) run\(summary.total == 1 ? "" : "s"): \(result)</p>\n"
        if let directory = report.transcriptDirectory {
            out += "<p class=\"meta\">transcripts: <code>\(Self.escape(directory))</code></p>\n"
        }
        out += "</header>\n"
        return out
    }

    private func summary(_ report: RunReport) -> String {
        let summary = report.summary
        var out = "<section id=\"summary\">\n<h2>Summary</h2>\n<p class=\"totals\">"
        out += Verdict.allCases.map { "<span class=\"count verdict-\($0.rawValue)\">\(summary[$0]) \($0.rawValue)</span>" }
            .joined(separator: " ")
        out += "</p>\n"
        var profiles: [String] = []
        for result in report.results where !profiles.contains(result.profile) { profiles.append(result.profile) }
        out += "<table id=\"summary-table\" class=\"summary\">\n<thead><tr><th>area</th>"
        for profile in profiles { out += "<th data-profile=\"\(Self.escape(profile))\">\(Self.escape(profile))</th>" }
        out += "</tr></thead>\n<tbody>\n"
        let byArea = Dictionary(grouping: report.results) { ScenarioID($0.id).area }
        for area in byArea.keys.sorted() {
            let results = byArea[area] ?? []
            out += "<tr data-area=\"\(Self.escape(area.code))\"><th>\(Self.escape(area.code)) <span class=\"area-name\">\(Self.escape(area.name))</span></th>"
            for profile in profiles {
                let cell = results.filter { $0.profile == profile }
                out += "<td data-profile=\"\(Self.escape(profile))\">"
                if cell.isEmpty {
                    out += "<span class=\"none\">–</span>"
                } else {
                    let counts = Verdict.allCases.compactMap { verdict -> String? in
                        let count = cell.filter { $0.verdict == verdict }.count
                        return count == 0 ? nil : "<span class=\"count verdict-\(verdict.rawValue)\">\(count) \(verdict.rawValue)</span>"
                    }
                    out += counts.joined(separator: " ")
                }
                out += "</td>"
            }
            out += "</tr>\n"
        }
        out += "</tbody>\n</table>\n"
        out += "<ol id=\"run-index\" class=\"run-index\">\n"
        for result in Self.failuresFirst(report.results) where result.verdict != .pass {
            out += "<li><a href=\"#\(Self.runAnchor(result))\"><span class=\"badge verdict-\(result.verdict.rawValue)\">\(result.verdict.rawValue.uppercased())</span> \(Self.escape(result.id)) [\(Self.escape(result.profile))]</a></li>\n"
        }
        out += "</ol>\n</section>\n"
        return out
    }

    private func rootCauses(_ report: RunReport) -> String {
        let groups = report.rootCauseGroups
        guard !groups.isEmpty else { return "" }
        var out = "<section id=\"root-causes\">\n<h2>Root causes</h2>\n<ol class=\"root-causes\">\n"
        for (index, group) in groups.enumerated() {
            out += "<li class=\"root-cause\" id=\"cause-\(index + 1)\" data-key=\"\(Self.escape(group.cause.key))\" data-count=\"\(group.count)\">"
            out += "<p class=\"sentence\">\(Self.escape(group.sentence))</p><p class=\"cause-runs\">"
            out += zip(group.runKeys, group.runNames).map { key, name in
                "<a href=\"#run-\(Self.anchor(key))\">\(Self.escape(name))</a>"
            }.joined(separator: " ")
            out += "</p></li>\n"
        }
        out += "</ol>\n</section>\n"
        return out
    }

    private func run(_ result: RunResult, report: RunReport, attachments: RunAttachments, number: Int,
                     frames: inout FrameData) -> String {
        let verdict = result.verdict.rawValue
        var out = "<article class=\"run verdict-\(verdict)\" id=\"\(Self.runAnchor(result))\" data-key=\"\(Self.escape(result.key))\" data-verdict=\"\(verdict)\">\n"
        out += "<h3><span class=\"badge verdict-\(verdict)\">\(verdict.uppercased())</span> <span class=\"run-id\">\(Self.escape(result.id)) [\(Self.escape(result.profile))]</span> "
        out += "<span class=\"level level-\(result.level.rawValue.lowercased())\">\(result.level.rawValue)</span> <span class=\"title\">\(Self.escape(result.title))</span></h3>\n"
        out += "<dl class=\"facts\">\n"
        func fact(_ name: String, _ cls: String, _ html: String) {
            out += "<dt>\(name)</dt><dd class=\"\(cls)\">\(html)</dd>\n"
        }
        fact("requirement", "requirement", "\(Self.escape(result.requirement)) <span class=\"source\">(\(Self.escape(result.source)))</span>")
        fact("level", "level", result.level.rawValue)
        if !result.message.isEmpty { fact(result.verdict == .unsupported ? "why" : "failure", "message", Self.escape(result.message)) }
        if let expected = result.expected { fact("expected", "expected", Self.escape(expected)) }
        if let actual = result.actual { fact("actual", "actual", Self.escape(actual)) }
        for warning in result.warnings.dropFirst(result.verdict == .warn ? 1 : 0) {
            fact("warning", "warning", Self.escape(warning.description))
        }
        if let group = report.rootCauseGroup(of: result),
           let index = report.rootCauseGroups.firstIndex(where: { $0.cause.key == group.cause.key }) {
            fact("root cause", "root-cause", "<a href=\"#cause-\(index + 1)\">\(Self.escape(group.cause.summary))</a> <span class=\"shared\">(\(group.count) run\(group.count == 1 ? "" : "s"))</span>")
        }
        fact("seed", "seed", "\(result.baseSeed)")
        if result.verdict != .pass {
            fact("replay", "replay", "<code class=\"replay\">\(Self.escape(replayCommand(result)))</code>")
        }
        if let path = result.transcriptPath { fact("transcript", "transcript-path", "<code>\(Self.escape(path))</code>") }
        for path in result.extraTranscriptPaths { fact("transcript", "transcript-path", "<code>\(Self.escape(path))</code>") }
        for note in result.notes { fact("note", "note", Self.escape(note)) }
        fact("duration", "duration", "\(result.durationMs) ms")
        out += "</dl>\n"
        for problem in attachments.problems { out += "<p class=\"problem\">\(Self.escape(problem))</p>\n" }
        if !attachments.clientLog.isEmpty {
            out += clientLog(attachments.clientLog, open: result.verdict != .pass && result.verdict != .unsupported)
        }
        let failed = result.verdict != .pass && result.verdict != .unsupported
        for (index, document) in attachments.transcripts.enumerated() {
            let id = "d\(number)" + (index == 0 ? "" : "g\(index + 1)")
            let heading = index == 0 ? "Sequence diagram" : "Sequence diagram of Gateway \(index + 1)"
            out += "<details class=\"diagram-wrap\"\(failed ? " open" : "")><summary>\(heading) <span class=\"file\">\(Self.escape(document.name))</span></summary>\n"
            out += diagram(document, id: id, frames: &frames)
            out += "</details>\n"
        }
        if attachments.transcripts.isEmpty && attachments.problems.isEmpty {
            out += "<p class=\"no-transcript\">No transcript was written for this run (with --transcripts DIR every run keeps one).</p>\n"
        }
        out += "</article>\n"
        return out
    }

    private func clientLog(_ lines: [String], open: Bool) -> String {
        var out = "<details class=\"client-log\"\(open ? " open" : "")><summary>client log (\(lines.count) line\(lines.count == 1 ? "" : "s"))</summary>\n<pre class=\"log\">"
        out += lines.map(Self.escape).joined(separator: "\n")
        out += "</pre></details>\n"
        return out
    }

    // MARK: - Diagram

    private func diagram(_ document: TranscriptDocument, id: String, frames: inout FrameData) -> String {
        let diagram = SequenceDiagram(entries: document.entries)
        let lanes = diagram.lanes.count
        var out = "<div class=\"diagram\" id=\"\(id)\" data-lanes=\"\(lanes)\" style=\"--lanes: \(lanes)\">\n"
        out += "<div class=\"toolbar\"><button type=\"button\" data-action=\"expand-all\">expand all frames</button> "
        out += "<button type=\"button\" data-action=\"collapse-all\">collapse all</button> "
        out += "<span class=\"legend\">clock: Gateway time since the first line (virtual for in-process clients) · wall: real time since the transcript started</span></div>\n"
        out += "<div class=\"row head\"><span class=\"time clock\">clock</span><span class=\"time wall\">wall</span>"
        for (index, lane) in diagram.lanes.enumerated() {
            let conn = lane.connectionId.map { " data-conn=\"\(Self.escape($0))\"" } ?? ""
            out += "<span class=\"lane-head lane-\(lane.kind.rawValue)\" style=\"grid-column: \(index + 3)\"\(conn)><b>\(Self.escape(lane.title))</b><small>\(Self.escape(lane.subtitle))</small></span>"
        }
        out += "</div>\n"
        if document.entries.isEmpty { out += "<p class=\"empty\">The transcript has no entries.</p>\n" }
        for item in diagram.items {
            switch item {
            case .row(let row):
                out += self.row(row, diagram: diagram, id: id, frames: &frames)
            case .repeated(let label, let rows):
                let first = rows.first, last = rows.last
                let span = first.flatMap { f in last.map { "\(Self.clock(f.clockOffsetMs)) … \(Self.clock($0.clockOffsetMs))" } } ?? ""
                out += "<details class=\"row-group repeat\" id=\"\(id)-r\(first?.index ?? 0)\" data-count=\"\(rows.count)\">"
                out += "<summary class=\"row folded\">\(Self.timeCells(first))\(lifelines(diagram, at: first?.index ?? 0))"
                out += "<span class=\"marker repeat-label\" style=\"grid-column: 3 / -1\">\(Self.escape(label)) <small>\(span) · click to show</small></span></summary>\n"
                for row in rows { out += self.row(row, diagram: diagram, id: id, frames: &frames) }
                out += "</details>\n"
            }
        }
        out += "</div>\n"
        return out
    }

    private func row(_ row: SequenceDiagram.Row, diagram: SequenceDiagram, id: String, frames: inout FrameData) -> String {
        let cells = Self.timeCells(row) + lifelines(diagram, at: row.index)
        let laneColumn = row.lane + 3
        switch row.kind {
        case .inbound, .outbound, .dropped:
            let frameId = "f-\(id)-\(row.index)"
            if let message = row.message { frames.frames[frameId] = message }
            let gateway = 4
            let from = min(gateway, laneColumn), to = max(gateway, laneColumn)
            let span = to - from + 1
            let badges = row.badges.map { "<span class=\"tag\">\(Self.escape($0))</span>" }.joined()
            var out = "<details class=\"msg \(row.kind.rawValue)\" id=\"\(frameId)\" data-entry=\"\(row.index)\">"
            out += "<summary class=\"row\">\(cells)<span class=\"arrow \(row.kind.rawValue)\" style=\"grid-column: \(from) / span \(span); --span: \(span)\">"
            out += "<span class=\"label\">\(Self.escape(row.label))\(badges)</span></span></summary>"
            out += "<div class=\"frame-body\">"
            if let wire = row.wire { out += "<p class=\"wire\">\(Self.escape(wire))</p>" }
            out += "<pre class=\"frame-json\"></pre></div></details>\n"
            return out
        case .open, .close:
            return "<div class=\"row \(row.kind.rawValue)\" data-entry=\"\(row.index)\">\(cells)<span class=\"marker \(row.kind.rawValue)\" style=\"grid-column: \(laneColumn)\">\(Self.escape(row.label))</span></div>\n"
        case .note:
            return "<div class=\"row note\" data-entry=\"\(row.index)\">\(cells)<span class=\"marker note\" style=\"grid-column: \(laneColumn) / -1\">\(Self.escape(row.label))</span></div>\n"
        case .fault:
            return "<div class=\"row fault\" data-entry=\"\(row.index)\">\(cells)<span class=\"marker fault\" style=\"grid-column: \(laneColumn) / -1\">⚡ fault: \(Self.escape(row.label))</span></div>\n"
        case .operatorAction:
            return "<div class=\"row operator\" data-entry=\"\(row.index)\">\(cells)<span class=\"marker operator\" style=\"grid-column: \(laneColumn) / -1\">▶ operator: \(Self.escape(row.label))</span></div>\n"
        case .failure:
            return "<div class=\"row failure failing-step\" id=\"failing-step-\(id)\" data-entry=\"\(row.index)\">\(cells)<span class=\"marker failure\" style=\"grid-column: 3 / -1\">✗ \(Self.escape(row.label))</span></div>\n"
        }
    }

    private func lifelines(_ diagram: SequenceDiagram, at index: Int) -> String {
        (0..<diagram.lanes.count).map { lane in
            "<span class=\"life\(diagram.isLive(lane: lane, at: index) ? "" : " idle")\" style=\"grid-column: \(lane + 3)\"></span>"
        }.joined()
    }

    private static func timeCells(_ row: SequenceDiagram.Row?) -> String {
        guard let row else { return "<span class=\"time clock\"></span><span class=\"time wall\"></span>" }
        return "<span class=\"time clock\" title=\"\(isoTime(row.clockMs))\">\(clock(row.clockOffsetMs))</span><span class=\"time wall\">\(wall(row.wallMs))</span>"
    }

    // MARK: - Formatting

    /// `+0 ms`, `+1 250 ms`, `+901.0 s`, `+2 h 05 m`.
    static func clock(_ offset: Int64) -> String {
        let sign = offset < 0 ? "-" : "+"
        let value = abs(offset)
        if value < 10_000 { return "\(sign)\(value) ms" }
        if value < 3_600_000 { return "\(sign)\(value / 1000).\(value % 1000 / 100) s" }
        let minutes = value / 60_000
        return "\(sign)\(minutes / 60) h \(String(format: "%02d", Int(minutes % 60))) m"
    }

    /// `29 ms`, `12.3 s`.
    static func wall(_ milliseconds: Int64) -> String {
        milliseconds < 10_000 ? "\(milliseconds) ms" : "\(milliseconds / 1000).\(milliseconds % 1000 / 100) s"
    }

    static func isoTime(_ unixMs: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(unixMs) / 1000))
    }

    /// `results` with failures first, otherwise in report order.
    static func failuresFirst(_ results: [RunResult]) -> [RunResult] {
        results.enumerated().sorted { lhs, rhs in
            let left = rank(lhs.element.verdict), right = rank(rhs.element.verdict)
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
    }

    static func rank(_ verdict: Verdict) -> Int {
        switch verdict {
        case .fail, .error, .timeout: 0
        case .warn: 1
        case .unsupported: 2
        case .pass: 3
        }
    }

    static func runAnchor(_ result: RunResult) -> String { "run-" + anchor(result.key) }

    /// `HS-001@current` as an id: `HS-001-current`.
    static func anchor(_ key: String) -> String {
        String(key.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" })
    }

    /// Escapes text for HTML content and attribute values; characters HTML cannot carry (most
    /// control characters, from a client's garbage output) become U+FFFD.
    public static func escape(_ text: String) -> String {
        MarkupEscaping.escape(text, entity: htmlEntity, allowed: htmlAllows)
    }

    /// The entity HTML content and attributes need for `scalar`, if any.
    private static func htmlEntity(_ scalar: Unicode.Scalar) -> String? {
        scalar == "'" ? "&#39;" : MarkupEscaping.reserved(scalar)
    }

    /// Whether HTML carries the scalar `value` as it is (line feed and tab, no other control).
    private static func htmlAllows(_ value: UInt32) -> Bool {
        if value == 0x0A || value == 0x09 { return true }
        return value >= 0x20 && !(0x7F...0x9F).contains(value) && value != 0xFFFE && value != 0xFFFF
    }

    /// JSON safe inside a `<script>` element: `<`, `>`, `&` and the line separators U+2028 and
    /// U+2029 are written as `\u` escapes (they only occur inside JSON strings, where the escape
    /// means the same character).
    public static func embed(_ value: JSONValue) -> String {
        var out = ""
        for scalar in value.jsonString.unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
