#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayProtocol
import Testing

/// `harness run` with misbehaving adapter processes: one that leaks secrets into its logs, one
/// that escapes its process group with `setsid`, one that ignores SIGTERM.
@Suite("harness run: hostile adapters", .serialized)
struct RunHostileClientTests {
    static let fixtures = packageRoot.appendingPathComponent("Tests/ConformanceTests/Fixtures")

    struct Outcome {
        var status: Int32?
        var output: String
        var directory: URL
        var json: String
        var clientLog: String
    }

    /// Runs HS-001 on the current profile against `fixture` (always a failure: the fixtures do
    /// not connect), with every transcript and a JSON report written into a fresh directory.
    static func run(_ fixture: String, _ arguments: [String], extra: [String] = []) async throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let command = (["/bin/sh", fixtures.appendingPathComponent(fixture).path] + arguments)
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let process = try LineProcess(
            name: "harness run", executable: try ServeProcess.executable(),
            arguments: ["run", "--node-command", command, "--filter", "HS-001", "--profile", "current", "--slowness", "0.3",
                        "--seed", "7", "--transcripts", directory.appendingPathComponent("transcripts").path,
                        "--json", directory.appendingPathComponent("report.json").path] + extra)
        let status = await process.waitForExit(timeout: .seconds(120))
        await process.kill()
        let output = process.lines.all.joined(separator: "\n") + "\n" + process.errors.all.joined(separator: "\n")
        let json = (try? String(contentsOf: directory.appendingPathComponent("report.json"), encoding: .utf8)) ?? ""
        let transcripts = directory.appendingPathComponent("transcripts")
        let logName = (try? FileManager.default.contentsOfDirectory(atPath: transcripts.path))?.first { $0.hasSuffix(".client.log") }
        let clientLog = logName.flatMap { try? String(contentsOf: transcripts.appendingPathComponent($0), encoding: .utf8) } ?? ""
        return Outcome(status: status, output: output, directory: directory, json: json, clientLog: clientLog)
    }

    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }

    @Test(arguments: [false, true])
    func secretsAnAdapterLogsStayOutOfTheReportTheJSONAndTheFiles(showSecrets: Bool) async throws {
        let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let outcome = try await Self.run("leaky.sh", [tag], extra: showSecrets ? ["--show-secrets"] : [])
        defer { try? FileManager.default.removeItem(at: outcome.directory) }
        #expect(outcome.status == 1, "HS-001 fails against an adapter that does not connect\n\(outcome.output)")
        #expect(outcome.clientLog.contains("stderr: connecting with token="), "\(outcome.clientLog)")
        let transcripts = try FileManager.default.contentsOfDirectory(atPath: outcome.directory.appendingPathComponent("transcripts").path)
            .map { try String(contentsOf: outcome.directory.appendingPathComponent("transcripts").appendingPathComponent($0), encoding: .utf8) }
            .joined(separator: "\n")
        let everything = [outcome.output, outcome.json, outcome.clientLog, transcripts].joined(separator: "\n")
        for secret in ["LEAKTOKEN-\(tag)", "LEAKBEARER-\(tag)", "LEAKPASSWORD-\(tag)"] {
            if showSecrets {
                #expect(outcome.clientLog.contains(secret), "--show-secrets keeps \(secret)")
            } else {
                #expect(!everything.contains(secret), "\(secret) leaked\n\(outcome.clientLog)")
            }
        }
        if !showSecrets { #expect(outcome.clientLog.contains("token=<redacted>")) }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"), "needs /proc (Linux)"))
    func anAdapterThatEscapesWithSetsidLeavesNothingRunning() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-escape-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("pids").path
        let outcome = try await Self.run("escape.sh", [record])
        defer { try? FileManager.default.removeItem(at: outcome.directory) }
        #expect(outcome.status != nil, "harness run ended\n\(outcome.output)")
        let pids = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(pids.count == 2)
        for pid in pids { #expect(!Self.isRunning(pid), "pid \(pid) still runs after harness run") }
        for (pid, command) in zip(pids, ["sleep 1001", "sleep 1002"]) {
            #expect(outcome.clientLog.contains("pid \(pid) (\(command)) had left the client's process group (setsid); ended it with SIGTERM"),
                    "\(outcome.clientLog)")
            #expect(outcome.json.contains("pid \(pid) (\(command)) had left the client's process group"), "the report's notes name it")
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"), "needs /proc (Linux)"))
    func anAdapterIgnoringSIGTERMIsNamedAsSuch() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-stubborn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("pids").path
        let outcome = try await Self.run("stubborn.sh", [record])
        defer { try? FileManager.default.removeItem(at: outcome.directory) }
        let pid = try #require(String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }.first)
        #expect(!Self.isRunning(pid))
        let line = try #require(outcome.clientLog.split(separator: "\n").first { $0.contains("\(pid) (") && $0.contains("ignored SIGTERM") },
                                "\(outcome.clientLog)")
        #expect(line.contains("killed it with SIGKILL after "))
        // After the grace period: 2 s scaled by --slowness 0.3.
        let words = line.split(separator: " ")
        let milliseconds = words.indices.first { words[$0] == "after" }.flatMap { Int(words[$0 + 1]) } ?? 0
        #expect(milliseconds >= 550, "\(line)")
    }
}
