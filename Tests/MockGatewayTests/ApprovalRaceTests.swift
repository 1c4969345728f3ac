import GatewayProtocol
import Testing
@testable import MockGateway

private let t0: Int64 = 1_767_225_600_000

/// Eight surfaces, each with a decision, racing in a seeded random order.
private func contenders(seed: UInt64) -> [(caller: OperatorCaller, decision: ApprovalDecision)] {
    var random = SeededRandom(seed: seed)
    let decisions: [ApprovalDecision] = [.allowOnce, .allowAlways, .deny]
    let surfaces = (0..<8).map { index in
        (OperatorCaller(scopes: [.approvals], surface: "surface-\(index)", deviceId: "dev-\(index)"),
         decisions[Int(random.next() % 3)])
    }
    return surfaces.shuffled(using: &random)
}

@Suite("Approval races: the first answer wins")
struct ApprovalRaceTests {
    @Test("unified: exactly one resolver applies; every loser gets applied:false with the recorded winner",
          arguments: [1, 2, 3, 42, 9_001] as [UInt64])
    func unifiedRace(seed: UInt64) throws {
        var store = ApprovalStore(features: .current, random: SeededRandom(seed: seed))
        _ = try store.create(.exec("deploy", id: "race"), nowMs: t0).get()
        var replies: [JSONValue] = []
        for (offset, contender) in contenders(seed: seed).enumerated() {
            let outcome = store.handleResolve(
                params: ["id": "race", "kind": "exec", "decision": .string(contender.decision.rawValue)],
                caller: contender.caller, nowMs: t0 + Int64(offset))
            replies.append(try #require(outcome.payload))
        }
        let applied = replies.filter { $0["applied"] == true }
        #expect(applied.count == 1)
        let winner = try #require(applied.first?["approval"])
        for reply in replies where reply["applied"] == false {
            #expect(reply["approval"] == winner)
        }
        #expect(store.resolveAttempts.filter(\.applied).count == 1)
        #expect(store.resolveAttempts.count == 8)
        #expect(store.resolveAttempts.first?.applied == true, "the first contender in order wins")
    }

    @Test("legacy: exactly one resolver applies; same-decision losers get {ok:true}, others APPROVAL_ALREADY_RESOLVED",
          arguments: [1, 2, 3, 42, 9_001] as [UInt64])
    func legacyRace(seed: UInt64) throws {
        var store = ApprovalStore(features: .current, random: SeededRandom(seed: seed))
        _ = try store.create(.exec("deploy", id: "race"), nowMs: t0).get()
        let racing = contenders(seed: seed)
        var outcomes: [OperatorOutcome] = []
        for (offset, contender) in racing.enumerated() {
            outcomes.append(store.handleExecResolve(params: ["id": "race", "decision": .string(contender.decision.rawValue)],
                                                    caller: contender.caller, nowMs: t0 + Int64(offset)))
        }
        let winningDecision = try #require(store.record(id: "race")?.decision)
        #expect(winningDecision == racing[0].decision)
        for (contender, outcome) in zip(racing, outcomes).dropFirst() {
            if contender.decision == winningDecision {
                #expect(outcome.payload == ["ok": true])
            } else {
                #expect(outcome.error == ApprovalErrors.alreadyResolved)
            }
        }
        #expect(store.resolveAttempts.filter(\.applied).count == 1)
        #expect(outcomes.flatMap(\.events).filter { $0.name == "exec.approval.resolved" }.count == 1)
    }

    @Test("both families racing on one approval still have exactly one winner", arguments: [5, 6, 7] as [UInt64])
    func mixedFamilies(seed: UInt64) throws {
        var store = ApprovalStore(features: .current, random: SeededRandom(seed: seed))
        _ = try store.create(.exec("deploy", id: "race"), nowMs: t0).get()
        var random = SeededRandom(seed: seed)
        for (offset, contender) in contenders(seed: seed).enumerated() {
            if random.next() % 2 == 0 {
                _ = store.handleResolve(params: ["id": "race", "kind": "exec", "decision": .string(contender.decision.rawValue)],
                                        caller: contender.caller, nowMs: t0 + Int64(offset))
            } else {
                _ = store.handleExecResolve(params: ["id": "race", "decision": .string(contender.decision.rawValue)],
                                            caller: contender.caller, nowMs: t0 + Int64(offset))
            }
        }
        #expect(store.resolveAttempts.filter(\.applied).count == 1)
    }

    @Test("a scripted surface racing a wire client: whoever comes first wins, the other sees the winner")
    func scriptedSurfaceWins() throws {
        var store = ApprovalStore(features: .current, random: SeededRandom(seed: 3))
        _ = try store.create(.exec("deploy", id: "race"), nowMs: t0).get()
        let scripted = store.resolve(id: "race", decision: .allowAlways, as: .surface("control-ui"), nowMs: t0 + 1)
        guard case .applied(let record) = scripted.value else {
            Issue.record("the scripted surface should win")
            return
        }
        #expect(record.resolvedBy == "control-ui")
        let phone = OperatorCaller(scopes: [.approvals], surface: "conn-phone", deviceId: "dev-phone")
        let loser = store.handleResolve(params: ["id": "race", "kind": "exec", "decision": "deny"], caller: phone, nowMs: t0 + 2)
        #expect(loser.payload?["applied"] == false)
        #expect(loser.payload?["approval"]?["decision"] == "allow-always")
        let attempts = store.resolveAttempts
        #expect(attempts.map(\.surface) == ["control-ui", "conn-phone"])
        #expect(attempts.map(\.channel) == [.script, .unifiedApproval])
        #expect(attempts.last?.result == .lost(winnerStatus: "allowed"))
        #expect(attempts.last?.recordEvent(status: .approval(.allowed)).applied == false)
    }
}
