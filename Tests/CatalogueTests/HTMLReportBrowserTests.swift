import Conformance
import Foundation
import GatewayProtocol
import MockGateway
import ReferenceAdapter
import ReferenceNode
import Scenarios
import Locking
import TestSupport
import Testing

/// Headless Chromium, found on the PATH (`chromium`, `chromium-browser`, `google-chrome`) or
/// named by `OPENCLAW_CHROMIUM`.
enum Chromium {
    static let path = ChromiumBrowser.path

    /// `OPENCLAW_REQUIRE_BROWSER=1` (set by `.ci/run`): a missing browser fails the test.
    static let required = ChromiumBrowser.required

    /// Where the report and its screenshot are kept for a person to look at:
    /// `OPENCLAW_TEST_OUTPUT`, else `.build/test-output` in the package.
    static var outputDirectory: URL {
        if let configured = ProcessInfo.processInfo.environment["OPENCLAW_TEST_OUTPUT"] {
            return URL(fileURLWithPath: configured)
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/test-output")
    }

    /// Runs Chromium headless on a `file://` URL, without network access, extensions or a
    /// profile of its own; returns its standard output.
    static func run(_ executable: String, _ arguments: [String], profile: URL, timeout: Duration = .seconds(120)) async throws -> String {
        let output = try await AsyncProcess.run(URL(fileURLWithPath: executable), [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--user-data-dir=\(profile.path)",
            // Nothing may reach the network: no background services, no name resolution.
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-default-browser-check", "--host-resolver-rules=MAP * ~NOTFOUND",
        ] + arguments, timeout: timeout)
        guard output.status == 0 else {
            throw HarnessError("chromium exited with status \(output.status) for \(arguments)")
        }
        return output.stdoutText
    }
}

/// The HTML report in a real browser with JavaScript: the sequence diagram of a failing run is
/// there and a frame expands to its JSON.
@Suite("HTML report in a browser")
struct HTMLReportBrowserTests {
    @Test(.enabled(if: Chromium.path != nil || Chromium.required,
                   "Chromium is not installed (apt-get install chromium); set OPENCLAW_REQUIRE_BROWSER=1 to fail instead of skipping"))
    func aFailingRunShowsItsDiagramAndAnExpandedFrame() async throws {
        let chromium = try #require(Chromium.path, "OPENCLAW_REQUIRE_BROWSER=1 but no chromium was found on the PATH (apt-get install chromium)")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("html-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let configuration = RunConfiguration(
            seed: 20_261_201, selection: RunSelection(filters: ["HS-003"], profileNames: ["current"]),
            transcripts: .all(directory: work.appendingPathComponent("transcripts")))
        let driver = InProcessDriver(name: "reference+wrong-device-id") { ReferenceNodeUnderTest(mutants: [.wrongDeviceId]) }
        let report = try await Runner(scenarios: allScenarios, driver: driver, gatewayFactory: GatewayFactories.standard,
                                      configuration: configuration).run()
        let result = try #require(report.results.first { $0.key == "HS-003@current" })
        #expect(result.verdict == .fail, "the mutant fails HS-003")
        var attachments: [String: RunAttachments] = [:]
        for result in report.results { attachments[result.key] = RunAttachments.load(for: result) }
        let html = HTMLReporter(replayBase: "harness run --node reference --mutant wrong-device-id").render(report, attachments: attachments)

        // The first connect the client sent, in that run's diagram.
        let article = try #require(html.range(of: "id=\"run-HS-003-current\""))
        let connectLabel = try #require(html.range(of: "<span class=\"label\">connect #", range: article.upperBound..<html.endIndex))
        let details = try #require(html.range(of: "<details class=\"msg in\" id=\"", options: .backwards,
                                              range: article.upperBound..<connectLabel.lowerBound))
        let idEnd = try #require(html.range(of: "\"", range: details.upperBound..<html.endIndex))
        let frameId = String(html[details.upperBound..<idEnd.lowerBound])

        let output = Chromium.outputDirectory
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let page = output.appendingPathComponent("html-report-HS-003.html")
        try Data(html.utf8).write(to: page)
        let profile = work.appendingPathComponent("chromium-profile")
        let url = page.absoluteString + "?expand=" + frameId

        let dom = try await Chromium.run(chromium, ["--dump-dom", url], profile: profile)
        let run = try #require(dom.range(of: "id=\"run-HS-003-current\""), "the run is in the DOM:\n\(dom.prefix(2000))")
        let end = dom.range(of: "</article>", range: run.upperBound..<dom.endIndex)?.lowerBound ?? dom.endIndex
        let section = String(dom[run.upperBound..<end])
        #expect(section.components(separatedBy: "class=\"arrow ").count - 1 >= 3, "the diagram's arrows")
        #expect(section.contains("class=\"arrow in\""))
        #expect(section.contains("class=\"arrow out\""))
        #expect(section.contains("failing-step"))
        // The frame was expanded by the page's script: open, marked, and its JSON pretty-printed.
        let opened = try #require(section.range(of: "id=\"\(frameId)\""), "frame \(frameId) in the DOM")
        let tagStart = try #require(section.range(of: "<details", options: .backwards, range: section.startIndex..<opened.lowerBound))
        let tagEnd = try #require(section.range(of: ">", range: opened.upperBound..<section.endIndex))
        let tag = String(section[tagStart.lowerBound..<tagEnd.upperBound])
        #expect(tag.contains("expanded"), "\(tag)")
        #expect(tag.contains(" open"), "\(tag)")
        let frameEnd = section.range(of: "</details>", range: opened.upperBound..<section.endIndex)?.lowerBound ?? section.endIndex
        let frame = String(section[opened.upperBound..<frameEnd])
        #expect(frame.contains("<pre class=\"frame-json\" data-filled=\"1\">{\n  \"id\": "), "\(frame.prefix(600))")
        #expect(frame.contains("\n  \"method\": \"connect\",\n"), "\(frame.prefix(600))")
        #expect(frame.contains("\"signature\": \""), "the frame's own fields")

        let screenshot = output.appendingPathComponent("html-report-HS-003.png")
        try? FileManager.default.removeItem(at: screenshot)
        _ = try await Chromium.run(chromium, ["--screenshot=\(screenshot.path)", "--window-size=1400,1600", url], profile: profile)
        let png = try Data(contentsOf: screenshot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "a PNG at \(screenshot.path)")
        #expect(png.count > 10_000)
    }

    /// A `serve` session as `harness report` draws it: a client whose node and operator connects
    /// are refused eleven times before one console `approve` lets both in. The thirteen
    /// connections fit a 1,400 px window (closed connections' lifelines are reused), and the
    /// console's actions are rows.
    @Test(.enabled(if: Chromium.path != nil || Chromium.required,
                   "Chromium is not installed (apt-get install chromium); set OPENCLAW_REQUIRE_BROWSER=1 to fail instead of skipping"))
    func aServeTranscriptShowsTheOperatorsApprovalAndEveryConnection() async throws {
        let chromium = try #require(Chromium.path, "OPENCLAW_REQUIRE_BROWSER=1 but no chromium was found on the PATH (apt-get install chromium)")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("html-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        var entries: [TranscriptEntry] = []
        func add(_ conn: String, _ kind: TranscriptEntry.Kind, _ message: JSONValue? = nil, text: String? = nil) {
            let t = Int64(entries.count * 40)
            entries.append(TranscriptEntry(monotonicMs: t, gatewayMs: 1_796_221_740_000 + t, connectionId: conn, kind: kind,
                                           message: message, closeCode: kind == .close ? 1008 : nil, text: text))
        }
        func connect(_ conn: String, role: String, mode: String) {
            add(conn, .open, text: "127.0.0.1 /")
            add(conn, .inbound, ["type": "req", "id": .string("c-\(conn)"), "method": "connect",
                                 "params": ["role": .string(role), "client": ["id": "openclaw-ios", "mode": .string(mode)]]])
        }
        for attempt in 1...11 {
            let conn = String(format: "%08x-0000-4000-8000-%012x", attempt, attempt)
            connect(conn, role: attempt % 2 == 1 ? "node" : "operator", mode: attempt % 2 == 1 ? "node" : "ui")
            add(conn, .outbound, ["type": "res", "id": .string("c-\(conn)"), "ok": false,
                                  "error": ["code": "NOT_PAIRED", "details": ["code": "PAIRING_REQUIRED"]]])
            add(conn, .close, text: "pairing required")
        }
        add("-", .operatorAction, text: "approve 11e344f1-8520-43be-bd91-7a1b7d2960e8")
        for (conn, role, mode) in [("aaaaaaaa-0000-4000-8000-00000000000a", "node", "node"),
                                   ("bbbbbbbb-0000-4000-8000-00000000000b", "operator", "ui")] {
            connect(conn, role: role, mode: mode)
            add(conn, .outbound, ["type": "res", "id": .string("c-\(conn)"), "ok": true, "payload": ["type": "hello-ok"]])
        }
        add("-", .operatorAction, text: "invoke device.info on 3e94a28d")
        let html = HTMLReporter().render(transcripts: [(document: TranscriptDocument(name: "serve.jsonl", entries: entries), clientLog: [])],
                                         title: "serve")

        let output = Chromium.outputDirectory
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let page = output.appendingPathComponent("html-report-serve.html")
        try Data(html.utf8).write(to: page)
        let profile = work.appendingPathComponent("chromium-profile")
        let dom = try await Chromium.run(chromium, ["--dump-dom", page.absoluteString], profile: profile)
        let heads = dom.components(separatedBy: "class=\"lane-head ").count - 1
        #expect(heads == 4, "operator, Gateway, one lifeline for the refused connects and then the node session, one for the operator session: \(heads)")
        #expect(heads <= 2 + SequenceDiagram.separateLaneLimit)
        #expect(dom.contains("▶ operator: approve 11e344f1-8520-43be-bd91-7a1b7d2960e8"))
        #expect(dom.contains("▶ operator: invoke device.info on 3e94a28d"))
        #expect(dom.contains("open #3 node · openclaw-ios · node · 00000003"), "a reused lifeline names each connection")

        let screenshot = output.appendingPathComponent("html-report-serve.png")
        try? FileManager.default.removeItem(at: screenshot)
        _ = try await Chromium.run(chromium, ["--screenshot=\(screenshot.path)", "--window-size=1400,900", page.absoluteString],
                                   profile: profile)
        let png = try Data(contentsOf: screenshot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "a PNG at \(screenshot.path)")
    }
}
