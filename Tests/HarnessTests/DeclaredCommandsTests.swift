import Foundation
import GatewayProtocol
import Testing

/// A node that declares only its own commands (none of `device.info`, `device.status`,
/// `debug.*`, `canvas.*`), run as a separate process through `harness run --node-command`: every
/// scenario that needs one of those commands must be `unsupported`, never `fail` or `warn`, also
/// for a client that never gets a session. A real Gateway only invokes declared commands.
@Suite struct DeclaredCommandsTests {
    /// The scenarios that invoke `device.info`/`device.status`/`debug.*` or a foreground-only
    /// command, and so cannot judge a node that declares none of them.
    static let needingCommands = [
        "HS-007", "INV-001", "INV-002", "INV-004", "INV-005", "INV-006", "INV-007", "INV-008",
        "LIFE-002", "LIFE-003", "LIFE-004",
    ]

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Runs `harness run` with the reference client as a process declaring only `acme.weather`.
    /// - Returns: verdict and message per `ID@profile`.
    private static func run(_ scenarios: [String], nodeArguments: [String]) async throws -> [String: (verdict: String, message: String)] {
        let harness = try ServeProcess.executable()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("declared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("report.json").path
        let node = ([harness.path, "reference-node", "--declare", "acme.weather"] + nodeArguments).map(shellQuoted).joined(separator: " ")
        let process = try LineProcess(name: "harness run", executable: harness, arguments: [
            "run", "--node-command", node, "--filter", scenarios.joined(separator: ","), "--jobs", "2", "--json", json,
        ])
        let status = await process.waitForExit(timeout: .seconds(300))
        await process.kill()
        _ = try #require(status, "harness run did not finish within 300 s\n\(process.transcript)")
        let report = try JSONValue(parsing: try Data(contentsOf: URL(fileURLWithPath: json)))
        let runs = try #require(report["runs"]?.arrayValue, "no runs in the JSON report\n\(process.transcript)")
        var verdicts: [String: (verdict: String, message: String)] = [:]
        for record in runs {
            let key = "\(record["id"]?.stringValue ?? "?")@\(record["profile"]?.stringValue ?? "?")"
            verdicts[key] = (record["verdict"]?.stringValue ?? "none", record["message"]?.stringValue ?? "")
        }
        return verdicts
    }

    @Test func aNodeWithItsOwnCommandsIsUnsupportedNotFailedForScenariosThatNeedOthers() async throws {
        let verdicts = try await Self.run(Self.needingCommands + ["INV-003"], nodeArguments: [])
        for id in Self.needingCommands {
            let runs = verdicts.filter { $0.key.hasPrefix(id + "@") }
            #expect(!runs.isEmpty, "no run of \(id)")
            for (key, outcome) in runs {
                #expect(outcome.verdict == "unsupported", "\(key): \(outcome.verdict): \(outcome.message)")
                #expect(outcome.message.contains("declare"), "\(key): \(outcome.message)")
            }
        }
        // The same client is judged where the scenario needs nothing it lacks: it answers an
        // unknown command with an error.
        let control = verdicts.filter { $0.key.hasPrefix("INV-003@") }
        #expect(!control.isEmpty)
        for (key, outcome) in control { #expect(outcome.verdict == "pass", "\(key): \(outcome.verdict): \(outcome.message)") }
    }

    @Test func aNodeThatNeverGetsASessionIsUnsupportedToo() async throws {
        // wrong-device-id: every connect is refused, so the client never has a session; its
        // connect still says what it declares.
        let verdicts = try await Self.run(Self.needingCommands, nodeArguments: ["--mutant", "wrong-device-id"])
        #expect(verdicts.count >= Self.needingCommands.count)
        for (key, outcome) in verdicts {
            #expect(outcome.verdict == "unsupported", "\(key): \(outcome.verdict): \(outcome.message)")
        }
    }
}
