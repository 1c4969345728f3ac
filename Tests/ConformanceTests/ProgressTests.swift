import Conformance
import Foundation
import Testing

/// The live progress line and `--quiet`.
@Suite struct ProgressTests {
    static func result(_ key: String, _ verdict: Verdict) -> RunResult {
        let parts = key.split(separator: "@").map(String.init)
        return RunResult(id: parts[0], title: "t", area: "HS", level: .must, requirement: "r", source: "s", profile: parts[1],
                         verdict: verdict, seed: 1, baseSeed: 1, durationMs: 0)
    }

    @Test func theLineCountsVerdictsNamesRunningRunsAndEstimatesTimeLeft() {
        var line = ProgressLine(total: 4)
        #expect(line.render(elapsedMs: 0) == "[0/4] 0 pass, 0 fail · 0:00 elapsed")
        line.apply(.started(key: "HS-001@current"))
        line.apply(.started(key: "HS-001@legacy"))
        #expect(line.render(elapsedMs: 1_500) == "[0/4] 0 pass, 0 fail · running HS-001 [current], HS-001 [legacy] · 0:01 elapsed")
        line.apply(.finished(Self.result("HS-001@current", .pass)))
        line.apply(.started(key: "PAIR-002@current"))
        line.apply(.finished(Self.result("HS-001@legacy", .timeout)))
        // Two of four done in 50 s: about 50 s left.
        #expect(line.render(elapsedMs: 50_000) == "[2/4] 1 pass, 1 fail · running PAIR-002 [current] · 0:50 elapsed, ~0:50 left")
        line.apply(.finished(Self.result("PAIR-002@current", .warn)))
        line.apply(.started(key: "LIFE-001@current"))
        line.apply(.finished(Self.result("LIFE-001@current", .unsupported)))
        #expect(line.render(elapsedMs: 3_725_000) == "[4/4] 1 pass, 1 fail, 1 warn, 1 unsupported · 1:02:05 elapsed")
    }

    @Test func aNarrowTerminalCutsTheRunningListFirst() {
        var line = ProgressLine(total: 10)
        for index in 1...6 { line.apply(.started(key: "PAIR-00\(index)@current")) }
        let narrow = line.render(elapsedMs: 2_000, width: 80)
        #expect(narrow == "[0/10] 0 pass, 0 fail · running PAIR-001 [current] +5 more · 0:02 elapsed")
        #expect(narrow.count <= 80)
        let tiny = line.render(elapsedMs: 2_000, width: 60)
        #expect(tiny == "[0/10] 0 pass, 0 fail · 6 running · 0:02 elapsed")
    }

    @Test func liveUpdatesRewriteOneLineAndFinishClearsIt() {
        let written = RecordingIO()
        let live = LiveProgress(total: 1, width: 100, elapsedMs: { 0 }, write: written.io.out)
        live.apply(.started(key: "HS-001@current"))
        live.apply(.finished(Self.result("HS-001@current", .pass)))
        live.finish()
        live.redraw()
        #expect(written.out == "\r\u{1B}[2K[0/1] 0 pass, 0 fail · running HS-001 [current] · 0:00 elapsed"
            + "\r\u{1B}[2K[1/1] 1 pass, 0 fail · 0:00 elapsed" + "\r\u{1B}[2K")
    }

    static func runCommand(_ extra: [String], terminal: Bool) async -> (Int32, RecordingIO) {
        let context = HarnessContext(scenarios: ReportGoldenTests.scenarios, nodes: {
            var registry = NodeUnderTestRegistry()
            registry.register("golden", summary: "a scripted client") { FakeNode(supports: [.connect]) }
            return registry
        }(), gatewayFactory: GatewayFactories.standard)
        let tool = CommandLineTool(name: "harness", summary: "test", commands: ConformanceCommands.all(context))
        let recording = RecordingIO()
        var io = recording.io
        io.stdoutIsTerminal = terminal
        io.terminalColumns = 120
        // The fake node never connects: without --no-probe the probe would decide every run.
        let status = await tool.main(["run", "--node", "golden", "--filter", "HS-901,HS-902", "--seed", "3", "--no-probe"] + extra, io: io)
        return (status, recording)
    }

    @Test func aTerminalGetsTheLiveLineAndTheReportOnACleanLine() async {
        let (status, io) = await Self.runCommand([], terminal: true)
        #expect(status == 1)
        #expect(io.out.hasPrefix("\r\u{1B}[2K[0/3] 0 pass, 0 fail · running HS-901 [current]"), "\(io.out.prefix(200))")
        #expect(io.out.contains("\r\u{1B}[2K[3/3] 2 pass, 1 fail · "))
        #expect(io.out.contains("\r\u{1B}[2KOpenClaw conformance: 3 runs"), "the line is cleared before the report")
    }

    @Test func otherwiseNothingExtraIsPrinted() async {
        let (status, io) = await Self.runCommand([], terminal: false)
        #expect(status == 1)
        #expect(!io.out.contains("\r"))
        #expect(!io.out.contains("\u{1B}"))
        #expect(io.out.hasPrefix("OpenClaw conformance: 3 runs"))
        #expect(io.err == "Running 3 runs with seed 3 (client: in-process \"golden\")\n")
    }

    @Test func quietPrintsOnlyTheSummary() async {
        for terminal in [true, false] {
            let (status, io) = await Self.runCommand(["--quiet"], terminal: terminal)
            #expect(status == 1)
            #expect(io.out.hasPrefix("Summary: 3 runs: 2 pass, 1 fail, "), "\(io.out)")
            #expect(!io.out.contains("HS-902 [current]  MUST"), "no per-run lines")
            #expect(io.out.hasSuffix("Result: 1 gated failure (exit 1)\n"))
            #expect(!io.out.contains("\r"))
            #expect(io.err.isEmpty)
        }
    }
}
