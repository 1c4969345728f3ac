import Conformance
import Foundation
import MockGateway
import TestSupport
import Testing

/// Golden files of the three reports. Re-record with `OPENCLAW_RECORD_GOLDEN=1 swift test
/// --filter ReportGoldenTests`; a recording run fails on purpose so that a baseline is reviewed
/// before it is committed.
@Suite struct ReportGoldenTests {
    static func scenario(_ id: ScenarioID, _ level: RequirementLevel = .must, needs: Set<StimulusKind> = [],
                         profiles: ProfileSelection = .current, body: @escaping Scenario.Body) -> Scenario {
        Scenario(id, level, title: "Title of \(id)", requirement: "The requirement of \(id) <with & markup>.",
                 source: "GP 1.\(id.number ?? 0)", needs: needs, profiles: profiles, body: body)
    }

    static let scenarios: [Scenario] = [
        scenario("HS-901", profiles: .all) { run in try await run.client.stimulate(.connect) },
        scenario("HS-902") { run in
            try run.expect(false, "the client kept one pairing request", expected: "1 request", actual: "2 requests")
        },
        scenario("PAIR-901", .should) { run in try run.expectEqual(3, 1, "reconnects per second") },
        scenario("PAIR-902") { run in run.warn("backs off slowly", expected: "pause after 3 attempts", actual: "7 attempts") },
        scenario("PRES-901", needs: [.pushRegister]) { _ in },
        scenario("INV-901") { run in try await run.client.stimulate(.resetIdentity) },
        scenario("LIFE-901") { run in try await run.client.stimulate(.enterBackground) },
    ]

    static func report() async throws -> (RunReport, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let driver = InProcessDriver(name: "golden") {
            FakeNode(supports: [.connect, .resetIdentity, .enterBackground],
                     answers: [.resetIdentity: .error("keychain \"locked\""), .enterBackground: .hang])
        }
        let report = try await runScenarios(scenarios, driver: driver) {
            $0.seed = 1234
            $0.stimulusTimeoutMs = 200
            $0.transcripts = .failing(directory: directory.url)
        }
        return (report.normalized(replacingPath: directory.path, with: "<transcripts>"), directory)
    }

    @Test func terminalReportMatchesItsBaseline() async throws {
        let (report, _) = try await Self.report()
        try assertGolden(TerminalReporter(color: false).render(report), named: "terminal.txt")
    }

    @Test func junitReportMatchesItsBaseline() async throws {
        let (report, _) = try await Self.report()
        try assertGolden(JUnitReporter().render(report), named: "junit.xml")
    }

    @Test func jsonReportMatchesItsBaseline() async throws {
        let (report, _) = try await Self.report()
        try assertGolden(JSONReporter().render(report), named: "report.json")
    }

    @Test func junitParsesWithPythonsXMLParser() async throws {
        guard let python = Fixtures.python else { return }  // Skipped only when python3 is absent.
        let (report, directory) = try await Self.report()
        let file = directory.url.appendingPathComponent("junit.xml")
        // Garbage a client might print must not break the XML either.
        let hostile = RunReport(
            seed: 1, slowness: 1, strict: false, client: "x", transcriptDirectory: nil,
            results: [RunResult(id: "HS-999", title: "t", area: "HS", level: .must, requirement: "r\u{1}\u{1B}[31m", source: "s",
                                profile: "current", verdict: .fail, message: "bad \u{0}\u{7} ]]> <x/> & \"q\"",
                                clientLogTail: ["\u{FFFE}\u{1B}[0m"], seed: 1, baseSeed: 1, durationMs: 5)])
        try Data(JUnitReporter().render(report).utf8).write(to: file)
        let hostileFile = directory.url.appendingPathComponent("hostile.xml")
        try Data(JUnitReporter().render(hostile).utf8).write(to: hostileFile)
        let script = """
        import sys, xml.etree.ElementTree as ET
        for path in sys.argv[1:]:
            root = ET.parse(path).getroot()
            cases = root.findall('.//testcase')
            print(len(cases), len(root.findall('.//failure')), len(root.findall('.//error')), len(root.findall('.//skipped')), cases[0].get('name'), cases[0].get('classname'))
        """
        let output = try await runProcess(python, ["-c", script, file.path, hostileFile.path])
        let lines = output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first == "8 1 2 1 HS-901 [current] HS")
        #expect(lines.last == "1 1 0 0 HS-999 [current] HS")
    }

    @Test func colourIsUsedOnlyOnATerminalWithoutNoColor() {
        #expect(TerminalReporter.shouldUseColor(isTerminal: true, environment: [:]))
        #expect(!TerminalReporter.shouldUseColor(isTerminal: false, environment: [:]))
        #expect(!TerminalReporter.shouldUseColor(isTerminal: true, environment: ["NO_COLOR": "1"]))
        #expect(TerminalReporter.shouldUseColor(isTerminal: true, environment: ["NO_COLOR": ""]))
    }

    @Test func colouredOutputDiffersOnlyByEscapes() async throws {
        let (report, _) = try await Self.report()
        let coloured = TerminalReporter(color: true).render(report)
        #expect(coloured.contains("\u{1B}[31m"))
        let stripped = coloured.replacingOccurrences(of: "\u{1B}\\[[0-9]+m", with: "", options: .regularExpression)
        #expect(stripped == TerminalReporter(color: false).render(report))
    }
}

/// Compares `text` with `Golden/<name>`; with `OPENCLAW_RECORD_GOLDEN=1` writes it instead and
/// fails on purpose.
func assertGolden(_ text: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = Fixtures.golden.appendingPathComponent(name)
    if ProcessInfo.processInfo.environment["OPENCLAW_RECORD_GOLDEN"] == "1" {
        try FileManager.default.createDirectory(at: Fixtures.golden, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        Issue.record("baseline \(name) recorded; re-run without OPENCLAW_RECORD_GOLDEN", sourceLocation: sourceLocation)
        return
    }
    let expected = try String(contentsOf: url, encoding: .utf8)
    if expected != text {
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let actualLines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = zip(expectedLines, actualLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(expectedLines.count, actualLines.count)
        let expectedLine = first < expectedLines.count ? String(expectedLines[first]) : "<end>"
        let actualLine = first < actualLines.count ? String(actualLines[first]) : "<end>"
        Issue.record("""
            \(name) differs from its baseline at line \(first + 1):
              expected: \(expectedLine)
              actual:   \(actualLine)
            (re-record with OPENCLAW_RECORD_GOLDEN=1 if the change is intended)
            """, sourceLocation: sourceLocation)
    }
}

/// Runs a program and returns its stdout; throws when it fails.
func runProcess(_ executable: String, _ arguments: [String]) async throws -> String {
    let output = try await AsyncProcess.run(URL(fileURLWithPath: executable), arguments)
    guard output.status == 0 else {
        throw HarnessError("\(executable) failed: \(output.stderrText)")
    }
    return output.stdoutText
}
