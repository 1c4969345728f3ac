import Conformance
import Foundation
import MockGateway
import ReferenceAdapter
import ReferenceNode
import Scenarios
import Testing

/// HS-006 judges a client by its kind (apps stop after PROTOCOL_MISMATCH, other clients back
/// off), and a run that never reaches a scenario's precondition says so with the cause.
@Suite("Client kinds and preconditions")
struct ClientKindAndPreconditionTests {
    static func run(_ filter: String, mutants: Set<Mutant>, persona: ClientPersona = .iPhone,
                    waitsForUser: UserWaits = []) async throws -> [RunResult] {
        let configuration = RunConfiguration(
            seed: 20_261_202, slowness: 1, selection: RunSelection(filters: filter.split(separator: ",").map(String.init)), jobs: 2, transcripts: .none)
        let driver = InProcessDriver(name: "reference") {
            ReferenceNodeUnderTest(mutants: mutants, persona: persona, waitsForUser: waitsForUser)
        }
        let report = try await Runner(scenarios: allScenarios, driver: driver, gatewayFactory: GatewayFactories.standard,
                                      configuration: configuration).run()
        #expect(!report.results.isEmpty)
        return report.results
    }

    @Test func clientKindComesFromTheClientId() {
        #expect(ClientKind(clientId: "openclaw-ios", mode: "node") == .app)
        #expect(ClientKind(clientId: "openclaw-android", mode: "ui") == .app)
        #expect(ClientKind(clientId: "openclaw-macos", mode: "node") == .app)
        #expect(ClientKind(clientId: "node-host", mode: "node") == .other)
        #expect(ClientKind(clientId: "gateway-client", mode: "backend") == .other)
        #expect(ClientKind(clientId: nil, mode: nil) == .other)
    }

    @Test func aNodeHostThatReconnectsWithBackoffAfterProtocolMismatchPasses() async throws {
        for result in try await Self.run("HS-006", mutants: [.reconnectAfterProtocolMismatch], persona: .nodeHost) {
            #expect(result.verdict == .pass, "\(result.key): \(result.verdict): \(result.message)")
        }
    }

    @Test func aNodeHostThatReconnectsWithoutBackoffAfterProtocolMismatchFails() async throws {
        for result in try await Self.run("HS-006", mutants: [.reconnectAfterProtocolMismatch, .tightReconnectLoop], persona: .nodeHost) {
            #expect(result.verdict == .fail, "\(result.key): \(result.verdict)")
            #expect(result.message.contains("faster than a backoff"), "\(result.message)")
            #expect(result.message.contains("client kind: other client (client.id node-host)"), "\(result.message)")
        }
    }

    @Test func anAppThatReconnectsAfterProtocolMismatchFailsWithItsKind() async throws {
        for result in try await Self.run("HS-006", mutants: [.reconnectAfterProtocolMismatch]) {
            #expect(result.verdict == .fail, "\(result.key): \(result.verdict)")
            #expect(result.message.contains("client kind: app (client.id openclaw-ios)"), "\(result.message)")
        }
    }

    @Test func aClientRefusedForAnotherReasonNeverReachesTheProtocolMismatch() async throws {
        // client.nickname breaks the connect schema, which the Gateway checks before the protocol.
        for result in try await Self.run("HS-006", mutants: [.connectMemberOutsideSchema]) {
            let message = result.message
            #expect(message.hasPrefix("could not reach the precondition: a connect refused with PROTOCOL_MISMATCH; "), "\(message)")
            #expect(message.contains("refused with INVALID_REQUEST"), "\(message)")
        }
    }

    @Test func aClientThatWaitsForTheUserAfterPairingRequiredIsGivenTheConnectStimulus() async throws {
        // As upstream's TypeScript client and OpenClawKit: no retry while the request is pending,
        // a reconnect when the user asks for one. PAIR-012 waited for a retry that never came.
        for result in try await Self.run("PAIR-001,PAIR-012", mutants: [], waitsForUser: .afterPairingRequired) {
            #expect(result.verdict == .pass, "\(result.key): \(result.verdict): \(result.message)")
        }
    }

    @Test func aClientThatWaitsForTheUserAfterAChallengeWithoutTsIsGivenTheConnectStimulus() async throws {
        // As upstream's TypeScript client: the attempt ends on the invalid challenge and the
        // client reconnects when the user asks. HS-015 waited for a reconnect that never came.
        for result in try await Self.run("HS-015", mutants: [], waitsForUser: .afterInvalidChallenge) {
            #expect(result.verdict == .pass, "\(result.key): \(result.verdict): \(result.message)")
        }
    }

    @Test func theProbePointsAtTheScenarioThatShowsItsCause() async throws {
        // client.nickname: every connect is refused with INVALID_REQUEST by the closed schema.
        // HS-001 (connect first) passes; HS-011 (closed schema) shows the cause.
        let configuration = RunConfiguration(
            seed: 20_261_203, slowness: 1, selection: RunSelection(filters: ["HS-001", "HS-011", "INV-001"], profileNames: ["current"]),
            jobs: 2, transcripts: .none)
        let driver = InProcessDriver(name: "reference") { ReferenceNodeUnderTest(mutants: [.connectMemberOutsideSchema]) }
        let report = try await Runner(scenarios: allScenarios, driver: driver, gatewayFactory: GatewayFactories.standard,
                                      configuration: configuration).run()
        #expect(report.results.first { $0.key == "HS-001@current" }?.verdict == .pass)
        #expect(report.results.first { $0.key == "HS-011@current" }?.verdict == .fail)
        #expect(report.probes.first?.seeAlso == "HS-011")
        let decided = try #require(report.results.first { $0.key == "INV-001@current" })
        #expect(decided.decidedByProbe)
        #expect(decided.message.hasSuffix("(see HS-011)"), "\(decided.message)")
    }
}
