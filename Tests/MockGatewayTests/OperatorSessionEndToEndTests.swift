import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// Operator sessions over real sockets: pairing, scope upgrades, scope and role enforcement,
/// and which broadcasts reach which session.
@Suite("Operator sessions end to end")
struct OperatorSessionEndToEndTests {
    static func strings(_ value: JSONValue?) -> [String] {
        value?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    // MARK: - Pairing and scopes

    @Test func operatorDevicePairsThenConnectsWithTheRequestedScopes() async throws {
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(0x21)
            let scopes = ["operator.read", "operator.approvals"]
            let client = try await TestClient.open(gateway.url, identity: identity)
            let rejected = try await client.connect(client.operatorParams(scopes: scopes))
            #expect(rejected.error?.code == "NOT_PAIRED")
            #expect(rejected.error?.message == "pairing required: device is not approved yet")
            #expect(rejected.error?.detailCode == "PAIRING_REQUIRED")
            #expect(rejected.error?.details?["reason"] == "not-paired")
            #expect(rejected.error?.details?["requestedRole"] == "operator")
            #expect(Set(Self.strings(rejected.error?.details?["requestedScopes"])) == Set(scopes))
            #expect(try await client.closed().code == .policyViolation)

            let request = try #require(await gateway.pendingPairingRequests().first)
            #expect(request.deviceId == identity.deviceId)
            #expect(request.role == "operator")
            #expect(Set(request.scopes) == Set(scopes))
            try await gateway.approve(requestId: request.requestId)

            let session = try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes) }
            #expect(session.hello.auth.role == .operator)
            #expect(Set(session.hello.auth.scopes) == Set(scopes))
            let token = try #require(session.deviceToken)
            #expect(token.count == 43)
            #expect(session.hello.features.methods.contains("approval.resolve"))

            // The issued token is accepted (and reused) on the next connect.
            let again = try await TestSessions.connect(gateway, identity: identity) {
                $0.operatorParams(scopes: scopes, token: token)
            }
            #expect(again.deviceToken == token)
        }
    }

    @Test func askingForMoreScopesThanApprovedCreatesAScopeUpgradeRequest() async throws {
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(0x22)
            let session = try await TestSessions.operatorSession(gateway, identity: identity, scopes: ["operator.read"])
            let wider = ["operator.read", "operator.pairing"]

            let upgrade = try await TestClient.open(gateway.url, identity: identity)
            let rejected = try await upgrade.connect(upgrade.operatorParams(scopes: wider, token: session.deviceToken))
            #expect(rejected.error?.code == "NOT_PAIRED")
            #expect(rejected.error?.message == "pairing required: device is asking for more scopes than currently approved")
            #expect(rejected.error?.details?["reason"] == "scope-upgrade")
            #expect(Self.strings(rejected.error?.details?["approvedScopes"]) == ["operator.read"])
            #expect(Set(Self.strings(rejected.error?.details?["requestedScopes"])) == Set(wider))
            let requestId = try #require(rejected.error?.details?["requestId"]?.stringValue)
            #expect(try await upgrade.closed().code == .policyViolation)

            let pending = try #require(await gateway.pendingPairingRequests().first { $0.requestId == requestId })
            #expect(Set(pending.scopes).isSuperset(of: wider))
            try await gateway.approve(requestId: requestId)
            let upgraded = try await TestSessions.connect(gateway, identity: identity) {
                $0.operatorParams(scopes: wider, token: session.deviceToken)
            }
            #expect(Set(upgraded.hello.auth.scopes) == Set(wider))
        }
    }

    @Test func wireApprovalFailsWhenTheApproverLacksARequestedScope() async throws {
        try await Gateway.withGateway { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x23),
                                                                  scopes: ["operator.pairing"])
            let applicantIdentity = try TestIdentities.make(0x24)
            let applicant = try await TestClient.open(gateway.url, identity: applicantIdentity)
            let rejected = try await applicant.connect(applicant.operatorParams(scopes: ["operator.approvals"]))
            let requestId = try #require(rejected.error?.details?["requestId"]?.stringValue)

            let refused = try await approver.client.request("device.pair.approve", params: ["requestId": .string(requestId)])
            #expect(refused.ok == false)
            #expect(refused.error?.code == "INVALID_REQUEST")
            #expect(refused.error?.message == "missing scope: operator.approvals")
            #expect(await gateway.pendingPairingRequests().map(\.requestId) == [requestId], "a refused approval leaves the request pending")

            let strong = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x25),
                                                                scopes: ["operator.pairing", "operator.approvals"])
            let approved = try await strong.client.request("device.pair.approve", params: ["requestId": .string(requestId)])
            #expect(approved.ok)
            #expect(approved.payload?["requestId"]?.stringValue == requestId)
            #expect(approved.payload?["device"]?["deviceId"]?.stringValue == applicantIdentity.deviceId)
            let grantedScopes = Self.strings(approved.payload?["device"]?["scopes"])
            #expect(grantedScopes.contains("operator.approvals"))
            _ = try await TestSessions.connect(gateway, identity: applicantIdentity) { $0.operatorParams(scopes: ["operator.approvals"]) }
        }
    }

    @Test func wireApprovalOfANodeRoleNeedsAdmin() async throws {
        try await Gateway.withGateway { gateway in
            let pairingOnly = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x26),
                                                                     scopes: ["operator.pairing", "operator.approvals"])
            let node = try TestIdentities.make(0x27)
            let applicant = try await TestClient.open(gateway.url, identity: node)
            let requestId = try #require(try await applicant.connect(applicant.connectParams()).error?.details?["requestId"]?.stringValue)

            let refused = try await pairingOnly.client.request("device.pair.approve", params: ["requestId": .string(requestId)])
            #expect(refused.error?.code == "INVALID_REQUEST")
            #expect(refused.error?.message == "device pairing approval denied")

            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x28), scopes: ["operator.admin"])
            let approved = try await admin.client.request("device.pair.approve", params: ["requestId": .string(requestId)])
            #expect(approved.ok)
            _ = try await TestSessions.connect(gateway, identity: node) { $0.connectParams() }
        }
    }

    // MARK: - Method scopes

    @Test func missingScopeIsForbiddenWithDetailsOnTheCurrentProfile() async throws {
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x29), scopes: ["operator.read"])
            let cases: [(method: String, params: JSONValue?, scope: String)] = [
                ("device.pair.list", nil, "operator.pairing"),
                ("approval.get", ["id": "a1"], "operator.approvals"),
                ("exec.approval.list", nil, "operator.approvals"),
                ("question.list", nil, "operator.questions"),
                ("node.invoke", ["nodeId": "n", "command": "device.info", "idempotencyKey": "k"], "operator.write"),
            ]
            for item in cases {
                let response = try await reader.client.request(item.method, params: item.params)
                #expect(response.ok == false, "\(item.method)")
                #expect(response.error?.code == "FORBIDDEN", "\(item.method)")
                #expect(response.error?.message == "missing scope: \(item.scope)", "\(item.method)")
                #expect(response.error?.details?["code"] == "MISSING_SCOPE", "\(item.method)")
                #expect(response.error?.details?["missingScope"]?.stringValue == item.scope, "\(item.method)")
                #expect(Self.strings(response.error?.details?["requiredScopes"]) == [item.scope], "\(item.method)")
            }
            // operator.read is enough for the read methods.
            #expect(try await reader.client.request("node.list", params: nil).ok)
        }
    }

    @Test func writeScopeImpliesReadScope() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x2A), scopes: ["operator.write"])
            #expect(try await writer.client.request("node.list", params: nil).ok)
            #expect(try await writer.client.request("gateway.identity.get", params: nil).ok)
        }
    }

    @Test func missingScopeIsInvalidRequestWithTheSameMessageOnTheLegacyProfile() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x2B), scopes: ["operator.read"])
            for (method, scope) in [("device.pair.list", "operator.pairing"), ("exec.approval.list", "operator.approvals")] {
                let response = try await reader.client.request(method, params: nil)
                #expect(response.error?.code == "INVALID_REQUEST", "\(method)")
                #expect(response.error?.message == "missing scope: \(scope)", "\(method)")
                #expect(response.error?.details == nil, "\(method)")
            }
        }
    }

    // MARK: - Roles

    @Test func operatorCallingNodeOnlyMethodsGetsUnauthorizedRoleOperator() async throws {
        try await Gateway.withGateway { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x2C), scopes: ["operator.admin"])
            let calls: [(String, JSONValue?)] = [
                ("node.invoke.result", ["id": "i", "nodeId": "n", "ok": true]),
                ("node.event", ["event": "node.presence.alive"]),
                ("node.pending.pull", nil),
            ]
            for (method, params) in calls {
                let response = try await admin.client.request(method, params: params)
                #expect(response.error?.code == "INVALID_REQUEST", "\(method)")
                #expect(response.error?.message == "unauthorized role: operator", "\(method)")
            }
        }
    }

    @Test func nodeCallingOperatorMethodsGetsUnauthorizedRoleNode() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0x2D))
            for method in ["device.pair.list", "approval.resolve", "question.list", "node.invoke", "exec.approval.resolve"] {
                let response = try await node.client.request(method, params: ["id": "x"])
                #expect(response.error?.code == "INVALID_REQUEST", "\(method)")
                #expect(response.error?.message == "unauthorized role: node", "\(method)")
            }
        }
    }

    // MARK: - Broadcast gating

    @Test func pairingEventsReachOnlySessionsWithThePairingScope() async throws {
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x30), scopes: ["operator.read"])
            let pairer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x31), scopes: ["operator.pairing"])
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x32), scopes: ["operator.admin"])
            _ = try await reader.client.barrier()
            _ = try await pairer.client.barrier()
            _ = try await admin.client.barrier()

            let applicant = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0x33))
            let requestId = try #require(try await applicant.connect(applicant.connectParams()).error?.details?["requestId"]?.stringValue)

            let pairerRequested = TestClient.events("device.pair.requested", in: try await pairer.client.barrier())
            #expect(pairerRequested.map { $0.payload?["requestId"]?.stringValue } == [requestId])
            #expect(TestClient.events("device.pair.requested", in: try await admin.client.barrier()).count == 1)
            #expect(TestClient.events("device.pair.requested", in: try await reader.client.barrier()).isEmpty)

            try await gateway.approve(requestId: requestId)
            let resolved = TestClient.events("device.pair.resolved", in: try await pairer.client.barrier())
            #expect(resolved.map { $0.payload?["decision"]?.stringValue } == ["approved"])
            #expect(TestClient.events("device.pair.resolved", in: try await reader.client.barrier()).isEmpty)
        }
    }

    @Test func approvalEventsReachOnlySessionsWithTheApprovalsScope() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x34), scopes: ["operator.read"])
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x35), scopes: ["operator.approvals"])
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0x36))
            for session in [reader, approver, node] { _ = try await session.client.barrier() }

            let approval = try await gateway.createApproval(command: "rm -rf ./build")
            let requested = TestClient.events("exec.approval.requested", in: try await approver.client.barrier())
            #expect(requested.map { $0.payload?["id"]?.stringValue } == [approval.id])
            #expect(TestClient.events("exec.approval.requested", in: try await reader.client.barrier()).isEmpty)
            #expect(TestClient.events("exec.approval.requested", in: try await node.client.barrier()).isEmpty)

            await gateway.resolveApproval(id: approval.id, decision: .deny)
            #expect(TestClient.events("exec.approval.resolved", in: try await approver.client.barrier()).count == 1)
            #expect(TestClient.events("exec.approval.resolved", in: try await reader.client.barrier()).isEmpty)
            #expect(TestClient.events("exec.approval.resolved", in: try await node.client.barrier()).isEmpty)
        }
    }

    @Test func questionEventsReachOnlySessionsWithTheQuestionsScope() async throws {
        try await Gateway.withGateway { gateway in
            let approver = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x37), scopes: ["operator.approvals"])
            let asker = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x38), scopes: ["operator.questions"])
            let sessionWriter = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x39),
                                                                       scopes: ["operator.sessions.write"])
            for session in [approver, asker, sessionWriter] { _ = try await session.client.barrier() }

            let question = try await gateway.createQuestion("Deploy where?", options: ["Staging", "Production"])
            #expect(TestClient.events("question.requested", in: try await asker.client.barrier()).map { $0.payload?["id"]?.stringValue } == [question.id])
            #expect(TestClient.events("question.requested", in: try await sessionWriter.client.barrier()).count == 1)
            #expect(TestClient.events("question.requested", in: try await approver.client.barrier()).isEmpty)

            try await gateway.cancelQuestion(id: question.id)
            #expect(TestClient.events("question.resolved", in: try await asker.client.barrier()).count == 1)
            #expect(TestClient.events("question.resolved", in: try await approver.client.barrier()).isEmpty)
        }
    }
}
