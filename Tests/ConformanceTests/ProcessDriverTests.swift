import Conformance
import Foundation
import MockGateway
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct ProcessDriverTests {
    static func scenario(_ id: ScenarioID, needs: Set<StimulusKind> = [], profiles: ProfileSelection = .current,
                         body: @escaping Scenario.Body = { run in try await run.client.stimulate(.resetIdentity) }) -> Scenario {
        Scenario(id, .must, requirement: "requirement of \(id)", source: "test", needs: needs, profiles: profiles, body: body)
    }

    static func fastTimeouts(_ configuration: inout RunConfiguration) {
        configuration.helloTimeoutMs = 1_500
        configuration.stimulusTimeoutMs = 1_500
    }

    @Test func anObedientAdapterPassesAndLeavesNoProcessOrDirectoryBehind() async throws {
        let directory = try TemporaryDirectory()
        let record = directory.url.appendingPathComponent("pids").path
        let scenarios = [
            Self.scenario("PAIR-008", needs: [.resetIdentity], profiles: .all),
            Self.scenario("PRES-001") { run in try await run.client.stimulate(.backgroundWake(trigger: "silent_push")) },
        ]
        let driver = ProcessDriver(command: Fixtures.command("obedient.sh", record, "grandchild"))
        let report = try await runScenarios(scenarios, driver: driver) {
            $0.transcripts = .all(directory: directory.url.appendingPathComponent("transcripts"))
            $0.jobs = 2
        }
        #expect(report.results.count == 3)
        for result in report.results { #expect(result.verdict == .pass, "\(result.key): \(result.message)") }

        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1)
            let pgid = try #require(Int32(parts[0]))
            #expect(!processGroupExists(pgid), "process group \(pgid) is still alive")
            #expect(!FileManager.default.fileExists(atPath: String(parts[1])), "state directory \(parts[1]) was not removed")
        }
        let log = try #require(report.result("PRES-001@current")?.clientLogPath)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("stderr: obedient adapter starting for ws://127.0.0.1:"))
        #expect(text.contains("log[info]: ready"))
    }

    @Test func garbageOnStdoutIsReportedNotFatal() async throws {
        let report = try await runScenarios([Self.scenario("HS-007")], driver: ProcessDriver(command: Fixtures.command("garbage.sh")))
        let result = try #require(report.result("HS-007@current"))
        #expect(result.verdict == .pass, "\(result.message)")
        #expect(result.notes.contains { $0.contains("not a JSON object") && $0.contains("Starting client v1.2") })
        #expect(result.notes.contains { $0.contains("unknown message type \"banner\"") })
        #expect(result.notes.contains { $0.contains("handling") })
    }

    @Test func aCrashIsAnErrorAndTheNextScenarioStillRuns() async throws {
        let scenarios = [Self.scenario("LIFE-001"), Self.scenario("LIFE-002", body: { _ in })]
        let report = try await runScenarios(scenarios, driver: ProcessDriver(command: Fixtures.command("crash.sh")))
        let crashed = try #require(report.result("LIFE-001@current"))
        #expect(crashed.verdict == .error)
        #expect(crashed.message.contains("exited unexpectedly"))
        #expect(crashed.message.contains("signal 11"))
        #expect(crashed.clientLogTail.contains("stderr: about to crash"))
        #expect(report.verdict("LIFE-002@current") == .pass)
    }

    @Test func aClientThatExitsDuringTheScenarioEndsItWithAnError() async throws {
        let scenario = Self.scenario("LIFE-003") { run in
            // Waits far longer than the client lives: the exit must cut the wait short.
            _ = try await run.waitForEvent("a node", within: .seconds(30)) { event in
                if case .nodeConnected = event { true } else { nil }
            }
        }
        let report = try await runScenarios([scenario], driver: ProcessDriver(command: Fixtures.command("exit-early.sh")))
        let result = try #require(report.result("LIFE-003@current"))
        #expect(result.verdict == .error)
        #expect(result.message == "the client exited unexpectedly (exit status 3)")
    }

    @Test func noHelloIsATimeout() async throws {
        let report = try await runScenarios([Self.scenario("HS-001")], driver: ProcessDriver(command: Fixtures.command("silent.sh")),
                                            configure: Self.fastTimeouts)
        let result = try #require(report.result("HS-001@current"))
        #expect(result.verdict == .timeout)
        #expect(result.message == "no hello from the client within 1500 ms")
        #expect(result.clientLogTail.contains("stderr: thinking..."))
    }

    @Test func anIgnoredStimulusIsATimeout() async throws {
        let report = try await runScenarios([Self.scenario("PAIR-008")], driver: ProcessDriver(command: Fixtures.command("ignore.sh")),
                                            configure: Self.fastTimeouts)
        let result = try #require(report.result("PAIR-008@current"))
        #expect(result.verdict == .timeout)
        #expect(result.message == "no reply to stimulus \"reset-identity\" within 1500 ms")
    }

    @Test func unsupportedAndErrorRepliesMapToTheirVerdicts() async throws {
        let scenarios = [
            Self.scenario("PAIR-008"),
            Self.scenario("PRES-001") { run in try await run.client.stimulate(.backgroundWake(trigger: "manual")) },
            Self.scenario("PUSH-001", needs: [.pushRegister]) { _ in Issue.record("must not run") },
            Self.scenario("QUES-002") { run in
                let reply = try await run.client.reply(to: .resetIdentity)
                try run.expectEqual(reply, .error("keychain locked"), "the refusal is visible to the scenario")
            },
        ]
        let report = try await runScenarios(scenarios, driver: ProcessDriver(command: Fixtures.command("refuse.sh")))
        #expect(report.verdict("PAIR-008@current") == .error)
        #expect(report.result("PAIR-008@current")?.message.contains("keychain locked") == true)
        #expect(report.verdict("PRES-001@current") == .unsupported)
        #expect(report.result("PRES-001@current")?.message.contains("not in this build") == true)
        #expect(report.verdict("PUSH-001@current") == .unsupported)
        #expect(report.verdict("QUES-002@current") == .pass)
    }

    @Test func aClientThatSendsNoNodeConnectDeclaresNoCommandsAndIsUnsupported() async throws {
        // obedient.sh never opens a socket: it declares nothing, so scenarios that need a
        // declared command are unsupported, not failed, once the step deadline has passed.
        let scenarios = [
            Self.scenario("INV-005") { run in try await run.requireDeclared("debug.slow") },
            Self.scenario("LIFE-002") { run in _ = try await run.probeCommand() },
        ]
        let report = try await runScenarios(scenarios, driver: ProcessDriver(command: Fixtures.command("obedient.sh")))
        for key in ["INV-005@current", "LIFE-002@current"] {
            let result = try #require(report.result(key))
            #expect(result.verdict == .unsupported, "\(key): \(result.message)")
            #expect(result.message.contains("sent no node connect"), "\(key): \(result.message)")
        }
    }

    @Test func anUnknownAdapterProtocolVersionIsAnError() async throws {
        let report = try await runScenarios([Self.scenario("HS-002", body: { _ in })],
                                            driver: ProcessDriver(command: Fixtures.command("wrong-version.sh")))
        #expect(report.verdict("HS-002@current") == .error)
        #expect(report.result("HS-002@current")?.message == "the client speaks adapter protocol 99; this harness speaks 1")
    }

    @Test func restartStartsTheProcessAgainWithTheSameStateDirectory() async throws {
        let directory = try TemporaryDirectory()
        let record = directory.url.appendingPathComponent("starts").path
        let scenario = Self.scenario("PAIR-004", needs: [.restart]) { run in
            try Data("kept".utf8).write(to: run.stateDirectory.appendingPathComponent("token"))
            try await run.client.restart()
            try await run.client.stimulate(.resetIdentity)
        }
        let report = try await runScenarios([scenario], driver: ProcessDriver(command: Fixtures.command("restart-count.sh", record)))
        #expect(report.verdict("PAIR-004@current") == .pass, "\(report.results.first?.message ?? "")")
        let starts = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(starts.count == 2)
        #expect(Set(starts).count == 1, "both starts got the same state directory")
    }

    @Test func aPythonAdapterWorks() async throws {
        let python = try #require(Fixtures.python, "python3 is needed for this test")
        let command = [python, Fixtures.directory.appendingPathComponent("adapter.py").path].map(Fixtures.shellQuote).joined(separator: " ")
        let scenarios = [
            Self.scenario("PAIR-008", needs: [.resetIdentity]),
            Self.scenario("PUSH-001") { run in try await run.client.stimulate(.pushRegister(transport: "relay")) },
        ]
        let report = try await runScenarios(scenarios, driver: ProcessDriver(command: command))
        #expect(report.verdict("PAIR-008@current") == .pass, "\(report.results.first?.message ?? "")")
        #expect(report.verdict("PUSH-001@current") == .unsupported)
        #expect(report.result("PAIR-008@current")?.clientLogTail.contains("log[debug]: doing reset-identity") == true)
    }

    @Test func theEnvironmentCarriesTheGatewayAndStateDirectory() async throws {
        let directory = try TemporaryDirectory()
        let out = directory.url.appendingPathComponent("env").path
        let command = "env | grep '^OPENCLAW_' | sort > \(Fixtures.shellQuote(out)); exec /bin/sh \(Fixtures.shellQuote(Fixtures.directory.appendingPathComponent("obedient.sh").path))"
        let scenario = Scenario("TOKEN-003", .must, requirement: "r", source: "s", profiles: .current,
                                options: .init(sharedToken: "shared-secret")) { _ in }
        let report = try await runScenarios([scenario], driver: ProcessDriver(command: command))
        #expect(report.verdict("TOKEN-003@current") == .pass, "\(report.results.first?.message ?? "")")
        let environment = try String(contentsOfFile: out, encoding: .utf8)
        #expect(environment.contains("OPENCLAW_GATEWAY_URL=ws://127.0.0.1:"))
        #expect(environment.contains("OPENCLAW_GATEWAY_TOKEN=shared-secret"))
        #expect(environment.contains("OPENCLAW_STATE_DIR=/"))
        #expect(environment.contains("OPENCLAW_HARNESS_RUN=TOKEN-003@current"))
    }

    /// A descriptor the host process has open without close-on-exec (a test runner's Foundation
    /// `Process` keeps such a socket per child, its exit notification) must not reach a client:
    /// a client holding it for its whole life kept another child's exit from being seen.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "needs /proc (Linux)"))
    func aClientInheritsNoDescriptorOfTheHostButItsStreams() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let file = open("/dev/null", O_RDONLY)
        try #require(file >= 0)
        defer { for fd in pair + [file] { close(fd) } }
        for fd in pair + [file] { try #require(fcntl(fd, F_GETFD) & FD_CLOEXEC == 0, "the descriptor must be inheritable") }

        let directory = try TemporaryDirectory()
        let out = directory.url.appendingPathComponent("fds").path
        let command = "ls /proc/$$/fd > \(Fixtures.shellQuote(out)); exec /bin/sh \(Fixtures.shellQuote(Fixtures.directory.appendingPathComponent("obedient.sh").path))"
        let report = try await runScenarios([Self.scenario("HS-007")], driver: ProcessDriver(command: command))
        #expect(report.verdict("HS-007@current") == .pass, "\(report.results.first?.message ?? "")")
        let inherited = Set(try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) })
        #expect(inherited.isSuperset(of: [0, 1, 2]), "\(inherited.sorted())")
        #expect(inherited.isDisjoint(with: pair + [file]), "the client's shell holds \(inherited.sorted()); the host's were \(pair + [file])")
    }

    // MARK: - Processes that do not end when asked

    /// Whether `pid` still runs (exists and is not a zombie waiting to be reaped).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }

    static func pids(in file: String) throws -> [Int32] {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"), "needs /proc (Linux)"))
    func processesThatLeftTheProcessGroupAreEndedAndNamed() async throws {
        let directory = try TemporaryDirectory()
        let record = directory.url.appendingPathComponent("pids").path
        let report = try await runScenarios([Self.scenario("LIFE-001", needs: [.resetIdentity])],
                                            driver: ProcessDriver(command: Fixtures.command("escape.sh", record))) {
            $0.transcripts = .all(directory: directory.url.appendingPathComponent("transcripts"))
        }
        let result = try #require(report.result("LIFE-001@current"))
        #expect(result.verdict == .pass, "\(result.message)")
        let escaped = try Self.pids(in: record)
        #expect(escaped.count == 2, "the fixture started two setsid processes")
        for pid in escaped { #expect(!Self.isRunning(pid), "pid \(pid) survived the run") }
        let log = try String(contentsOfFile: try #require(result.clientLogPath), encoding: .utf8)
        for (pid, command) in zip(escaped, ["sleep 1001", "sleep 1002"]) {
            #expect(log.contains("pid \(pid) (\(command)) had left the client's process group (setsid); ended it with SIGTERM after "),
                    "\(log)")
            #expect(result.notes.contains { $0.contains("pid \(pid) (\(command)) had left the client's process group") })
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"), "needs /proc (Linux)"))
    func anAdapterThatIgnoresSIGTERMIsNamedAndKilledAfterTheGracePeriod() async throws {
        let directory = try TemporaryDirectory()
        let record = directory.url.appendingPathComponent("pids").path
        let report = try await runScenarios([Self.scenario("LIFE-001", needs: [.resetIdentity])],
                                            driver: ProcessDriver(command: Fixtures.command("stubborn.sh", record))) {
            $0.transcripts = .all(directory: directory.url.appendingPathComponent("transcripts"))
        }
        let result = try #require(report.result("LIFE-001@current"))
        #expect(result.verdict == .pass, "\(result.message)")
        let pid = try #require(try Self.pids(in: record).first)
        #expect(!Self.isRunning(pid))
        let log = try String(contentsOfFile: try #require(result.clientLogPath), encoding: .utf8)
        let line = try #require(log.split(separator: "\n").first { $0.contains("\(pid) (") && $0.contains("ignored SIGTERM") }, "\(log)")
        #expect(line.contains("killed it with SIGKILL after "), "\(line)")
        // Killed after the grace period (2 s at slowness 1), not at once.
        let words = line.split(separator: " ")
        let milliseconds = words.indices.first { words[$0] == "after" }.flatMap { Int(words[$0 + 1]) } ?? 0
        #expect(milliseconds >= 1_900, "\(line)")
        #expect(result.notes.contains { $0.contains("ignored SIGTERM") })
    }
}
