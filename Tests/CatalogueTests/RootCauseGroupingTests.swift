import Conformance
import Foundation
import MockGateway
import ReferenceAdapter
import ReferenceNode
import Scenarios
import Testing

/// Root causes found in real runs: a mutant that breaks the handshake fails many scenarios for
/// one reason, and the report says so once.
@Suite("Root causes of mutants")
struct RootCauseGroupingTests {
    static func report(_ mutant: Mutant, filters: [String], profiles: [String] = [], probe: Bool) async throws -> RunReport {
        let configuration = RunConfiguration(
            seed: 20_261_201, slowness: 1, selection: RunSelection(filters: filters, profileNames: profiles), jobs: 4,
            transcripts: .none, probe: probe)
        let driver = InProcessDriver(name: "reference+\(mutant.rawValue)") { ReferenceNodeUnderTest(mutants: [mutant]) }
        return try await Runner(scenarios: allScenarios, driver: driver, gatewayFactory: GatewayFactories.standard,
                                configuration: configuration).run()
    }

    static func expectOneGroup(_ report: RunReport, code: String, probe: Bool) throws {
        let failed = report.results.filter { $0.verdict != .pass && $0.verdict != .unsupported }
        #expect(failed.count >= 4, "the mutant fails several scenarios")
        let groups = report.rootCauseGroups
        #expect(groups.count == 1, "\(groups.map(\.sentence))")
        let group = try #require(groups.first)
        #expect(group.cause.key == "connect-refused:\(code)")
        #expect(group.cause.summary == "the client never got a session; its connects were refused with \(code)")
        #expect(Set(group.runKeys) == Set(failed.map(\.key)))
        #expect(group.sentence.hasPrefix("\(failed.count) runs: the client never got a session; its connects were refused with \(code) (first in "))

        let terminal = TerminalReporter(color: false).render(report)
        #expect(terminal.contains("Root causes:\n  \(group.sentence)\n"))
        let json = JSONReporter().value(report)
        #expect(json["rootCauses"]?.arrayValue?.count == 1)
        #expect(json["rootCauses"]?.arrayValue?.first?["key"]?.stringValue == "connect-refused:\(code)")
        #expect(JUnitReporter().render(report).contains("root cause: \(group.sentence)"))

        // With the probe, the runs it decided share the cause of the probe's own run.
        if probe {
            let decided = failed.filter(\.decidedByProbe)
            #expect(!decided.isEmpty && decided.allSatisfy { $0.rootCause?.key == "connect-refused:\(code)" })
            return
        }
        // A wait that ended without its event names what the Gateway saw last.
        let timedOut = try #require(failed.first { $0.message.hasPrefix("timed out waiting") || $0.message.contains("never came") })
        #expect(timedOut.actual?.contains("the last the Gateway saw from the client:") == true, "\(timedOut.actual ?? "")")
        #expect(timedOut.actual?.contains("refused with \(code)") == true, "\(timedOut.actual ?? "")")
    }

    @Test func aWrongDeviceIdIsOneCauseNamedByItsRefusalCode() async throws {
        for probe in [false, true] {
            let report = try await Self.report(.wrongDeviceId, filters: ["HS-*", "PAIR-*"], probe: probe)
            try Self.expectOneGroup(report, code: "DEVICE_AUTH_DEVICE_ID_MISMATCH", probe: probe)
        }
    }

    @Test func aSignatureWithoutTheNonceIsOneCauseNamedByItsRefusalCode() async throws {
        for probe in [false, true] {
            // Without device.nonce the connect fails the current schema (frames.ts `nonce:
            // NonEmptyString`): INVALID_REQUEST "invalid connect params", no detail code; the
            // legacy schema lets it through to the proof's DEVICE_AUTH_NONCE_REQUIRED.
            let current = try await Self.report(.signWithoutNonce, filters: ["HS-*"], profiles: ["current"], probe: probe)
            try Self.expectOneGroup(current, code: "INVALID_REQUEST", probe: probe)
            let legacy = try await Self.report(.signWithoutNonce, filters: ["HS-*"], profiles: ["legacy"], probe: probe)
            try Self.expectOneGroup(legacy, code: "DEVICE_AUTH_NONCE_REQUIRED", probe: probe)
        }
    }
}
