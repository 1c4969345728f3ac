import GatewayProtocol
import Testing
@testable import MockGateway

/// `sessions.messages.subscribe {includeApprovals:true}`: the subscription rules
/// (`ApprovalSubscriptions`), then `session.approval` and `approvalReplay` over real sockets.
@Suite("Approval subscriptions and replays")
struct ApprovalSubscriptionTests {
    @Test("admin, or operator.approvals on a paired device, may receive approvals")
    func audience() {
        #expect(ApprovalSubscriptions.mayReceiveApprovals(scopes: ["operator.admin"], deviceId: nil))
        #expect(ApprovalSubscriptions.mayReceiveApprovals(scopes: ["operator.approvals"], deviceId: "d"))
        #expect(!ApprovalSubscriptions.mayReceiveApprovals(scopes: ["operator.approvals"], deviceId: nil))
        #expect(!ApprovalSubscriptions.mayReceiveApprovals(scopes: ["operator.read"], deviceId: "d"))
    }

    @Test("the opt-in is per call: a subscribe without includeApprovals ends approval delivery for the key")
    func notSticky() {
        var book = ApprovalSubscriptions()
        book.subscribe(connectionId: "c", key: "k", includeApprovals: true)
        #expect(book.isSubscribed(connectionId: "c", key: "k"))
        #expect(!book.isSubscribed(connectionId: "c", key: "other"))
        book.subscribe(connectionId: "c", key: "k", includeApprovals: false)
        #expect(!book.isSubscribed(connectionId: "c", key: "k"))
        book.subscribe(connectionId: "c", key: "k", includeApprovals: true)
        book.drop(connectionId: "c")
        #expect(book.keysByConnection.isEmpty)
    }

    @Test("the replay lists the key's pending approvals, oldest first, and says when it was cut")
    func replayShape() {
        let caller = OperatorCaller(scopes: [.admin], surface: "c")
        func record(_ id: String, key: String?, status: ApprovalStatus = .pending) -> ApprovalRecord {
            var record = ApprovalRecord(id: id, presentation: .exec(ExecApprovalPresentation(commandText: "ls", host: "gateway", agentId: "main")),
                                        allowedDecisions: [.allowOnce, .deny], createdAtMs: 0, expiresAtMs: 1_000,
                                        sourceSessionKey: key)
            record.status = status
            return record
        }
        let records = [record("a", key: "k"), record("b", key: "other"), record("c", key: "k", status: .denied), record("d", key: "k")]
        let full = ApprovalSubscriptions.replay(sessionKey: "k", records: records, caller: caller, nowMs: 5, limit: 1_000, basePath: "")
        #expect(full["sessionKey"] == "k")
        #expect(full["updatedAtMs"] == 5)
        #expect(full["approvals"]?.arrayValue?.map { $0["id"]?.stringValue } == ["a", "d"])
        #expect(full["truncated"] == false)
        let cut = ApprovalSubscriptions.replay(sessionKey: "k", records: records, caller: caller, nowMs: 5, limit: 1, basePath: "")
        #expect(cut["approvals"]?.arrayValue?.count == 1)
        #expect(cut["truncated"] == true)
    }

    @Test func aSubscriberGetsTheReplayAndSessionApprovalEventsAndOthersDoNot() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let key = "agent:main:main"
            let pending = try await gateway.createApproval(ApprovalDraft.exec("ls", sessionKey: key))
            let subscriber = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x71),
                                                                    scopes: ["operator.approvals", "operator.read"])
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x72), scopes: ["operator.read"])
            #expect(subscriber.hello.features.methods.contains("sessions.messages.subscribe"))

            let subscribed = try await subscriber.client.request("sessions.messages.subscribe",
                                                                 params: ["key": .string(key), "includeApprovals": true])
            #expect(subscribed.payload?["includeApprovals"] == true)
            let replay = try #require(subscribed.payload?["approvalReplay"])
            #expect(replay["approvals"]?.arrayValue?.map { $0["id"]?.stringValue } == [pending.id])
            #expect(replay["truncated"] == false)

            let narrow = try await reader.client.request("sessions.messages.subscribe", params: ["key": .string(key), "includeApprovals": true])
            #expect(narrow.ok)
            #expect(narrow.payload?["includeApprovals"] == false, "operator.read alone never grants approval visibility")
            #expect(narrow.payload?["approvalReplay"] == nil)

            _ = await gateway.resolveApproval(id: pending.id, decision: .deny, surface: "control-ui")
            let event = try await subscriber.client.event("session.approval")
            #expect(event.payload?["sessionKey"]?.stringValue == key)
            #expect(event.payload?["phase"] == "terminal")
            #expect(event.payload?["approval"]?["id"]?.stringValue == pending.id)
            #expect(TestClient.events("session.approval", in: try await reader.client.barrier()).isEmpty)

            let missing = try await subscriber.client.request("sessions.messages.subscribe", params: ["includeApprovals": true])
            #expect(missing.error?.code == "INVALID_REQUEST")
        }
    }

    @Test func theReplayLimitProducesTruncated() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            for command in ["a", "b", "c"] { _ = try await gateway.createApproval(ApprovalDraft.exec(command, sessionKey: "k")) }
            await gateway.setApprovalReplayLimit(2)
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x73), scopes: ["operator.admin"])
            let reply = try await admin.client.request("sessions.messages.subscribe", params: ["key": "k", "includeApprovals": true])
            #expect(reply.payload?["approvalReplay"]?["approvals"]?.arrayValue?.count == 2)
            #expect(reply.payload?["approvalReplay"]?["truncated"] == true)
        }
    }
}
