#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Conformance
import Foundation
import GatewayProtocol
import MockGateway
import Locking
import Testing

@Suite struct InProcessRunnerTests {
    static func scenario(_ id: ScenarioID, _ level: RequirementLevel = .must, needs: Set<StimulusKind> = [],
                         profiles: ProfileSelection = .current, options: Scenario.Options = .standard,
                         body: @escaping Scenario.Body) -> Scenario {
        Scenario(id, level, title: "t \(id)", requirement: "requirement of \(id)", source: "test", needs: needs,
                 profiles: profiles, options: options, body: body)
    }

    @Test func eachOutcomeYieldsItsVerdictAndTheRunContinues() async throws {
        let node = FakeNode(supports: [.connect, .resetIdentity, .backgroundWake, .enterBackground],
                            answers: [.resetIdentity: .error("keychain locked"), .enterBackground: .hang,
                                      .backgroundWake: .unsupported])
        let scenarios = [
            Self.scenario("HS-001") { run in try await run.client.stimulate(.connect) },
            Self.scenario("HS-002") { run in try run.expect(1 + 1 == 3, "arithmetic", expected: "3", actual: "2") },
            Self.scenario("HS-003", .should) { run in try run.expectEqual("a", "b", "letters") },
            Self.scenario("HS-004") { run in run.warn("a SHOULD slipped", expected: "x", actual: "y") },
            Self.scenario("HS-005", needs: [.setupCode]) { _ in Issue.record("must not run without setup-code") },
            Self.scenario("HS-006") { run in try await run.client.stimulate(.resetIdentity) },
            Self.scenario("HS-007") { run in try await run.client.stimulate(.enterBackground) },
            Self.scenario("HS-008") { run in try await run.client.stimulate(.backgroundWake(trigger: "manual")) },
            Self.scenario("HS-009") { run in try await run.client.stimulate(.pushRegister(transport: "relay")) },
            Self.scenario("HS-010", options: .init(timeoutMs: 300)) { _ in try await Task.sleep(for: .seconds(3600)) },
            Self.scenario("LIFE-001") { _ in throw CocoaError(.fileNoSuchFile) },
        ]
        let report = try await runScenarios(scenarios, driver: InProcessDriver(name: "fake") { node }) {
            $0.stimulusTimeoutMs = 300
        }
        #expect(report.results.count == scenarios.count)
        #expect(report.verdict("HS-001@current") == .pass)
        #expect(report.verdict("HS-002@current") == .fail)
        #expect(report.result("HS-002@current")?.expected == "3")
        #expect(report.result("HS-002@current")?.actual == "2")
        #expect(report.verdict("HS-003@current") == .warn)
        #expect(report.verdict("HS-004@current") == .warn)
        #expect(report.result("HS-004@current")?.message == "a SHOULD slipped")
        #expect(report.verdict("HS-005@current") == .unsupported)
        #expect(report.result("HS-005@current")?.message.contains("setup-code") == true)
        #expect(report.verdict("HS-006@current") == .error)
        #expect(report.result("HS-006@current")?.message.contains("keychain locked") == true)
        #expect(report.verdict("HS-007@current") == .timeout)
        #expect(report.verdict("HS-008@current") == .unsupported)
        #expect(report.verdict("HS-009@current") == .unsupported)
        #expect(report.verdict("HS-010@current") == .timeout)
        #expect(report.verdict("LIFE-001@current") == .error)
        #expect(report.exitCode == 1)
        #expect(node.recorded.starts == scenarios.count)
        #expect(node.recorded.stops == scenarios.count)
    }

    @Test func aClientThatNeverStartsTimesOut() async throws {
        let report = try await runScenarios([Self.scenario("HS-001") { _ in }],
                                            driver: InProcessDriver(name: "stuck") { FakeNode(startHangs: true) }) {
            $0.helloTimeoutMs = 200
        }
        #expect(report.verdict("HS-001@current") == .timeout)
    }

    @Test func aScenarioRunsOncePerProfileAgainstAFreshGateway() async throws {
        let identities = Locked<[String: String]>([:])
        let scenario = Self.scenario("PAIR-001", profiles: .all) { run in
            identities.withLock { $0[run.profile.name] = run.gateway.identity.deviceId }
            try run.expectEqual(run.gateway.profile.name, run.profile.name, "the Gateway runs the run's profile")
            try run.expect(FileManager.default.fileExists(atPath: run.stateDirectory.path), "a state directory exists")
        }
        let report = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) { $0.jobs = 2 }
        #expect(report.results.map(\.key) == ["PAIR-001@current", "PAIR-001@legacy"])
        #expect(report.results.allSatisfy { $0.verdict == .pass })
        let seen = identities.withLock { $0 }
        #expect(seen.count == 2 && seen["current"] != seen["legacy"])
    }

    @Test func waitsFailWithExpectedAndActualWhenNothingHappens() async throws {
        let scenario = Self.scenario("PAIR-002") { run in
            _ = try await run.waitForEvent("a pairing request", within: .milliseconds(100)) { event in
                if case .pairingRequested(let request) = event { request } else { nil }
            }
        }
        // Real time: the deadline passes.
        let sockets = try await runScenarios([scenario], driver: InProcessDriver(name: "fake", transport: .loopbackSockets) { FakeNode() })
        let timedOut = try #require(sockets.result("PAIR-002@current"))
        #expect(timedOut.verdict == .fail)
        #expect(timedOut.message == "timed out waiting for a pairing request")
        #expect(timedOut.expected == "a pairing request within 100 ms")
        // Simulated: the fake client has no timer and no connection, so nothing can ever happen
        // and the wait fails at once, saying so.
        let simulated = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() })
        let stuck = try #require(simulated.result("PAIR-002@current"))
        #expect(stuck.verdict == .fail)
        #expect(stuck.message == "a pairing request never came: nothing more can happen in the run")
        #expect(stuck.expected == "a pairing request within 100 ms")
        #expect(stuck.actual?.contains("no client or Gateway timer is pending") == true)
    }

    @Test func aSimulatedWaitLetsVirtualTimePassUntilItsDeadline() async throws {
        let scenario = Self.scenario("PAIR-004") { run in
            // A Gateway timer keeps the run busy (a question expiring in a minute): the wait
            // times out at its own deadline, on the virtual clock.
            _ = try await run.gateway.createQuestion("Deploy?", options: ["yes", "no"], expiresIn: .seconds(60))
            let before = run.gateway.clock.nowMs
            do {
                _ = try await run.waitForEvent("a pairing request", within: .seconds(30)) { event in
                    if case .pairingRequested(let request) = event { request } else { nil }
                }
            } catch let failure as ScenarioFailure {
                try run.expectEqual(failure.message, "timed out waiting for a pairing request", "a plain timeout")
                try run.expectEqual(run.gateway.clock.nowMs - before, 30_000, "30 s of virtual time passed")
                return
            }
            try run.fail("the wait did not time out")
        }
        let report = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() })
        let result = try #require(report.result("PAIR-004@current"))
        #expect(result.verdict == .pass, "\(result.message) \(result.expected ?? "") \(result.actual ?? "")")
    }

    @Test func expectNoEventPassesWhenTheGatewayStaysQuiet() async throws {
        let scenario = Self.scenario("PAIR-003") { run in
            try await run.expectNoEvent(within: .milliseconds(50), "pairing request") { event in
                if case .pairingRequested = event { true } else { false }
            }
        }
        let report = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() })
        #expect(report.verdict("PAIR-003@current") == .pass)
    }

    @Test func slownessScalesDeadlines() async throws {
        let seen = Locked<Duration?>(nil)
        let scenario = Self.scenario("LIFE-002") { run in
            seen.withLock { $0 = run.deadline(ms: 1_000) }
        }
        _ = try await runScenarios([scenario], driver: InProcessDriver(name: "fake", transport: .loopbackSockets) { FakeNode() }) {
            $0.slowness = 2.5
        }
        #expect(seen.withLock { $0 } == .milliseconds(2_500))
        // A simulated run's deadlines are virtual time: the machine's speed does not matter.
        _ = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) { $0.slowness = 2.5 }
        #expect(seen.withLock { $0 } == .milliseconds(1_000))
    }

    @Test func aSecondGatewayHasItsOwnIdentityAndTranscript() async throws {
        let directory = try TemporaryDirectory()
        let scenario = Self.scenario("PUSH-002") { run in
            let other = try await run.startGateway()
            try run.expect(other.url != run.gateway.url, "another address")
            try run.expect(other.identity.deviceId != run.gateway.identity.deviceId, "another identity")
            try await run.client.stimulate(.switchGateway(url: other.url))
        }
        let report = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) {
            $0.transcripts = .all(directory: directory.url)
        }
        let result = try #require(report.result("PUSH-002@current"))
        #expect(result.verdict == .pass, "\(result.message)")
        #expect(result.transcriptPath == directory.url.appendingPathComponent("PUSH-002@current.jsonl").path)
        #expect(result.extraTranscriptPaths == [directory.url.appendingPathComponent("PUSH-002@current.gateway2.jsonl").path])
        let transcript = try String(contentsOfFile: try #require(result.transcriptPath), encoding: .utf8)
        #expect(transcript.contains("stimulus: switch-gateway"))
    }

    @Test func failingRunsWriteTranscriptsToAKeptTemporaryDirectoryByDefault() async throws {
        let scenarios = [
            Self.scenario("INV-001") { run in try run.fail("no result", expected: "one result", actual: "none") },
            Self.scenario("INV-002") { _ in },
        ]
        let report = try await runScenarios(scenarios, driver: InProcessDriver(name: "fake") { FakeNode() }) {
            $0.transcripts = .failing(directory: nil)
        }
        let directory = try #require(report.transcriptDirectory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let failing = try #require(report.result("INV-001@current")?.transcriptPath)
        #expect(failing.hasPrefix(directory))
        #expect(FileManager.default.fileExists(atPath: failing))
        #expect(report.result("INV-002@current")?.transcriptPath == nil)
        // The transcript marks where the scenario gave up.
        let lines = try String(contentsOfFile: failing, encoding: .utf8).split(separator: "\n")
        let entries = try lines.map { try TranscriptEntry(json: try JSONValue(parsing: String($0))) }
        #expect(entries.filter { $0.kind == .failure }.map(\.text) == ["fail: no result"])
    }

    @Test func theTemporaryTranscriptDirectoryIsPerUserAndRemovedWhenTheInvocationPasses() async throws {
        // A warning writes a transcript, but the invocation passes: nothing is left behind.
        let warns = Self.scenario("INV-003", .should) { run in run.warn("slow", expected: "fast", actual: "slow") }
        let passed = try await runScenarios([warns], driver: InProcessDriver(name: "fake") { FakeNode() }) {
            $0.transcripts = .failing(directory: nil)
        }
        #expect(passed.exitCode == 0)
        #expect(passed.result("INV-003@current")?.verdict == .warn)
        #expect(passed.transcriptDirectory == nil)
        #expect(passed.result("INV-003@current")?.transcriptPath == nil)

        let failing = Self.scenario("INV-004") { run in try run.fail("no", expected: "a", actual: "b") }
        let failed = try await runScenarios([failing], driver: InProcessDriver(name: "fake") { FakeNode() }) {
            $0.transcripts = .failing(directory: nil)
        }
        let directory = try #require(failed.transcriptDirectory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-harness-\(getuid())").path
        #expect(directory.hasPrefix(base + "/transcripts-\(getpid())-"), "\(directory)")
        #expect(FileManager.default.fileExists(atPath: try #require(failed.result("INV-004@current")?.transcriptPath)))
    }

    @Test func anInvocationRemovesTheTranscriptsOfInvocationsThatEnded() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-harness-\(getuid())")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        // A pid that is not running: the largest possible one.
        let stale = base.appendingPathComponent("transcripts-2147483646-deadbeef")
        try FileManager.default.createDirectory(at: stale, withIntermediateDirectories: true)
        let alive = base.appendingPathComponent("transcripts-\(getpid())-alivealive")
        try FileManager.default.createDirectory(at: alive, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: alive) }

        let failing = Self.scenario("INV-005") { run in try run.fail("no", expected: "a", actual: "b") }
        let report = try await runScenarios([failing], driver: InProcessDriver(name: "fake") { FakeNode() }) {
            $0.transcripts = .failing(directory: nil)
        }
        defer { if let directory = report.transcriptDirectory { try? FileManager.default.removeItem(atPath: directory) } }
        #expect(!FileManager.default.fileExists(atPath: stale.path), "the ended invocation's directory was removed")
        #expect(FileManager.default.fileExists(atPath: alive.path), "a running invocation's directory is kept")
    }

    @Test func stateDirectoriesAreRemovedUnlessKept() async throws {
        let root = try TemporaryDirectory()
        let paths = Locked<[String]>([])
        let scenario = Self.scenario("TOKEN-001", profiles: .all) { run in
            paths.withLock { $0.append(run.stateDirectory.path) }
            try Data("token".utf8).write(to: run.stateDirectory.appendingPathComponent("device.json"))
        }
        _ = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) {
            $0.stateRoot = root.url
        }
        #expect(paths.withLock { $0.count } == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)

        let kept = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) {
            $0.stateRoot = root.url
            $0.keepState = true
        }
        #expect(kept.keptStateDirectory == root.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == ["TOKEN-001@current", "TOKEN-001@legacy"])
    }

    @Test func strictTurnsWarningsIntoAFailingExitCode() async throws {
        let scenario = Self.scenario("PRES-003", .should) { run in try run.expect(false, "resent too early") }
        let lenient = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() })
        #expect(lenient.verdict("PRES-003@current") == .warn)
        #expect(lenient.exitCode == 0)
        let strict = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) { $0.strict = true }
        #expect(strict.exitCode == 1)
    }

    @Test func theSeedIsRecordedInEveryResultAndDrivesRandomChoices() async throws {
        let picks = Locked<[Int]>([])
        let scenario = Self.scenario("INV-004") { run in
            picks.withLock { $0.append(run.random(in: 0...1_000_000)) }
        }
        let first = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) { $0.seed = 7 }
        _ = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { FakeNode() }) { $0.seed = 7 }
        let values = picks.withLock { $0 }
        #expect(values.count == 2 && values[0] == values[1])
        #expect(first.results[0].baseSeed == 7)
        #expect(first.results[0].seed == Seed.derive(7, "INV-004@current"))
    }

    @Test func scenariosThatStartTheClientThemselvesCanChangeItsToken() async throws {
        let scenario = Self.scenario("TOKEN-002", options: .init(startsClient: false)) { run in
            try run.expect(run.client.supportedStimuli.isEmpty, "not started yet")
            try await run.client.start(sharedToken: "s3cret")
            try run.expectEqual(run.client.configuration.sharedToken, "s3cret", "token passed")
            try await run.client.restart()
        }
        // Without `restart` in its list, a restart is a stop and a start by the harness.
        let node = FakeNode(supports: [.connect])
        let report = try await runScenarios([scenario], driver: InProcessDriver(name: "fake") { node })
        #expect(report.verdict("TOKEN-002@current") == .pass, "\(report.results.first?.message ?? "")")
        #expect(node.recorded.starts == 2)
        #expect(node.recorded.stops == 2)
    }

    @Test func demoScenariosFromTheIndexRunAgainstTheirProfiles() async throws {
        let report = try await runScenarios(allScenarios, driver: InProcessDriver(name: "fake") { FakeNode() })
        #expect(report.results.map(\.key) == ["HS-900@current", "PAIR-900@current", "PAIR-900@legacy", "PRES-900@legacy"])
        #expect(report.results.allSatisfy { $0.verdict == .pass })
    }
}
