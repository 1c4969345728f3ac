import Conformance
import Foundation
import MockGateway
import Locking
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An in-process client whose answers are scripted per stimulus kind.
final class FakeNode: NodeUnderTest {
    enum Answer: Sendable {
        case ok
        case error(String)
        case unsupported
        /// Never answers (until cancelled).
        case hang
    }

    struct Calls: Sendable, Hashable {
        var starts = 0
        var stops = 0
        var applied: [StimulusKind] = []
    }

    let supportedStimuli: Set<StimulusKind>
    private let answers: [StimulusKind: Answer]
    private let startHangs: Bool
    // The lock guards the call record.
    private let calls = Locked(Calls())

    init(supports: Set<StimulusKind> = Set(StimulusKind.documented), answers: [StimulusKind: Answer] = [:],
         startHangs: Bool = false) {
        self.supportedStimuli = supports
        self.answers = answers
        self.startHangs = startHangs
    }

    var recorded: Calls { calls.withLock { $0 } }

    func start(_ configuration: NodeConfiguration) async throws {
        calls.withLock { $0.starts += 1 }
        if startHangs { try await Task.sleep(for: .seconds(3600)) }
    }

    func stop() async {
        calls.withLock { $0.stops += 1 }
    }

    func apply(_ stimulus: Stimulus) async throws -> StimulusReply {
        calls.withLock { $0.applied.append(stimulus.kind) }
        switch answers[stimulus.kind] ?? .ok {
        case .ok: return .ok
        case .error(let message): return .error(message)
        case .unsupported: throw ScenarioUnsupported("not here")
        case .hang:
            try await Task.sleep(for: .seconds(3600))
            return .ok
        }
    }
}

/// A temporary directory removed at the end of the test.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

enum Fixtures {
    /// `Tests/ConformanceTests/Fixtures`.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    /// `Tests/ConformanceTests/Golden`.
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    /// `sh <fixture> args...` as a node command.
    static func command(_ name: String, _ arguments: String...) -> String {
        (["/bin/sh", directory.appendingPathComponent(name).path] + arguments).map(shellQuote).joined(separator: " ")
    }

    static func shellQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The Python interpreter for tests: `OPENCLAW_PYTHON`, the package's `.venv`, or `python3`
    /// on the PATH; `nil` when there is none.
    static var python: String? {
        let environment = ProcessInfo.processInfo.environment
        let configured = InteropInterpreter.configuredPath
        if FileManager.default.isExecutableFile(atPath: configured) { return configured }
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/python3"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// Whether any process is left in process group `pgid`.
func processGroupExists(_ pgid: Int32) -> Bool {
    kill(-pgid, 0) == 0 || errno == EPERM
}

/// Runs `scenarios` with `driver` against real fake Gateways and returns the report.
func runScenarios(_ scenarios: [Scenario], driver: any ClientDriver, configure: (inout RunConfiguration) -> Void = { _ in })
    async throws -> RunReport
{
    var configuration = RunConfiguration(
        seed: 42, transcripts: .none, stepTimeoutMs: 2_000, helloTimeoutMs: 10_000, stimulusTimeoutMs: 5_000,
        // The fake clients of these tests mostly never connect; the probe has its own tests.
        probe: false)
    configure(&configuration)
    let runner = Runner(scenarios: scenarios, driver: driver, gatewayFactory: GatewayFactories.standard,
                        configuration: configuration)
    return try await runner.run()
}

extension RunReport {
    /// The verdict of `key` (`ID@profile`).
    func verdict(_ key: String) -> Verdict? {
        results.first { $0.key == key }?.verdict
    }

    func result(_ key: String) -> RunResult? {
        results.first { $0.key == key }
    }
}
