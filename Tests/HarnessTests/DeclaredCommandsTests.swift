import Foundation
import GatewayProtocol
import Testing

/// A node that declares only its own commands (none of `device.info`, `device.status`,
/// `debug.*`, `canvas.*`), run as a separate process through `harness run --node-command`: every
/// scenario that needs one of those commands must be `unsupported`, never `fail` or `warn`. A
/// real Gateway only invokes declared commands. A client that never gets a session fails with the
/// handshake probe's cause instead, whatever it declares.
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

    /// Runs `harness run` with the reference client as a process declaring only `acme.weather`
    /// (unless `nodeArguments` has a `--declare` of its own).
    /// - Returns: verdict and message per `ID@profile`.
    static func run(_ scenarios: [String], nodeArguments: [String], harnessArguments: [String] = [],
                    profile: String? = nil, nodePipe: String = "") async throws -> [String: (verdict: String, message: String)] {
        let harness = try ServeProcess.executable()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("declared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("report.json").path
        let declares = nodeArguments.contains("--declare") ? [] : ["--declare", "acme.weather"]
        let node = ([harness.path, "reference-node"] + declares + nodeArguments).map(shellQuoted).joined(separator: " ") + nodePipe
        let process = try LineProcess(name: "harness run", executable: harness, arguments: [
            "run", "--node-command", node, "--filter", scenarios.joined(separator: ","), "--jobs", "2", "--json", json,
        ] + harnessArguments + (profile.map { ["--profile", $0] } ?? []))
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

    @Test func aNodeThatNeverGetsASessionFailsWithTheProbeCauseNotUnsupported() async throws {
        // wrong-device-id: every connect is refused, so the client never has a session. What its
        // refused connect declares decides nothing: it was never offered an invoke, and the
        // verdict names the reason it never got in.
        let verdicts = try await Self.run(Self.needingCommands, nodeArguments: ["--mutant", "wrong-device-id"])
        #expect(verdicts.count >= Self.needingCommands.count)
        for (key, outcome) in verdicts {
            // fail for a MUST scenario, warn for a SHOULD one: judged, never unsupported.
            #expect(["fail", "warn"].contains(outcome.verdict), "\(key): \(outcome.verdict): \(outcome.message)")
            #expect(outcome.message.contains("DEVICE_AUTH_DEVICE_ID_MISMATCH"), "\(key): \(outcome.message)")
        }
    }

    /// The scenarios that only need a command that answers (the probe command).
    static let probing = ["HS-007", "INV-001", "INV-002", "LIFE-002", "LIFE-003", "LIFE-004"]

    @Test func aNodeDeclaringAnUpstreamReadOnlyCommandIsProbedWithIt() async throws {
        // camera.list: read-only, no params, allowed by default upstream; no device.* at all.
        let verdicts = try await Self.run(Self.probing, nodeArguments: ["--declare", "camera.list"], profile: "current")
        #expect(verdicts.count == Self.probing.count)
        for (key, outcome) in verdicts { #expect(outcome.verdict == "pass", "\(key): \(outcome.verdict): \(outcome.message)") }
    }

    @Test func aNodeWithItsOwnCommandsIsProbedWithTheOneNamedOnTheCommandLine() async throws {
        // Only debug.slow, which answers after durationMs: probed with the params given.
        let verdicts = try await Self.run(Self.probing, nodeArguments: ["--declare", "debug.slow"],
                                          harnessArguments: ["--probe-command", #"debug.slow={"durationMs": 1}"#], profile: "current")
        #expect(verdicts.count == Self.probing.count)
        for (key, outcome) in verdicts { #expect(outcome.verdict == "pass", "\(key): \(outcome.verdict): \(outcome.message)") }
        // Without it the same node is unsupported, and told what to add.
        let without = try await Self.run(["HS-007"], nodeArguments: ["--declare", "debug.slow"], profile: "current")
        for (key, outcome) in without {
            #expect(outcome.verdict == "unsupported", "\(key): \(outcome.verdict)")
            #expect(outcome.message.contains("--probe-command"), "\(key): \(outcome.message)")
        }
    }

    @Test func aNodeWhoseAdapterNamesProbeCommandsInItsHelloIsProbedWithThem() async throws {
        // The adapter's hello gains "probeCommands" (sed rewrites the reference node's hello line).
        let probes = #"[{"command":"debug.slow","params":{"durationMs":1}}]"#
        let pipe = " | sed -u " + Self.shellQuoted(#"s/"type":"hello"/"type":"hello","probeCommands":"# + probes + "/")
        let verdicts = try await Self.run(["HS-007", "INV-001"], nodeArguments: ["--declare", "debug.slow"], profile: "current",
                                          nodePipe: pipe)
        #expect(verdicts.count == 2)
        for (key, outcome) in verdicts { #expect(outcome.verdict == "pass", "\(key): \(outcome.verdict): \(outcome.message)") }
    }
}
