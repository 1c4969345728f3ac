import Conformance
import Foundation
import GatewayProtocol
import MockGateway
import ReferenceAdapter
import ReferenceNode
import Scenarios
import Testing

/// In a conformance run, a wake push the Gateway's transport accepted reaches the client under
/// test as `background-wake` (trigger `silent_push`, the payload as `push`); a refused push, or
/// one that could not be sent, does not. The reference client runs in process (simulated).
@Suite("Push wakes in a conformance run")
struct PushWakeRunTests {
    /// How a scenario body below prepares the Gateway before the wake.
    enum Setup: Sendable { case accepted, refused, unregistered }

    /// Pairs the reference client, registers it for relay push (unless `unregistered`),
    /// disconnects it and wakes it through the push transport. It checks what came back, and
    /// whether a beacon followed within 30 s of the run's virtual time.
    static func scenario(_ setup: Setup) -> Scenario {
        Scenario(ScenarioID("X-WAKE-00\(setup == .accepted ? 1 : setup == .refused ? 2 : 3)"), .must,
                 requirement: "a wake push reaches the client only when the transport accepted it", source: "test",
                 needs: [.pushRegister, .backgroundWake, .disconnect], profiles: .current,
                 options: Scenario.Options(configureGateway: { $0.autoApproval = .auto })) { run in
            let socket = try await run.nodeSession().connectionId
            let nodeId = try await run.nodeId(from: .start)
            if setup != .unregistered {
                try await run.client.stimulate(.pushRegister(transport: "relay"))
                try await run.waitForEvent("the registration") { event in
                    if case .pushRegistered(nodeId, "relay", true, _) = event { true } else { false }
                }
            }
            if setup == .refused { await run.gateway.refuseNextPush(status: 410, reason: "Unregistered") }
            let closed = run.mark()
            try await run.client.stimulate(.disconnect)
            try await run.waitForEvent("the node socket to close", from: closed) { event in
                if case .nodeDisconnected(_, socket) = event { true } else { false }
            }
            let start = run.mark()
            let attempt = try await run.wakeThroughPush(nodeId: nodeId)
            switch setup {
            case .accepted:
                try run.expectEqual(attempt.path, .sent, "the wake path")
                let trigger = try await run.waitForEvent("the beacon", from: start) { event -> String? in
                    guard case .presenceHandled(nodeId, let trigger, _, _) = event else { return nil }
                    return trigger ?? "none"
                }
                try run.expectEqual(trigger, "silent_push", "the beacon's trigger")
            case .refused, .unregistered:
                try run.expectEqual(attempt.path, setup == .refused ? .sendError : .noRegistration, "the wake path")
                // The client stays disconnected: it was never told about the push.
                try await run.expectNoEvent(within: .seconds(30), "a connect after a push that did not reach the client",
                                            from: start) { event in
                    if case .frameIn(_, .request(let request)?, _) = event { request.method == "connect" } else { false }
                }
            }
        }
    }

    static func run(_ setup: Setup) async throws -> RunResult {
        let driver = InProcessDriver(name: "reference") { ReferenceNodeUnderTest() }
        let runner = Runner(scenarios: [scenario(setup)], driver: driver, gatewayFactory: GatewayFactories.standard,
                            configuration: RunConfiguration(seed: 7, transcripts: .none, probe: false))
        let report = try await runner.run()
        return try #require(report.results.first)
    }

    @Test func anAcceptedWakeReachesTheClientAsASilentPushWake() async throws {
        let result = try await Self.run(.accepted)
        #expect(result.verdict == .pass, "\(result.message) \(result.expected ?? "") \(result.actual ?? "")")
    }

    @Test(arguments: [Setup.refused, Setup.unregistered])
    func aPushThatWasNotDeliveredDoesNotReachTheClient(_ setup: Setup) async throws {
        let result = try await Self.run(setup)
        #expect(result.verdict == .pass, "\(result.message) \(result.expected ?? "") \(result.actual ?? "")")
    }

    @Test func theMutantThatReportsAnotherTriggerFailsPres006() async throws {
        let scenario = try #require(allScenarios.first { $0.id == "PRES-006" })
        for mutants in [Set<Mutant>(), [.wrongPushWakeTrigger], [.pushWrongGatewayId]] {
            let driver = InProcessDriver(name: "reference") { ReferenceNodeUnderTest(mutants: mutants) }
            let runner = Runner(scenarios: [scenario], driver: driver, gatewayFactory: GatewayFactories.standard,
                                configuration: RunConfiguration(seed: 11, transcripts: .none))
            let report = try await runner.run()
            #expect(report.results.count == 2, "both profiles")
            for result in report.results {
                if mutants.isEmpty {
                    #expect(result.verdict == .pass, "\(result.key): \(result.message) \(result.actual ?? "")")
                } else {
                    #expect(result.verdict == .fail, "\(mutants): \(result.key): \(result.verdict) \(result.message)")
                }
            }
            if mutants == [.wrongPushWakeTrigger] {
                #expect(report.results.allSatisfy { $0.actual == "background" }, "\(report.results.map(\.actual))")
            }
        }
    }
}
