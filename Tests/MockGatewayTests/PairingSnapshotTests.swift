import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("device.pair.list snapshot and event payloads")
struct PairingSnapshotTests {
    typealias F = PairingFixtures

    @Test func theRequestedEventCarriesThePublicRequest() {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        #expect(request.eventPayload == [
            "requestId": .string(request.requestId), "deviceId": .string(F.deviceId), "publicKey": .string(F.publicKey),
            "displayName": "Ana's iPhone", "platform": "iOS 18.4.0", "deviceFamily": "iPhone", "clientId": "openclaw-ios",
            "clientMode": "node", "role": "node", "roles": ["node"], "scopes": [], "remoteIp": "192.168.1.20",
            "isRepair": false, "ts": .int(F.t0),
        ])
        let refreshed = store.requestPairing(for: F.iosNode(), nowMs: F.t0 + 1).request
        #expect(refreshed.eventPayload["refreshedAtMs"] == nil)
    }

    @Test func theResolvedEventHasRequestDeviceDecisionAndTime() {
        let resolution = PairingResolution(requestId: "r1", deviceId: "d1", decision: .approved, ts: F.t0)
        #expect(resolution.eventPayload == ["requestId": "r1", "deviceId": "d1", "decision": "approved", "ts": .int(F.t0)])
        #expect(GatewayEventName.devicePairRequested.rawValue == "device.pair.requested")
        #expect(GatewayEventName.devicePairResolved.rawValue == "device.pair.resolved")
    }

    @Test func theListHoldsPendingAndPairedWithSummarisedTokens() throws {
        var store = try F.paired([F.iosNode()], at: F.t0)
        let token = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0).deviceToken)
        _ = try store.rename(deviceId: F.deviceId, label: "Ana")
        let pending = store.requestPairing(for: F.nodeHost(), nowMs: F.t0 + F.second).request
        let list = store.listPayload(nowMs: F.t0 + F.second, connectedDeviceIds: [F.deviceId])
        #expect(list["pending"] == [pending.eventPayload])
        let paired = try #require(list["paired"]?.arrayValue?.first)
        #expect(paired["deviceId"] == .string(F.deviceId))
        #expect(paired["roles"] == ["node"])
        #expect(paired["role"] == "node")
        #expect(paired["approvedVia"] == "manual")
        #expect(paired["label"] == "Ana")
        #expect(paired["connected"] == true)
        #expect(paired["tokens"] == [["role": "node", "scopes": [], "createdAtMs": .int(F.t0)]])
        #expect(!list.jsonString.contains(token.token))
    }

    @Test func expiredRequestsNeverAppearInTheList() {
        var store = F.store()
        _ = store.requestPairing(for: F.iosNode(), nowMs: F.t0)
        #expect(store.listPayload(nowMs: F.t0 + 6 * F.minute) == ["pending": [], "paired": []])
    }

    @Test func theApprovalResultHoldsTheRedactedDevice() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let approval = try store.approve(requestId: request.requestId, nowMs: F.t0)
        let payload = store.approvalPayload(approval)
        #expect(payload["requestId"] == .string(request.requestId))
        #expect(payload["device"]?["deviceId"] == .string(F.deviceId))
        #expect(payload["device"]?["tokens"] == [])
    }
}
