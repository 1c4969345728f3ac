import Conformance
import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// The HTML report: its structure (golden, with the stylesheet and script left out so that
/// styling can change), escaping, embedded frames, sequence diagrams and `harness report`.
@Suite struct HTMLReportTests {
    static let node = "405811ea-0f38-43ef-b315-f3c35dbab9fe"
    static let operatorConnection = "91c7370d-7d42-44cc-a1ad-abf3882d419a"

    /// A transcript with every kind of line: a refused node connect carrying markup and a
    /// `</script>`, an operator action, a session with ticks to fold, faults, a dropped response,
    /// a fragmented binary event, the failing step and closes.
    static func sampleEntries() -> [TranscriptEntry] {
        var entries: [TranscriptEntry] = []
        var t: Int64 = 0
        var clock: Int64 = 1_796_115_674_139
        func add(_ conn: String, _ kind: TranscriptEntry.Kind, _ message: JSONValue? = nil, code: Int? = nil, text: String? = nil,
                 wire: TranscriptWire? = nil, fault: TranscriptFault? = nil, advance: Int64 = 0) {
            clock += advance
            t += 3
            entries.append(TranscriptEntry(monotonicMs: t, gatewayMs: clock, connectionId: conn, kind: kind, message: message,
                                           closeCode: code, text: text, wire: wire, fault: fault))
        }
        let text = TranscriptWire(frameKind: .text, frameCount: 1)
        add("", .note, text: "run HS-902@current seed 1 (--seed 1)")
        add(node, .open, text: "127.0.0.1 /")
        add(node, .outbound, ["type": "event", "event": "connect.challenge", "payload": ["nonce": "n-1", "ts": 1]], wire: text)
        add(node, .inbound, ["type": "req", "id": "A1401A72-88A6-49B1-BD31-95BBC07B814C", "method": "connect",
                             "params": ["role": "node", "client": ["id": "openclaw-ios", "mode": "node",
                                                                   "displayName": "</script><script>alert(1)</script> & <b>"],
                                        "auth": ["token": "<redacted>"]]],
            wire: TranscriptWire(frameKind: .binary, frameCount: 1))
        add(node, .outbound, ["type": "res", "id": "A1401A72-88A6-49B1-BD31-95BBC07B814C", "ok": false,
                              "error": ["code": "INVALID_REQUEST", "message": "device identity mismatch",
                                        "details": ["code": "DEVICE_AUTH_DEVICE_ID_MISMATCH"]]], wire: text)
        add(node, .close, code: 1008, text: "device identity mismatch")
        add("-", .operatorAction, text: "approve req-1 <b>")
        add(operatorConnection, .open, text: "127.0.0.1 /")
        add(operatorConnection, .inbound, ["type": "req", "id": "c2", "method": "connect", "params": ["role": "operator"]], wire: text)
        add(operatorConnection, .outbound, ["type": "res", "id": "c2", "ok": true, "payload": ["type": "hello-ok"]], wire: text)
        add("-", .fault, text: "ticks resumed")
        for seq in 1...4 {
            add(operatorConnection, .outbound, ["type": "event", "event": "tick", "seq": .int(Int64(seq)), "payload": ["ts": 1]],
                wire: text, advance: 30_000)
        }
        add(operatorConnection, .outbound, ["type": "event", "event": "presence", "seq": 5],
            wire: TranscriptWire(frameKind: .binary, frameCount: 3), fault: TranscriptFault(fragmentedInto: 3, pingsBetween: true, binary: true))
        add(operatorConnection, .inbound, ["type": "req", "id": "r9", "method": "approval.resolve"], wire: text)
        add(operatorConnection, .dropped, ["type": "res", "id": "r9", "ok": true], text: "response to approval.resolve dropped (fault)",
            wire: TranscriptWire(frameKind: .text), fault: TranscriptFault(dropped: true))
        add(operatorConnection, .fault, text: "close \(operatorConnection) with 4001")
        add("", .failure, text: "fail: the client kept one pairing request")
        add(operatorConnection, .close, code: 4001, text: "bye")
        return entries
    }

    static func sampleReport() async throws -> (RunReport, [String: RunAttachments]) {
        let (report, _) = try await ReportGoldenTests.report()
        let document = TranscriptDocument(name: "<transcripts>/HS-902@current.jsonl", entries: sampleEntries())
        let attachments = ["HS-902@current": RunAttachments(transcripts: [document], clientLog: ["connecting", "refused <1008>"])]
        return (report, attachments)
    }

    /// The page without its stylesheet and script code (the data block stays).
    static func structure(_ html: String) -> String {
        var text = html
        for (open, close) in [("<style>\n", "</style>"), ("<script>\n", "</script>")] {
            guard let start = text.range(of: open), let end = text.range(of: close, range: start.upperBound..<text.endIndex) else {
                continue
            }
            text.replaceSubrange(start.upperBound..<end.lowerBound, with: "…\n")
        }
        return text
    }

    static func render() async throws -> String {
        let (report, attachments) = try await sampleReport()
        return HTMLReporter(replayBase: "harness run --node golden").render(report, attachments: attachments)
    }

    @Test func htmlStructureMatchesItsBaseline() async throws {
        try assertGolden(Self.structure(try await Self.render()), named: "report.html")
    }

    @Test func theReportNamesRunsRootCausesAndReplayCommands() async throws {
        let html = try await Self.render()
        for id in ["report-header", "summary", "summary-table", "root-causes", "runs", "run-HS-902-current",
                   "run-INV-901-current", "cause-1", "report-data", "d0", "failing-step-d0"] {
            #expect(html.contains("id=\"\(id)\""), "id \(id)")
        }
        #expect(html.contains("<code class=\"replay\">harness run --node golden --filter HS-902 --profile current --seed 1234</code>"))
        // Failures first: the failing HS-902 comes before the passing HS-901 runs.
        let failing = try #require(html.range(of: "id=\"run-HS-902-current\""))
        let passing = try #require(html.range(of: "id=\"run-HS-901-current\""))
        #expect(failing.lowerBound < passing.lowerBound)
        #expect(html.contains("<tr data-area=\"HS\"><th>HS <span class=\"area-name\">handshake</span></th><td data-profile=\"current\"><span class=\"count verdict-pass\">1 pass</span> <span class=\"count verdict-fail\">1 fail</span></td><td data-profile=\"legacy\"><span class=\"count verdict-pass\">1 pass</span></td></tr>"))
        #expect(html.contains("refused &lt;1008&gt;"), "the client log is shown, escaped")
    }

    @Test func nothingFromATranscriptCanEndAScriptOrAddMarkup() async throws {
        let html = try await Self.render()
        #expect(!html.contains("</script><script>alert"))
        #expect(!html.contains("alert(1)</script> & <b>"))
        #expect(html.components(separatedBy: "<script").count == 3, "exactly the data block and the code")
        #expect(html.components(separatedBy: "</script>").count == 3)
        #expect(html.contains("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e \\u0026 \\u003cb\\u003e"))
        // Nothing is loaded from anywhere.
        #expect(!html.contains(" src="))
        #expect(!html.contains("<link"))
        #expect(!html.contains("url("))
        #expect(html.contains("Content-Security-Policy\" content=\"default-src 'none';"))
    }

    @Test func embeddedFramesReadBackUnchanged() async throws {
        let html = try await Self.render()
        let start = try #require(html.range(of: "<script type=\"application/json\" id=\"report-data\">"))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let data = try JSONValue(parsing: String(html[start.upperBound..<end.lowerBound]))
        let entries = Self.sampleEntries()
        let connect = try #require(entries.firstIndex { $0.message?["method"] == "connect" })
        #expect(data["frames"]?["f-d0-\(connect)"] == entries[connect].message)
        #expect(data["frames"]?["f-d0-\(connect)"]?["params"]?["auth"]?["token"] == "<redacted>")
        let frames = entries.filter { $0.message != nil }.count
        #expect(data["frames"]?.objectValue?.count == frames)
    }

    @Test func escapingCoversMarkupQuotesAndControlCharacters() {
        #expect(HTMLReporter.escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(HTMLReporter.escape("a\u{0}b\u{1B}[31m\nc") == "a\u{FFFD}b\u{FFFD}[31m\nc")
        #expect(HTMLReporter.embed(["k": "</script>\u{2028}&"]) == "{\"k\":\"\\u003c/script\\u003e\\u2028\\u0026\"}")
    }

    // MARK: - The diagram model

    @Test func lanesAreTheScenarioTheGatewayAndEachConnectionByRole() {
        let diagram = SequenceDiagram(entries: Self.sampleEntries())
        #expect(diagram.lanes.map(\.title) == ["operator · scenario", "Gateway", "#1 node", "#2 operator"])
        #expect(diagram.lanes[2].subtitle == "openclaw-ios · node · 405811ea")
        #expect(diagram.lanes[2].connectionId == Self.node)
        // The node's lifeline ends with its close; the operator's starts with its open.
        let rows = diagram.rows
        let nodeClose = rows.first { $0.kind == .close && $0.lane == 2 }?.index ?? -1
        #expect(!diagram.isLive(lane: 2, at: nodeClose + 1))
        #expect(!diagram.isLive(lane: 3, at: 1))
        #expect(diagram.isLive(lane: 1, at: 0))
    }

    @Test func operatorActionsAreRowsOnTheOperatorLifeline() throws {
        let entries = Self.sampleEntries()
        let approveAt = try #require(entries.firstIndex { $0.kind == .operatorAction })
        let diagram = SequenceDiagram(entries: entries)
        let row = try #require(diagram.rows.first { $0.index == approveAt })
        #expect(row.kind == .operatorAction && row.lane == 0 && row.label == "approve req-1 <b>")
        let html = HTMLReporter().render(transcripts: [(document: TranscriptDocument(name: "serve.jsonl", entries: entries), clientLog: [])], title: "serve")
        #expect(html.contains("<div class=\"row operator\" data-entry=\"\(approveAt)\">"))
        #expect(html.contains(">▶ operator: approve req-1 &lt;b&gt;</span>"))
    }

    @Test func manyShortConnectionsShareLifelinesAndFewStayApart() throws {
        func connection(_ number: Int) -> String { "c0nnecti-0n00-0000-0000-00000000000\(number % 10)\(number / 10)" }
        var entries: [TranscriptEntry] = []
        func add(_ conn: String, _ kind: TranscriptEntry.Kind, _ message: JSONValue? = nil) {
            entries.append(TranscriptEntry(monotonicMs: Int64(entries.count), gatewayMs: Int64(entries.count), connectionId: conn,
                                           kind: kind, message: message, closeCode: kind == .close ? 1008 : nil))
        }
        // A long-lived node connection, and twelve operator connects after one another, each
        // refused and closed before the next opens.
        add(connection(0), .open)
        add(connection(0), .inbound, ["type": "req", "id": "n", "method": "connect", "params": ["role": "node"]])
        for number in 1...12 {
            add(connection(number), .open)
            add(connection(number), .inbound, ["type": "req", "id": "c", "method": "connect", "params": ["role": "operator"]])
            add(connection(number), .close)
        }
        let diagram = SequenceDiagram(entries: entries)
        #expect(diagram.lanes.count == 4, "operator, Gateway, the node, one lifeline for the twelve in turn: \(diagram.lanes.map(\.title))")
        #expect(diagram.lanes[2].title == "#1 node")
        #expect(diagram.lanes[3].spans.map(\.title) == (2...13).map { "#\($0) operator" })
        #expect(diagram.lanes[3].title == "#2 operator … #13 operator")
        #expect(diagram.lanes[3].subtitle.hasSuffix(" + 11 later"))
        let opens = diagram.rows.filter { $0.kind == .open && $0.lane == 3 }.map(\.label)
        #expect(opens.count == 12 && opens[0] == "open" && opens[1].hasPrefix("open #3 operator · "))
        // Live while one of its connections is open, idle between the close and the next open.
        #expect(diagram.isLive(lane: 3, at: 3) && !diagram.isLive(lane: 3, at: 1))
        // Up to the limit, every connection keeps its own lifeline.
        let few = SequenceDiagram(entries: Array(entries.prefix(2 + 3 * (SequenceDiagram.separateLaneLimit - 1))))
        #expect(few.lanes.count == 2 + SequenceDiagram.separateLaneLimit)
    }

    @Test func labelsNameMethodsEventsAndOutcomes() {
        let rows = SequenceDiagram(entries: Self.sampleEntries()).rows
        let labels = rows.filter { [.inbound, .outbound, .dropped].contains($0.kind) }.map(\.label)
        #expect(labels.contains("connect #A1401A72"))
        #expect(labels.contains("res connect ✗ INVALID_REQUEST/DEVICE_AUTH_DEVICE_ID_MISMATCH #A1401A72"))
        #expect(labels.contains("res connect ok #c2"))
        #expect(labels.contains("presence seq 5"))
        #expect(labels.contains("res approval.resolve ok #r9"))
        let presence = rows.first { $0.label == "presence seq 5" }
        #expect(presence?.badges == ["binary", "3 frames", "fault: fragmented into 3 with pings between, sent as binary"])
        #expect(presence?.wire == "binary, fragmented into 3 frames, compression none, fault: fragmented into 3 with pings between, sent as binary")
        let dropped = rows.first { $0.kind == .dropped }
        #expect(dropped?.wire == "text, compression none, fault: dropped")
        let fault = rows.first { $0.kind == .fault && $0.label.hasPrefix("close") }
        #expect(fault?.lane == 3, "a fault on a connection is drawn on its lifeline")
        #expect(rows.first { $0.kind == .fault }?.lane == 1, "a Gateway-wide fault on the Gateway's")
    }

    @Test func runsOfTicksAndLongRepeatsFoldIntoOneRow() {
        let diagram = SequenceDiagram(entries: Self.sampleEntries())
        let folded = diagram.items.compactMap { item -> (String, Int)? in
            if case .repeated(let label, let rows) = item { return (label, rows.count) }
            return nil
        }
        #expect(folded.count == 1)
        #expect(folded.first?.0 == "tick × 4")
        #expect(folded.first?.1 == 4)
        #expect(diagram.rows.count == Self.sampleEntries().count, "folding hides no row")

        var notes: [TranscriptEntry] = []
        for index in 0..<7 {
            notes.append(TranscriptEntry(monotonicMs: Int64(index), gatewayMs: Int64(index), connectionId: "", kind: .note,
                                         text: "let 0.5 seconds pass on the virtual clock"))
        }
        notes.append(TranscriptEntry(monotonicMs: 9, gatewayMs: 9, connectionId: "", kind: .note, text: "something else"))
        let repeated = SequenceDiagram(entries: notes).items
        #expect(repeated.count == 2)
        if case .repeated(let label, let rows) = repeated.first {
            #expect(label == "let 0.5 seconds pass on the virtual clock × 7")
            #expect(rows.count == 7)
        } else {
            Issue.record("seven equal notes were not folded")
        }
        // Two ticks stay two rows.
        let two = Array(Self.sampleEntries().prefix(12))
        #expect(SequenceDiagram(entries: two).items.allSatisfy { if case .row = $0 { true } else { false } })
    }

    @Test func timesAreGatewayClockOffsetsAndWallTime() async throws {
        let html = try await Self.render()
        // The fourth tick is 120 s of Gateway time after the first line, 45 ms of wall time.
        #expect(html.contains("<span class=\"time clock\" title=\"2026-12-01T09:03:14.139Z\">+120.0 s</span><span class=\"time wall\">45 ms</span>"))
    }
}

/// `harness report TRANSCRIPT.jsonl... --html FILE` and `run --html`.
@Suite struct ReportCommandTests {
    static func run(_ arguments: [String]) async -> (Int32, RecordingIO) {
        await CLITests.run(arguments)
    }

    static func write(_ lines: [String], to url: URL) throws {
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: url)
    }

    @Test func rendersTranscriptFilesAndTheirClientLogs() async throws {
        let directory = try TemporaryDirectory()
        let first = directory.url.appendingPathComponent("HS-902@current.jsonl")
        try Self.write(HTMLReportTests.sampleEntries().map { $0.json.jsonString } + [""], to: first)
        try Self.write(["connecting", "refused"], to: directory.url.appendingPathComponent("HS-902@current.client.log"))
        let second = directory.url.appendingPathComponent("serve.jsonl")
        try Self.write([HTMLReportTests.sampleEntries()[1].json.jsonString], to: second)
        let output = directory.url.appendingPathComponent("out/report.html")

        let (status, io) = await Self.run(["report", first.path, second.path, "--html", output.path])
        #expect(status == 0, "\(io.err)")
        #expect(io.out == "Wrote \(output.path): 2 transcripts, 22 entries\n")
        let html = try String(contentsOf: output, encoding: .utf8)
        #expect(html.contains("<article class=\"transcript\" id=\"transcript-0\""))
        #expect(html.contains("<article class=\"transcript\" id=\"transcript-1\""))
        #expect(html.contains("<div class=\"diagram\" id=\"d0\""))
        #expect(html.contains("<div class=\"diagram\" id=\"d1\""))
        #expect(html.contains("<pre class=\"log\">connecting\nrefused</pre>"))
        #expect(html.contains("<title>Transcripts: HS-902@current.jsonl, serve.jsonl</title>"))
        #expect(html.components(separatedBy: "class=\"arrow ").count - 1 == 12, "one arrow per message")
    }

    @Test func badFilesAreNamedWithTheirLine() async throws {
        let directory = try TemporaryDirectory()
        let output = directory.url.appendingPathComponent("report.html").path
        let missing = directory.url.appendingPathComponent("missing.jsonl").path
        var (status, io) = await Self.run(["report", missing, "--html", output])
        #expect(status == 2)
        #expect(io.err == "error: \(missing): no such file\n")

        (status, io) = await Self.run(["report", directory.path, "--html", output])
        #expect(status == 2)
        #expect(io.err == "error: \(directory.path): is a directory, not a transcript file\n")

        let malformed = directory.url.appendingPathComponent("bad.jsonl")
        try Self.write([HTMLReportTests.sampleEntries()[0].json.jsonString, "", "{\"kind\": \"in\", \"t\": ", "x"], to: malformed)
        (status, io) = await Self.run(["report", malformed.path, "--html", output])
        #expect(status == 2)
        #expect(io.err.hasPrefix("error: \(malformed.path):3: not valid JSON (starts with "), "\(io.err)")

        let wrongKind = directory.url.appendingPathComponent("kind.jsonl")
        try Self.write(["{\"kind\": \"sideways\", \"t\": 1}"], to: wrongKind)
        (status, io) = await Self.run(["report", wrongKind.path, "--html", output])
        #expect(status == 2)
        #expect(io.err.hasPrefix("error: \(wrongKind.path):1: not a transcript entry: unknown kind \"sideways\""), "\(io.err)")

        let binary = directory.url.appendingPathComponent("binary.jsonl")
        try Data([0xFF, 0xFE, 0x00]).write(to: binary)
        (status, io) = await Self.run(["report", binary.path, "--html", output])
        #expect(status == 2)
        #expect(io.err == "error: \(binary.path): is not UTF-8 text (a JSON Lines transcript was expected)\n")
        #expect(!FileManager.default.fileExists(atPath: output), "nothing is written when a file is bad")
    }

    @Test func theOutputAndAFileAreRequired() async throws {
        var (status, io) = await Self.run(["report", "x.jsonl"])
        #expect(status == 2)
        #expect(io.err.hasPrefix("error: choose the output with --html FILE"))
        (status, io) = await Self.run(["report", "--html", "out.html"])
        #expect(status == 2)
        #expect(io.err.contains("missing argument TRANSCRIPT"))
        let (helpStatus, help) = await Self.run(["report", "--help"])
        #expect(helpStatus == 0)
        #expect(help.out.contains("USAGE: harness report [options] TRANSCRIPT..."))
    }

    @Test func runWritesAnHTMLReportWithReplayCommands() async throws {
        let directory = try TemporaryDirectory()
        let output = directory.url.appendingPathComponent("report.html").path
        let context = HarnessContext(
            scenarios: ReportGoldenTests.scenarios, nodes: {
                var registry = NodeUnderTestRegistry()
                registry.register("golden", summary: "a scripted client") {
                    FakeNode(supports: [.connect, .resetIdentity, .enterBackground], answers: [.resetIdentity: .error("locked")])
                }
                return registry
            }(), gatewayFactory: GatewayFactories.standard)
        let tool = CommandLineTool(name: "harness", summary: "test", commands: ConformanceCommands.all(context))
        let recording = RecordingIO()
        let status = await tool.main(["run", "--node", "golden", "--filter", "HS-90*,INV-901", "--seed", "5", "--slowness", "1.5", "--no-probe",
                                      "--jobs", "2", "--transcripts", directory.url.appendingPathComponent("t").path,
                                      "--html", output], io: recording.io)
        #expect(status == 1, "\(recording.err)")
        let html = try String(contentsOfFile: output, encoding: .utf8)
        #expect(html.contains("<code class=\"replay\">harness run --node golden --slowness 1.5 --filter HS-902 --profile current --seed 5</code>"))
        #expect(html.contains("id=\"run-INV-901-current\""))
        // Every run kept its transcript, so passing runs have a (closed) diagram too.
        #expect(html.contains("<details class=\"diagram-wrap\"><summary>Sequence diagram"))
        #expect(html.contains("<details class=\"diagram-wrap\" open><summary>Sequence diagram"))
        #expect(html.contains("failing-step"))
    }

    @Test func replayCommandsKeepTheClientAndQuoteForTheShell() throws {
        let tool = CLITests.tool
        let spec = try #require(tool.commands.first { $0.name == "run" })
        let parsed = try tool.parse(["--node-command", "python3 adapter.py --flag 'x'", "--filter", "PAIR-*", "--jobs", "4",
                                     "--strict", "--json", "r.json", "--seed", "3"], for: spec)
        #expect(ConformanceCommands.replayBase(parsed) == "harness run --node-command 'python3 adapter.py --flag '\\''x'\\''' --strict")
    }
}
