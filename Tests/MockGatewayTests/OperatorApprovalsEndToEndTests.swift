import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// Exec approvals over real sockets: both families, method advertisement, many concurrent
/// resolvers, expiry, scripted races and lost acknowledgements.
@Suite("Operator approvals end to end")
struct OperatorApprovalsEndToEndTests {
    static let approverScopes = ["operator.approvals"]

    static func resolveParams(_ id: String, _ decision: String) -> JSONValue {
        ["id": .string(id), "kind": "exec", "decision": .string(decision)]
    }

    /// `count` sessions of one paired operator device, connected concurrently with its token.
    static func parallelSessions(_ gateway: Gateway, identity: DeviceIdentity, scopes: [String], count: Int) async throws -> [ConnectedSession] {
        let paired = try await TestSessions.operatorSession(gateway, identity: identity, scopes: scopes)
        let token = paired.deviceToken
        await paired.client.close()
        return try await withThrowingTaskGroup(of: ConnectedSession.self) { group in
            for _ in 0..<count {
                group.addTask {
                    try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: token) }
                }
            }
            var sessions: [ConnectedSession] = []
            for try await session in group { sessions.append(session) }
            return sessions
        }
    }

    /// The operator-record events about approval `id` from `cursor` on.
    static func recordEvents(_ gateway: Gateway, id: String, from cursor: Int) -> [OperatorRecordEvent] {
        gateway.events.elements(from: cursor).compactMap { event in
            if case .operatorRecord(let record) = event, record.id == id { return record }
            return nil
        }
    }

    // MARK: - Families

    @Test func unifiedResolveAppliesOnceAndLaterAnswersGetTheWinner() async throws {
        try await Gateway.withGateway { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x60), scopes: Self.approverScopes)
            let approval = try await gateway.createApproval(command: "npm publish")
            let requested = try await approver.client.event("exec.approval.requested")
            #expect(requested.payload?["id"]?.stringValue == approval.id)

            let pending = try await approver.client.request("approval.get", params: ["id": .string(approval.id)])
            #expect(pending.payload?["approval"]?["status"] == "pending")
            #expect(pending.payload?["approval"]?["presentation"]?["commandText"] == "npm publish")

            let (won, before) = try await approver.client.requestCollecting("approval.resolve", params: Self.resolveParams(approval.id, "allow-always"))
            #expect(won.payload?["applied"] == true)
            #expect(won.payload?["approval"]?["status"] == "allowed")
            #expect(won.payload?["approval"]?["decision"] == "allow-always")
            let resolvedEvents = TestClient.events("exec.approval.resolved", in: before + (try await approver.client.barrier()))
            #expect(resolvedEvents.map { $0.payload?["decision"]?.stringValue } == ["allow-always"])

            let lost = try await approver.client.request("approval.resolve", params: Self.resolveParams(approval.id, "deny"))
            #expect(lost.ok, "the unified loser gets no error")
            #expect(lost.payload?["applied"] == false)
            #expect(lost.payload?["approval"]?["decision"] == "allow-always")
            #expect(TestClient.events("exec.approval.resolved", in: try await approver.client.barrier()).isEmpty, "a loser publishes nothing")

            let unknown = try await approver.client.request("approval.resolve", params: Self.resolveParams("no-such-id", "deny"))
            #expect(unknown.error?.message == "approval not found")
            #expect(unknown.error?.details?["reason"] == "APPROVAL_NOT_FOUND")
        }
    }

    @Test func legacyResolveAnswersOkThenAlreadyResolvedForAnotherDecision() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x61), scopes: Self.approverScopes)
            let approval = try await gateway.createApproval(command: "make deploy")
            let listed = try await approver.client.request("exec.approval.list", params: nil)
            #expect(listed.payload?.arrayValue?.compactMap { $0["id"]?.stringValue } == [approval.id])
            let flat = try await approver.client.request("exec.approval.get", params: ["id": .string(approval.id)])
            #expect(flat.payload?["commandText"] == "make deploy")

            let (won, before) = try await approver.client.requestCollecting("exec.approval.resolve", params: [
                "id": .string(approval.id), "decision": "allow-once",
            ])
            #expect(won.payload == ["ok": true])
            let events = TestClient.events("exec.approval.resolved", in: before + (try await approver.client.barrier()))
            #expect(events.map { $0.payload?["decision"]?.stringValue } == ["allow-once"])

            let retry = try await approver.client.request("exec.approval.resolve", params: ["id": .string(approval.id), "decision": "allow-once"])
            #expect(retry.payload == ["ok": true], "an identical retry is idempotent")
            let conflict = try await approver.client.request("exec.approval.resolve", params: ["id": .string(approval.id), "decision": "deny"])
            #expect(conflict.error?.code == "INVALID_REQUEST")
            #expect(conflict.error?.message == "approval already resolved")
            #expect(conflict.error?.details?["reason"] == "APPROVAL_ALREADY_RESOLVED")
            #expect(await gateway.approval(id: approval.id)?.decision == .allowOnce)
        }
    }

    @Test func unifiedIdenticalRetryIsIdempotent() async throws {
        try await Gateway.withGateway { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x62), scopes: Self.approverScopes)
            let approval = try await gateway.createApproval(command: "ls")
            let first = try await approver.client.request("approval.resolve", params: Self.resolveParams(approval.id, "deny"))
            let second = try await approver.client.request("approval.resolve", params: Self.resolveParams(approval.id, "deny"))
            #expect(first.payload?["applied"] == true)
            #expect(second.payload?["applied"] == false)
            #expect(second.payload?["approval"] == first.payload?["approval"], "the retry sees the same terminal record")
        }
    }

    @Test func helloAdvertisesExactlyTheCurrentProfilesMethods() async throws {
        try await Gateway.withGateway { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x63), scopes: ["operator.admin"])
            let methods = admin.hello.features.methods
            for method in ["approval.get", "approval.resolve", "approval.history", "exec.approval.resolve", "exec.approval.get",
                           "question.request", "question.waitAnswer", "question.resolve", "question.get", "question.list"] {
                #expect(methods.contains(method), "\(method)")
            }
            #expect(admin.hello.features.events.contains("question.resolved"))
            // Every advertised method is served (invalid params at worst, never `unknown method`).
            for method in methods {
                let response = try await admin.client.request(method, params: [:])
                #expect(response.error?.message.hasPrefix("unknown method") != true, "\(method) is advertised but unknown")
            }
        }
    }

    @Test func legacyHelloAdvertisesNoUnifiedOrQuestionMethodsAndTheyAreUnknown() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x64), scopes: ["operator.admin"])
            let methods = admin.hello.features.methods
            #expect(!methods.contains { $0.hasPrefix("approval.") || $0.hasPrefix("question.") })
            #expect(methods.contains("exec.approval.resolve"))
            #expect(!admin.hello.features.events.contains { $0.hasPrefix("question.") })
            for method in ["approval.get", "approval.resolve", "approval.history", "question.list", "question.resolve"] {
                let response = try await admin.client.request(method, params: ["id": "x"])
                #expect(response.error?.code == "INVALID_REQUEST", "\(method)")
                #expect(response.error?.message == "unknown method: \(method)", "\(method)")
            }
            for method in methods {
                let response = try await admin.client.request(method, params: [:])
                #expect(response.error?.message.hasPrefix("unknown method") != true, "\(method) is advertised but unknown")
            }
        }
    }

    @Test func sessionApprovalEventsGoOnlyToSubscribersNotToEveryApprover() async throws {
        // `session.approval` is for sessions that subscribed to the session key with
        // `includeApprovals:true` (docs/protocol.md §7.3); an approver that never
        // subscribed gets the exec events only.
        try await Gateway.withGateway { gateway in
            let runtime = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x6E), scopes: Self.approverScopes)
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x6F), scopes: Self.approverScopes)
            try await runtime.client.sendRequest("exec.approval.request", params: [
                "command": "rm -rf ./build", "sessionKey": "agent:main:main", "agentId": "main",
            ], id: "ask")
            let requested = try await approver.client.event("exec.approval.requested")
            let id = try #require(requested.payload?["id"]?.stringValue)
            let (resolved, before) = try await approver.client.requestCollecting("approval.resolve", params: Self.resolveParams(id, "deny"))
            #expect(resolved.payload?["applied"] == true)
            let frames = before + (try await approver.client.barrier())
            #expect(TestClient.events("exec.approval.resolved", in: frames).count == 1)
            #expect(TestClient.events("session.approval", in: frames).isEmpty)
            let (final, runtimeFrames) = try await runtime.client.collect(untilResponseTo: "ask")
            #expect(final.payload?["decision"] == "deny")
            #expect(TestClient.events("session.approval", in: runtimeFrames).isEmpty)
        }
    }

    // MARK: - Many resolvers at once

    @Test func fiftyParallelUnifiedResolversOverRealSocketsExactlyOneApplies() async throws {
        try await Gateway.withGateway { gateway in
            let sessions = try await Self.parallelSessions(gateway, identity: try TestIdentities.make(0x65), scopes: Self.approverScopes, count: 50)
            #expect(Set(sessions.map(\.connectionId)).count == 50)
            let approval = try await gateway.createApproval(command: "terraform apply")
            let cursor = gateway.events.count
            let decisions = ["allow-once", "deny", "allow-always"]

            let results = try await withThrowingTaskGroup(of: (session: Int, response: ResponseFrame, frames: [Frame]).self) { group in
                for (index, session) in sessions.enumerated() {
                    group.addTask {
                        let (response, before) = try await session.client.requestCollecting(
                            "approval.resolve", params: Self.resolveParams(approval.id, decisions[index % 3]))
                        return (index, response, before + (try await session.client.barrier()))
                    }
                }
                var all: [(session: Int, response: ResponseFrame, frames: [Frame])] = []
                for try await result in group { all.append(result) }
                return all
            }

            #expect(results.count == 50)
            #expect(results.allSatisfy { $0.response.ok })
            let winners = results.filter { $0.response.payload?["applied"] == true }
            try #require(winners.count == 1)
            let winner = winners[0]
            let winningDecision = decisions[winner.session % 3]
            let winningRecord = try #require(winner.response.payload?["approval"])
            #expect(winningRecord["decision"]?.stringValue == winningDecision)
            for loser in results where loser.session != winner.session {
                #expect(loser.response.payload?["applied"] == false)
                #expect(loser.response.payload?["approval"]?["decision"]?.stringValue == winningDecision)
                #expect(loser.response.payload?["approval"]?["status"] == winningRecord["status"])
            }
            // Every session saw exactly one resolved event, naming the winner's decision.
            for result in results {
                let resolved = TestClient.events("exec.approval.resolved", in: result.frames)
                #expect(resolved.map { $0.payload?["decision"]?.stringValue } == [winningDecision])
            }
            // The event log tells the same story.
            let records = Self.recordEvents(gateway, id: approval.id, from: cursor)
            let attempts = records.filter { $0.action == .resolveAttempt }
            #expect(attempts.count == 50)
            #expect(attempts.filter { $0.applied == true }.map(\.surface) == [sessions[winner.session].connectionId])
            #expect(attempts.allSatisfy { $0.method == "approval.resolve" })
            #expect(records.filter { $0.action == .resolved }.map(\.decision) == [winningDecision])
            #expect(await gateway.approval(id: approval.id)?.decision?.rawValue == winningDecision)
        }
    }

    @Test func fiftyParallelLegacyResolversOverRealSocketsExactlyOneApplies() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let sessions = try await Self.parallelSessions(gateway, identity: try TestIdentities.make(0x66), scopes: Self.approverScopes, count: 50)
            let approval = try await gateway.createApproval(command: "kubectl delete ns staging")
            let decisions = ["allow-once", "deny"]

            let results = try await withThrowingTaskGroup(of: (session: Int, response: ResponseFrame).self) { group in
                for (index, session) in sessions.enumerated() {
                    group.addTask {
                        let response = try await session.client.request("exec.approval.resolve", params: [
                            "id": .string(approval.id), "decision": .string(decisions[index % 2]),
                        ])
                        return (index, response)
                    }
                }
                var all: [(session: Int, response: ResponseFrame)] = []
                for try await result in group { all.append(result) }
                return all
            }

            let attempts = await gateway.resolveAttempts().filter { $0.recordId == approval.id }
            #expect(attempts.count == 50)
            let applied = attempts.filter(\.applied)
            try #require(applied.count == 1)
            let winningDecision = applied[0].requested
            #expect(await gateway.approval(id: approval.id)?.decision?.rawValue == winningDecision)
            for result in results {
                if decisions[result.session % 2] == winningDecision {
                    // The winner, and identical retries of its decision.
                    #expect(result.response.payload == ["ok": true])
                } else {
                    #expect(result.response.error?.code == "INVALID_REQUEST")
                    #expect(result.response.error?.details?["reason"] == "APPROVAL_ALREADY_RESOLVED")
                }
            }
            let idempotent = attempts.filter { $0.result == .idempotentRetry }.count
            let lost = attempts.filter { if case .lost = $0.result { true } else { false } }.count
            #expect(idempotent == 24)
            #expect(lost == 25)
        }
    }

    // MARK: - Expiry

    @Test func approvalExpiresExactlyAtExpiresAtMs() async throws {
        try await Gateway.withGateway { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x67), scopes: Self.approverScopes)
            let approval = try await gateway.createApproval(command: "reboot", expiresIn: .seconds(60))
            #expect(approval.expiresAtMs == approval.createdAtMs + 60_000)

            await gateway.advance(by: .milliseconds(59_999))
            let before = try await approver.client.request("approval.get", params: ["id": .string(approval.id)])
            #expect(before.payload?["approval"]?["status"] == "pending")

            await gateway.advance(by: .milliseconds(1))
            #expect(gateway.clock.nowMs == approval.expiresAtMs)
            let after = try await approver.client.request("approval.get", params: ["id": .string(approval.id)])
            #expect(after.payload?["approval"]?["status"] == "expired")
            #expect(after.payload?["approval"]?["reason"] == "timeout")
            let late = try await approver.client.request("approval.resolve", params: Self.resolveParams(approval.id, "allow-once"))
            #expect(late.payload?["applied"] == false)
            #expect(late.payload?["approval"]?["status"] == "expired")
        }
    }

    @Test func legacyRequesterGetsANullDecisionWhenItsApprovalExpires() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let runtime = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x68), scopes: Self.approverScopes)
            try await runtime.client.sendRequest("exec.approval.request", params: ["command": "rm -rf /tmp/x", "timeoutMs": 5_000], id: "ask")
            let requested = try await runtime.client.event("exec.approval.requested")
            let id = try #require(requested.payload?["id"]?.stringValue)
            #expect(requested.payload?["expiresAtMs"]?.int64Value == gateway.clock.nowMs + 5_000)

            await gateway.advance(by: .seconds(5))
            let (final, _) = try await runtime.client.collect(untilResponseTo: "ask")
            #expect(final.payload?["id"]?.stringValue == id)
            #expect(final.payload?["decision"] == .null)
            #expect(await gateway.approval(id: id)?.status == .expired)
        }
    }

    // MARK: - Scripted races and lost acknowledgements

    /// A wire client (identity `byte`) answers `allow-once` to a new approval while the scripted
    /// `watch` surface answers `deny`, in `order`; returns the client, the approval, the client's
    /// `approval.resolve` answer and the resolve attempts on the approval.
    static func raceTheWatch(_ gateway: Gateway, order: RaceOrder, byte: UInt8) async throws
        -> (ConnectedSession, ApprovalRecord, ResponseFrame, [ResolveAttempt]) {
        let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(byte), scopes: Self.approverScopes)
        let approval = try await gateway.createApproval(command: "git push --force")
        await gateway.raceApproval(id: approval.id, surfaceDecision: .deny, order: order)
        let response = try await approver.client.request("approval.resolve", params: Self.resolveParams(approval.id, "allow-once"))
        let attempts = await gateway.resolveAttempts().filter { $0.recordId == approval.id }
        return (approver, approval, response, attempts)
    }

    @Test func aSurfaceThatAnswersFirstMakesTheWireClientLose() async throws {
        try await Gateway.withGateway { gateway in
            let (approver, _, response, attempts) = try await Self.raceTheWatch(gateway, order: .surfaceFirst, byte: 0x69)
            #expect(response.payload?["applied"] == false)
            #expect(response.payload?["approval"]?["decision"] == "deny")
            #expect(attempts.map(\.surface) == ["watch", approver.connectionId])
            #expect(attempts.map(\.applied) == [true, false])
        }
    }

    @Test func aSurfaceThatAnswersSecondLosesToTheWireClient() async throws {
        try await Gateway.withGateway { gateway in
            let (approver, approval, response, attempts) = try await Self.raceTheWatch(gateway, order: .clientFirst, byte: 0x6A)
            #expect(response.payload?["applied"] == true)
            #expect(attempts.map(\.surface) == [approver.connectionId, "watch"])
            #expect(attempts.map(\.applied) == [true, false])
            #expect(await gateway.approval(id: approval.id)?.decision == .allowOnce)
        }
    }

    @Test func legacyClientLosingARaceGetsApprovalAlreadyResolved() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x6B), scopes: Self.approverScopes)
            let approval = try await gateway.createApproval(command: "deploy")
            await gateway.raceApproval(id: approval.id, surfaceDecision: .deny)
            let response = try await approver.client.request("exec.approval.resolve", params: ["id": .string(approval.id), "decision": "allow-once"])
            #expect(response.error?.details?["reason"] == "APPROVAL_ALREADY_RESOLVED")
        }
    }

    @Test func aDroppedResolveAckStillAppliesAndReadsBackAsTerminal() async throws {
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(0x6C)
            let approver = try await TestSessions.operatorSession(gateway, identity: identity, scopes: Self.approverScopes)
            let approval = try await gateway.createApproval(command: "npm publish")
            await gateway.dropNextResponse(to: "approval.resolve")

            try await approver.client.sendRequest("approval.resolve", params: Self.resolveParams(approval.id, "allow-once"), id: "lost")
            let info = try await approver.client.closed()
            #expect(info.code == .abnormal, "the connection is cut without a close frame")
            #expect(await gateway.waitForEvent(timeout: .seconds(5)) { event in
                if case .faultInjected(let description) = event { return description.hasPrefix("dropped the response to approval.resolve") }
                return false
            } != nil)

            let reconnected = try await TestSessions.connect(gateway, identity: identity) {
                $0.operatorParams(scopes: Self.approverScopes, token: approver.deviceToken)
            }
            let readBack = try await reconnected.client.request("approval.get", params: ["id": .string(approval.id)])
            #expect(readBack.payload?["approval"]?["status"] == "allowed")
            #expect(readBack.payload?["approval"]?["decision"] == "allow-once")
            // Only the next response was dropped.
            let retry = try await reconnected.client.request("approval.resolve", params: Self.resolveParams(approval.id, "allow-once"))
            #expect(retry.payload?["applied"] == false)
        }
    }

    @Test func aDroppedLegacyResolveAckReadsBackThroughWaitDecision() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let identity = try TestIdentities.make(0x6D)
            let approver = try await TestSessions.operatorSession(gateway, identity: identity, scopes: Self.approverScopes)
            let approval = try await gateway.createApproval(command: "npm publish")
            await gateway.dropNextResponse(to: "exec.approval.resolve")
            try await approver.client.sendRequest("exec.approval.resolve", params: ["id": .string(approval.id), "decision": "deny"])
            #expect(try await approver.client.closed().code == .abnormal)

            let reconnected = try await TestSessions.connect(gateway, identity: identity) {
                $0.operatorParams(scopes: Self.approverScopes, token: approver.deviceToken)
            }
            // The legacy get is pending-only: a finished approval is "unknown or expired".
            let get = try await reconnected.client.request("exec.approval.get", params: ["id": .string(approval.id)])
            #expect(get.error?.message == "unknown or expired approval id")
            let wait = try await reconnected.client.request("exec.approval.waitDecision", params: ["id": .string(approval.id)])
            #expect(wait.payload?["decision"] == "deny")
        }
    }
}
