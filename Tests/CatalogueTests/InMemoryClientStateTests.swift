import Conformance
import Foundation
import MockGateway
import ReferenceAdapter
import ReferenceNode
import Scenarios
import Testing

/// In a simulated run the reference client keeps its state files in memory: a restart within
/// the run still finds them, the run's state directory stays empty, and `--keep-state` writes
/// them there for inspection.
@Suite("The in-process client's state in a simulated run")
struct InMemoryClientStateTests {
    static func run(keepState: Bool) async throws -> (RunReport, URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("memory-state-\(UUID().uuidString.prefix(8))")
        let driver = InProcessDriver(name: "reference") { ReferenceNodeUnderTest() }
        // PAIR-004: the client restarts and must present the device token it stored.
        let runner = Runner(
            scenarios: allScenarios, driver: driver, gatewayFactory: GatewayFactories.standard,
            configuration: RunConfiguration(seed: 3, selection: RunSelection(filters: ["PAIR-004"], profileNames: ["current"]),
                                            keepState: keepState, transcripts: .none, stateRoot: root, probe: false))
        return (try await runner.run(), root.appendingPathComponent("PAIR-004@current"))
    }

    @Test func aRestartFindsTheStateAndTheDirectoryStaysEmpty() async throws {
        let (report, directory) = try await Self.run(keepState: false)
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let result = try #require(report.results.first)
        #expect(result.verdict == .pass, "\(result.message)")
        #expect(!FileManager.default.fileExists(atPath: directory.path), "the run's state directory is removed, as before")
    }

    @Test func keepStateWritesTheFilesIntoTheRunsDirectory() async throws {
        let (report, directory) = try await Self.run(keepState: true)
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        #expect(report.results.first?.verdict == .pass)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names.contains("identity.json") && names.contains("device-auth.json"), "\(names)")
        let identity = try DeviceIdentityFile.deviceId(in: directory.appendingPathComponent("identity.json"))
        #expect(identity.count == 64, "a device id (SHA-256 hex) in the kept identity file")
    }
}

/// Reads the device id of a kept identity file.
enum DeviceIdentityFile {
    static func deviceId(in url: URL) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        return try #require(object?["deviceId"] as? String)
    }
}
