import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// The Gateway's own operator methods over real sockets: pairing records, device tokens, nodes
/// and the Gateway identity.
@Suite("Operator methods end to end")
struct OperatorMethodsEndToEndTests {
    static let pairingScopes = ["operator.pairing", "operator.read"]

    static func strings(_ value: JSONValue?) -> [String] {
        value?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Starts a pairing request for a fresh node identity and returns its id.
    static func pendingNodeRequest(_ gateway: Gateway, identity: DeviceIdentity) async throws -> String {
        let applicant = try await TestClient.open(gateway.url, identity: identity)
        let response = try await applicant.connect(applicant.connectParams())
        _ = try await applicant.closed()
        return try #require(response.error?.details?["requestId"]?.stringValue)
    }

    // MARK: - device.pair.*

    @Test func pairListShowsPendingRequestsAndPairedDevicesWithoutRawTokens() async throws {
        try await Gateway.withGateway { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x40), scopes: ["operator.admin"])
            let node = try TestIdentities.make(0x41)
            let requestId = try await Self.pendingNodeRequest(gateway, identity: node)

            let list = try await admin.client.request("device.pair.list", params: [:])
            #expect(list.ok)
            let pending = list.payload?["pending"]?.arrayValue ?? []
            #expect(pending.compactMap { $0["requestId"]?.stringValue } == [requestId])
            #expect(pending.first?["deviceId"]?.stringValue == node.deviceId)
            let paired = list.payload?["paired"]?.arrayValue ?? []
            let me = try #require(paired.first { $0["deviceId"]?.stringValue == admin.client.identity.deviceId })
            #expect(me["connected"] == true)
            let token = try #require(admin.deviceToken)
            #expect(!list.payload!.jsonString.contains(token), "device.pair.list never shows a raw token")
            #expect(me["tokens"]?.arrayValue?.isEmpty == false, "tokens are summarised")
        }
    }

    @Test func pairRejectEndsTheRequestAndTheNextConnectAsksAgain() async throws {
        try await Gateway.withGateway { gateway in
            let pairer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x42), scopes: Self.pairingScopes)
            let node = try TestIdentities.make(0x43)
            let requestId = try await Self.pendingNodeRequest(gateway, identity: node)
            _ = try await pairer.client.barrier()

            let (rejected, before) = try await pairer.client.requestCollecting("device.pair.reject", params: ["requestId": .string(requestId)])
            #expect(rejected.payload == ["requestId": .string(requestId), "deviceId": .string(node.deviceId)])
            let resolved = TestClient.events("device.pair.resolved", in: before + (try await pairer.client.barrier()))
            #expect(resolved.map { $0.payload?["decision"]?.stringValue } == ["rejected"])
            #expect(await gateway.pendingPairingRequests().isEmpty)

            let again = try await pairer.client.request("device.pair.approve", params: ["requestId": .string(requestId)])
            #expect(again.error?.message == "unknown requestId")
            let newRequestId = try await Self.pendingNodeRequest(gateway, identity: node)
            #expect(newRequestId != requestId)
        }
    }

    @Test func pairRemoveClosesTheDevicesSessionsAndItMustPairAgain() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .manual)) { gateway in
            let pairer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x44), scopes: Self.pairingScopes)
            let nodeIdentity = try TestIdentities.make(0x45)
            let node = try await TestSessions.nodeSession(gateway, identity: nodeIdentity)

            let removed = try await pairer.client.request("device.pair.remove", params: ["deviceId": .string(nodeIdentity.deviceId)])
            #expect(removed.payload == ["deviceId": .string(nodeIdentity.deviceId)])
            let closed = try await node.client.closed()
            #expect(closed.code == .policyViolation)
            #expect(closed.reason == "device-pair-removed")

            let retry = try await TestClient.open(gateway.url, identity: nodeIdentity)
            let response = try await retry.connect(retry.connectParams(token: node.deviceToken))
            #expect(response.error?.detailCode == "PAIRING_REQUIRED")
            #expect(response.error?.details?["reason"] == "not-paired")

            let unknown = try await pairer.client.request("device.pair.remove", params: ["deviceId": .string(nodeIdentity.deviceId)])
            #expect(unknown.error?.message == "unknown deviceId")
        }
    }

    @Test func pairRenameSetsTheLabelShownInTheList() async throws {
        try await Gateway.withGateway { gateway in
            let pairer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x46), scopes: Self.pairingScopes)
            let deviceId = pairer.client.identity.deviceId
            let renamed = try await pairer.client.request("device.pair.rename", params: ["deviceId": .string(deviceId), "label": "Kitchen iPad"])
            #expect(renamed.payload?["label"] == "Kitchen iPad")
            let list = try await pairer.client.request("device.pair.list", params: nil)
            let entry = list.payload?["paired"]?.arrayValue?.first { $0["deviceId"]?.stringValue == deviceId }
            #expect(entry?["label"] == "Kitchen iPad")
            let empty = try await pairer.client.request("device.pair.rename", params: ["deviceId": .string(deviceId), "label": ""])
            #expect(empty.error?.message == "label required")
            let missing = try await pairer.client.request("device.pair.rename", params: ["label": "x"])
            #expect(missing.error?.code == "INVALID_REQUEST")
        }
    }

    // MARK: - device.token.*

    @Test func tokenRotationClosesTheRolesSessionsAndEchoesTheTokenOnlyToTheSameDevice() async throws {
        // Token mode, so that a session can authenticate with its device token (in mode `none`
        // the device token is never looked at, docs/protocol.md §5.3).
        let shared = "shared-secret"
        try await Gateway.withGateway(GatewayConfiguration(auth: .token(shared))) { gateway in
            let identity = try TestIdentities.make(0x47)
            let scopes = Self.pairingScopes
            let first = try await TestSessions.operatorSession(gateway, identity: identity, scopes: scopes, token: shared)
            let oldToken = try #require(first.deviceToken)
            let byDeviceToken = try await TestSessions.connect(gateway, identity: identity) {
                $0.operatorParams(scopes: scopes, token: oldToken)
            }
            let other = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x48), scopes: scopes, token: shared)

            let byOther = try await other.client.request("device.token.rotate", params: [
                "deviceId": .string(identity.deviceId), "role": "operator",
            ])
            #expect(byOther.ok)
            #expect(byOther.payload?["token"] == nil, "the new bearer goes only to the same device")
            #expect(byOther.payload?["deviceId"]?.stringValue == identity.deviceId)
            #expect(byOther.payload?["rotatedAtMs"]?.int64Value == gateway.clock.nowMs)
            #expect(try await first.client.closed().reason == "device-token-rotated")
            #expect(try await byDeviceToken.client.closed().code == .policyViolation)
            #expect(try await other.client.request("device.pair.list", params: nil).ok, "other devices keep their sessions")

            // The old token is refused; the shared secret still admits the device with the new token.
            let stale = try await TestClient.open(gateway.url, identity: identity)
            #expect(try await stale.connect(stale.operatorParams(scopes: scopes, deviceToken: oldToken)).error?.detailCode
                    == "AUTH_DEVICE_TOKEN_MISMATCH")
            let back = try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: shared) }
            let current = try #require(back.deviceToken)
            #expect(current != oldToken)

            // A session authenticated with the device's own token gets the new bearer echoed.
            let own = try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: current) }
            let rotated = try await own.client.request("device.token.rotate", params: ["deviceId": .string(identity.deviceId), "role": "operator"])
            let echoed = try #require(rotated.payload?["token"]?.stringValue)
            #expect(echoed != current)
            #expect(echoed.count == 43)
            _ = try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: echoed) }
        }
    }

    @Test func rotatingANodeTokenNeedsAdmin() async throws {
        try await Gateway.withGateway { gateway in
            let pairer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x49), scopes: Self.pairingScopes)
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0x4A))
            let response = try await pairer.client.request("device.token.revoke", params: [
                "deviceId": .string(node.client.identity.deviceId), "role": "node",
            ])
            #expect(response.error?.code == "FORBIDDEN")
            #expect(response.error?.message == "missing scope: operator.admin")
            #expect(try await node.client.request("node.pending.pull", params: nil).ok, "the node session is untouched")
        }
    }

    @Test func revocationClosesLiveSessionsAndTokenModeRefusesTheRevokedToken() async throws {
        try await Gateway.withGateway(GatewayConfiguration(auth: .token("shared-secret"))) { gateway in
            let identity = try TestIdentities.make(0x4B)
            let scopes = ["operator.read"]
            let paired = try await TestSessions.operatorSession(gateway, identity: identity, scopes: scopes, token: "shared-secret")
            let token = try #require(paired.deviceToken)
            // Device-token auth: the token alone, without the shared secret.
            let live = try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: token) }
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x4C),
                                                               scopes: ["operator.admin"], token: "shared-secret")

            let revoked = try await admin.client.request("device.token.revoke", params: ["deviceId": .string(identity.deviceId), "role": "operator"])
            #expect(revoked.payload?["deviceId"]?.stringValue == identity.deviceId)
            #expect(revoked.payload?["role"] == "operator")
            #expect(revoked.payload?["revokedAtMs"]?.int64Value == gateway.clock.nowMs)
            for session in [paired, live] {
                let info = try await session.client.closed()
                #expect(info.code == .policyViolation)
                #expect(info.reason == "device-token-revoked")
            }

            // As auth.token: the shared-secret failure stands.
            let asToken = try await TestClient.open(gateway.url, identity: identity)
            let tokenResponse = try await asToken.connect(asToken.operatorParams(scopes: scopes, token: token))
            #expect(tokenResponse.error?.code == "INVALID_REQUEST")
            #expect(tokenResponse.error?.detailCode == "AUTH_TOKEN_MISMATCH")
            #expect(try await asToken.closed().code == .policyViolation)
            // As an explicit auth.deviceToken: the device-token failure.
            let asDeviceToken = try await TestClient.open(gateway.url, identity: identity)
            let deviceTokenResponse = try await asDeviceToken.connect(asDeviceToken.operatorParams(scopes: scopes, deviceToken: token))
            #expect(deviceTokenResponse.error?.detailCode == "AUTH_DEVICE_TOKEN_MISMATCH")
            #expect(try await asDeviceToken.closed().code == .policyViolation)
        }
    }

    @Test func inNoneModeARevokedTokenFallsBackToThePairingChecks() async throws {
        try await Gateway.withGateway { gateway in
            let identity = try TestIdentities.make(0x4D)
            let scopes = ["operator.read"]
            let paired = try await TestSessions.operatorSession(gateway, identity: identity, scopes: scopes)
            let token = try #require(paired.deviceToken)
            try await gateway.revokeToken(deviceId: identity.deviceId, role: "operator")
            #expect(try await paired.client.closed().reason == "device-token-revoked")

            // Still paired: the stale token is not even looked at, and a fresh one is issued.
            let again = try await TestSessions.connect(gateway, identity: identity) { $0.operatorParams(scopes: scopes, token: token) }
            #expect(again.hello.auth.role == .operator)
            #expect(again.deviceToken != nil)
            #expect(again.deviceToken != token)

            // Removed: the same stale token now leads to a new pairing request.
            try await gateway.removeDevice(identity.deviceId)
            let removed = try await TestClient.open(gateway.url, identity: identity)
            let response = try await removed.connect(removed.operatorParams(scopes: scopes, token: token))
            #expect(response.error?.detailCode == "PAIRING_REQUIRED")
        }
    }

    // MARK: - Nodes

    @Test func nodeListAndDescribeShowConnectedNodes() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x4E), scopes: ["operator.read"])
            let nodeIdentity = try TestIdentities.make(0x4F)
            _ = try await TestSessions.nodeSession(gateway, identity: nodeIdentity)

            let list = try await reader.client.request("node.list", params: nil)
            let nodes = list.payload?["nodes"]?.arrayValue ?? []
            let entry = try #require(nodes.first { $0["nodeId"]?.stringValue == nodeIdentity.deviceId })
            #expect(entry["connected"] == true)
            #expect(entry["paired"] == true)
            #expect(Self.strings(entry["commands"]) == ["device.info", "location.get"])
            #expect(nodes.allSatisfy { $0["nodeId"]?.stringValue != reader.client.identity.deviceId }, "operators are not nodes")

            let described = try await reader.client.request("node.describe", params: ["nodeId": .string(nodeIdentity.deviceId)])
            #expect(described.payload?["nodeId"]?.stringValue == nodeIdentity.deviceId)
            #expect(described.payload?["connected"] == true)
            let unknown = try await reader.client.request("node.describe", params: ["nodeId": "no-such-node"])
            #expect(unknown.error?.code == "INVALID_REQUEST")
            #expect(unknown.error?.message == "unknown nodeId")
        }
    }

    @Test func nodeInvokeIsRelayedToTheNodeAndAnsweredWithItsResult() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x50), scopes: ["operator.write"])
            let nodeIdentity = try TestIdentities.make(0x51)
            let node = try await TestSessions.nodeSession(gateway, identity: nodeIdentity)

            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeIdentity.deviceId), "command": "device.info", "params": ["verbose": true],
                "idempotencyKey": "invoke-1", "timeoutMs": 30_000,
            ], id: "invoke-req")
            let request = try await node.client.event("node.invoke.request")
            let invoke = try #require(try request.payload?.decode(as: NodeInvokeRequest.self))
            #expect(invoke.command == "device.info")
            #expect(invoke.paramsJSON == #"{"verbose":true}"#)
            #expect(invoke.idempotencyKey == "invoke-1")
            let ack = try await node.client.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
                id: invoke.id, nodeId: nodeIdentity.deviceId, ok: true, payloadJSON: #"{"model":"iPhone17,1"}"#)))
            #expect(ack.payload == ["ok": true])

            let (answer, _) = try await writer.client.collect(untilResponseTo: "invoke-req")
            #expect(answer.ok)
            #expect(answer.payload?["nodeId"]?.stringValue == nodeIdentity.deviceId)
            #expect(answer.payload?["payloadJSON"] == #"{"model":"iPhone17,1"}"#)
            #expect(answer.payload?["payload"] == ["model": "iPhone17,1"])
            #expect(answer.payload?["command"] == "device.info")

            let missing = try await writer.client.request("node.invoke", params: [
                "nodeId": "not-connected", "command": "device.info", "idempotencyKey": "invoke-2",
            ])
            #expect(missing.error?.code == "UNAVAILABLE")
            #expect(missing.error?.detailCode == "NOT_CONNECTED")
            #expect(missing.error?.details?["nodeCommandDispatched"] == false)
        }
    }

    @Test func aNodeFailureReachesTheOperatorAsUnavailableWithTheNodeErrorInDetails() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x55), scopes: ["operator.write"])
            let nodeIdentity = try TestIdentities.make(0x56)
            let node = try await TestSessions.nodeSession(gateway, identity: nodeIdentity)
            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeIdentity.deviceId), "command": "device.info", "idempotencyKey": "k",
            ], id: "invoke-req")
            let request = try await node.client.event("node.invoke.request")
            let invoke = try #require(try request.payload?.decode(as: NodeInvokeRequest.self))
            _ = try await node.client.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
                id: invoke.id, nodeId: nodeIdentity.deviceId, ok: false,
                error: NodeInvokeError(code: "INVALID_REQUEST", message: "bad params"))))
            let (answer, _) = try await writer.client.collect(untilResponseTo: "invoke-req")
            #expect(answer.error?.code == "UNAVAILABLE", "the node's own code is not the top-level code")
            #expect(answer.error?.message == "INVALID_REQUEST: bad params")
            #expect(answer.error?.details?["nodeError"] == ["code": "INVALID_REQUEST", "message": "bad params"])
            #expect(answer.error?.details?["nodeCommandDispatched"] == true)
        }
    }

    @Test func nodeInvokeFailsWhenTheNodeDisconnectsBeforeAnswering() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x52), scopes: ["operator.write"])
            let nodeIdentity = try TestIdentities.make(0x53)
            let node = try await TestSessions.nodeSession(gateway, identity: nodeIdentity)
            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeIdentity.deviceId), "command": "device.info", "idempotencyKey": "k",
            ], id: "invoke-req")
            _ = try await node.client.event("node.invoke.request")
            await node.client.close()
            let (answer, _) = try await writer.client.collect(untilResponseTo: "invoke-req")
            #expect(answer.error?.code == "UNAVAILABLE")
            #expect(answer.error?.retryable == true)
        }
    }

    // MARK: - Identity

    @Test func gatewayIdentityGetMatchesTheGatewaysIdentity() async throws {
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x54), scopes: ["operator.read"])
            let response = try await reader.client.request("gateway.identity.get", params: nil)
            #expect(response.payload?["deviceId"]?.stringValue == gateway.identity.deviceId)
            #expect(response.payload?["publicKey"]?.stringValue == gateway.identity.publicKeyBase64URL)
        }
    }
}
