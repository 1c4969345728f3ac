import Foundation
import GatewayProtocol
import Testing

/// PRES-006 through the process driver: the Gateway's silent push reaches the reference client,
/// a separate process, as the adapter protocol's `background-wake` line (trigger `silent_push`,
/// the payload as `push`), and the mutant that reports another trigger after a push wake is
/// failed there too. The mutant acts only on a wake that carries `push`, so its failure shows
/// that the payload travelled over the adapter protocol.
@Suite struct PushWakeProcessTests {
    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Runs `harness run --node-command "harness reference-node <nodeArguments>" --filter PRES-006`.
    /// - Returns: verdict and `actual` per `ID@profile`.
    private static func run(nodeArguments: [String]) async throws -> [String: (verdict: String, actual: String)] {
        let harness = try ServeProcess.executable()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("push-wake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("report.json").path
        let node = ([harness.path, "reference-node"] + nodeArguments).map(shellQuoted).joined(separator: " ")
        let process = try LineProcess(name: "harness run", executable: harness, arguments: [
            "run", "--node-command", node, "--filter", "PRES-006", "--jobs", "2", "--json", json,
        ])
        let status = await process.waitForExit(timeout: .seconds(300))
        await process.kill()
        _ = try #require(status, "harness run did not finish within 300 s\n\(process.transcript)")
        let report = try JSONValue(parsing: try Data(contentsOf: URL(fileURLWithPath: json)))
        let runs = try #require(report["runs"]?.arrayValue, "no runs in the JSON report\n\(process.transcript)")
        var verdicts: [String: (verdict: String, actual: String)] = [:]
        for record in runs {
            let key = "\(record["id"]?.stringValue ?? "?")@\(record["profile"]?.stringValue ?? "?")"
            verdicts[key] = (record["verdict"]?.stringValue ?? "none", record["actual"]?.stringValue ?? "")
        }
        return verdicts
    }

    @Test func theReferenceClientProcessIsWokenByThePushAndItsMutantIsCaught() async throws {
        let correct = try await Self.run(nodeArguments: [])
        #expect(Set(correct.keys) == ["PRES-006@current", "PRES-006@legacy"])
        for (key, outcome) in correct { #expect(outcome.verdict == "pass", "\(key): \(outcome.verdict) \(outcome.actual)") }

        let mutant = try await Self.run(nodeArguments: ["--mutant", "wrong-push-wake-trigger"])
        #expect(mutant.count == 2)
        for (key, outcome) in mutant {
            #expect(outcome.verdict == "fail", "\(key): \(outcome.verdict)")
            #expect(outcome.actual == "background", "\(key): \(outcome.actual)")
        }
    }
}
