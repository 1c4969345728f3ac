import Conformance
import Foundation
import GatewayProtocol
import MockGateway
import Testing

@Suite("Handshake probe")
struct HandshakeProbeTests {
    private static func frame(_ method: String, on connection: String) -> GatewayEvent {
        .frameIn(connectionId: connection, frame: .request(RequestFrame(id: "1", method: method, params: [:])), binary: false)
    }

    @Test func aClientThatNeverConnectsIsNamedSo() {
        let diagnosis = HandshakeProbe.diagnose([])
        #expect(diagnosis.key == "no-connection")
        #expect(diagnosis.sentence == "the client never opened a connection to the Gateway")
    }

    @Test func refusalsAreNamedWithTheirCodesAndTheScenarioThatJudgesThem() {
        let refused = ErrorShape(code: "INVALID_REQUEST", message: "device nonce required",
                                 details: ["code": "DEVICE_AUTH_NONCE_REQUIRED"])
        let events: [GatewayEvent] = [
            .connectionOpened(connectionId: "a", remoteAddress: "127.0.0.1", nonce: "n"), Self.frame("connect", on: "a"),
            .handshakeRejected(connectionId: "a", error: refused, closeCode: 1008),
            .connectionOpened(connectionId: "b", remoteAddress: "127.0.0.1", nonce: "m"), Self.frame("connect", on: "b"),
            .handshakeRejected(connectionId: "b", error: refused, closeCode: 1008),
        ]
        let diagnosis = HandshakeProbe.diagnose(events)
        #expect(diagnosis.key == "refused:DEVICE_AUTH_NONCE_REQUIRED")
        #expect(diagnosis.sentence == "the client never got a session: its 2 connects were refused with DEVICE_AUTH_NONCE_REQUIRED")
        #expect(diagnosis.seeAlso == "HS-004")
    }

    @Test func connectionsWithoutConnectAreNamedSo() {
        let events: [GatewayEvent] = [
            .connectionOpened(connectionId: "a", remoteAddress: "127.0.0.1", nonce: "n"),
            .connectionClosed(connectionId: "a", code: 1000, reason: ""),
        ]
        let diagnosis = HandshakeProbe.diagnose(events)
        #expect(diagnosis.key == "no-connect")
        #expect(diagnosis.sentence == "the client never got a session: its 1 connection never sent connect (closed with 1000)")
        #expect(diagnosis.seeAlso == "HS-001")
    }

    private static func scenario(_ id: String, needsSession: Bool = true, needs: Set<StimulusKind> = [],
                                 level: RequirementLevel = .must) -> Scenario {
        Scenario(ScenarioID(id), level, requirement: "requirement of \(id)", source: "test", needs: needs, profiles: .current,
                 options: Scenario.Options(needsSession: needsSession)) { run in
            try run.expect(false, "the body ran", expected: "not run", actual: "ran")
        }
    }

    @Test func aClientThatGetsNoSessionIsDecidedAtOnce() async throws {
        let scenarios = [
            Self.scenario("PAIR-001"), Self.scenario("PRES-003", level: .should),
            Self.scenario("PUSH-001", needs: [.pushRegister]), Self.scenario("HS-004", needsSession: false),
        ]
        let report = try await runScenarios(
            scenarios, driver: InProcessDriver(name: "fake") { FakeNode(supports: [.connect]) }) { $0.probe = true }
        let probe = try #require(report.probes.first)
        #expect(report.probes.count == 1)
        #expect(!probe.admitted && probe.profile == "current" && probe.causeKey == "no-connection")

        let decided = try #require(report.result("PAIR-001@current"))
        #expect(decided.verdict == .fail && decided.decidedByProbe)
        #expect(decided.message == "not run: the client never opened a connection to the Gateway in the handshake probe")
        // A SHOULD scenario warns; one needing a stimulus the client lacks stays unsupported.
        #expect(report.verdict("PRES-003@current") == .warn)
        #expect(report.verdict("PUSH-001@current") == .unsupported)
        #expect(report.result("PUSH-001@current")?.decidedByProbe == true)
        // A scenario that judges the handshake itself still runs (and here its body fails).
        let judged = try #require(report.result("HS-004@current"))
        #expect(!judged.decidedByProbe && judged.message == "the body ran: expected not run, got ran")
    }

    @Test func noProbeRunsWhenNoSelectedScenarioNeedsASession() async throws {
        let report = try await runScenarios([Self.scenario("HS-004", needsSession: false)],
                                            driver: InProcessDriver(name: "fake") { FakeNode() }) { $0.probe = true }
        #expect(report.probes.isEmpty)
    }
}
