import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("Approve, reject, remove, rename (docs/protocol.md §5.10, §5.12)")
struct PairingResolutionTests {
    typealias F = PairingFixtures

    @Test func approvalCreatesTheRecordAndAnnouncesIt() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let approval = try store.approve(requestId: request.requestId, nowMs: F.t0 + F.second)
        let device = approval.device
        #expect(device.deviceId == F.deviceId)
        #expect(device.publicKey == F.publicKey)
        #expect(device.roles == ["node"])
        #expect(device.scopes.isEmpty)
        #expect(device.platform == "iOS 18.4.0")
        #expect(device.deviceFamily == "iPhone")
        #expect(device.clientId == "openclaw-ios")
        #expect(device.clientMode == "node")
        #expect(device.displayName == "Ana's iPhone")
        #expect(device.remoteIp == "192.168.1.20")
        #expect(device.approvedAtMs == F.t0 + F.second)
        #expect(device.createdAtMs == F.t0 + F.second)
        #expect(device.approvedVia == .manual)
        #expect(approval.effects == [
            .resolved(PairingResolution(requestId: request.requestId, deviceId: F.deviceId, decision: .approved, ts: F.t0 + F.second)),
        ])
        #expect(store.pendingRequests(nowMs: F.t0 + F.second).isEmpty)
        #expect(store.evaluate(F.iosNode()) == .paired(device))
    }

    @Test func concurrentApprovalsApplyExactlyOnceAndTheLoserGetsUnknownRequestId() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let winner = try store.approve(requestId: request.requestId, nowMs: F.t0 + F.second, approver: ApproverContext(scopes: [PairingScope.admin]))
        let error = #expect(throws: PairingError.self) {
            _ = try store.approve(requestId: request.requestId, nowMs: F.t0 + 2 * F.second, approver: ApproverContext(scopes: [PairingScope.admin]))
        }
        #expect(error?.code == .unknownRequest)
        #expect(error?.errorShape == ErrorShape(code: "INVALID_REQUEST", message: "unknown requestId"))
        // The record is the winner's: the loser changed nothing.
        #expect(store.pairedDevice(F.deviceId) == winner.device)
        #expect(store.pairedDevice(F.deviceId)?.approvedAtMs == F.t0 + F.second)
    }

    @Test func rejectingAnApprovedRequestFailsTheSameWay() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        _ = try store.approve(requestId: request.requestId, nowMs: F.t0)
        #expect(throws: PairingError.unknownRequest(request.requestId)) {
            _ = try store.reject(requestId: request.requestId, nowMs: F.t0)
        }
    }

    @Test func rejectionAnnouncesAndTheNextConnectAsksAgain() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let rejection = try store.reject(requestId: request.requestId, nowMs: F.t0 + F.second)
        #expect(rejection.deviceId == F.deviceId)
        #expect(rejection.effects == [
            .resolved(PairingResolution(requestId: request.requestId, deviceId: F.deviceId, decision: .rejected, ts: F.t0 + F.second)),
        ])
        #expect(rejection.responsePayload == ["requestId": .string(request.requestId), "deviceId": .string(F.deviceId)])
        #expect(store.pairedDevice(F.deviceId) == nil)
        let next = store.requestPairing(for: F.iosNode(), nowMs: F.t0 + 2 * F.second)
        #expect(next.created)
        #expect(next.request.requestId != request.requestId)
    }

    @Test func theApproverMustHoldEveryRequestedScope() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosOperator(scopes: [PairingScope.read, PairingScope.approvals]), nowMs: F.t0).request
        let error = #expect(throws: PairingError.self) {
            _ = try store.approve(requestId: request.requestId, nowMs: F.t0, approver: ApproverContext(scopes: [PairingScope.pairing, PairingScope.write]))
        }
        #expect(error?.code == .missingScope)
        #expect(error?.errorShape == ErrorShape(code: "INVALID_REQUEST", message: "missing scope: operator.approvals"))
        // A refused approval leaves the request pending.
        #expect(store.pendingRequest(request.requestId, nowMs: F.t0) != nil)
        let approval = try store.approve(
            requestId: request.requestId, nowMs: F.t0,
            approver: ApproverContext(scopes: [PairingScope.pairing, PairingScope.write, PairingScope.approvals]))
        #expect(approval.device.scopes == ["operator.read", "operator.approvals"])
    }

    @Test func grantingAdminNeedsAdmin() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosOperator(scopes: [PairingScope.admin]), nowMs: F.t0).request
        #expect(throws: PairingError.missingScope(PairingScope.admin)) {
            _ = try store.approve(requestId: request.requestId, nowMs: F.t0, approver: ApproverContext(scopes: [PairingScope.pairing, PairingScope.write]))
        }
        _ = try store.approve(requestId: request.requestId, nowMs: F.t0, approver: ApproverContext(scopes: [PairingScope.admin]))
    }

    @Test func approvingANodeRoleNeedsAdmin() throws {
        var store = F.store()
        let request = store.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let error = #expect(throws: PairingError.self) {
            _ = try store.approve(requestId: request.requestId, nowMs: F.t0, approver: ApproverContext(scopes: [PairingScope.pairing]))
        }
        #expect(error?.code == .approvalDenied)
        #expect(error?.message == "device pairing approval denied")
    }

    @Test func anUpgradeApprovalMergesIntoTheExistingRecord() throws {
        var store = try F.paired([F.iosNode()], at: F.t0)
        let upgrade = store.requestPairing(for: F.iosOperator(), nowMs: F.t0 + F.minute).request
        let approval = try store.approve(requestId: upgrade.requestId, nowMs: F.t0 + 2 * F.minute)
        #expect(approval.device.roles == ["node", "operator"])
        #expect(approval.device.scopes == ["operator.read", "operator.write"])
        #expect(approval.device.createdAtMs == F.t0)
        #expect(approval.device.approvedAtMs == F.t0 + 2 * F.minute)
    }

    @Test func removalDeletesTheDeviceItsRequestsAndDisconnectsIt() throws {
        var store = try F.paired([F.iosNode()])
        _ = store.grantHelloAuth(deviceId: F.deviceId, role: GatewayRole.node, scopes: [], nowMs: F.t0)
        let pending = store.requestPairing(for: F.iosOperator(), nowMs: F.t0 + F.second).request
        let effects = try store.remove(deviceId: F.deviceId, nowMs: F.t0 + 2 * F.second)
        #expect(effects == [.withdrawn(pending), .disconnect(deviceId: F.deviceId, role: nil, reason: .deviceRemoved)])
        #expect(store.pairedDevice(F.deviceId) == nil)
        #expect(store.tokens.tokens(deviceId: F.deviceId).isEmpty)
        #expect(store.pendingRequests(nowMs: F.t0 + 2 * F.second).isEmpty)
        #expect(store.evaluate(F.iosNode()) == .required(.notPaired, existing: nil))
        #expect(throws: PairingError.unknownDevice(F.deviceId)) {
            _ = try store.remove(deviceId: F.deviceId, nowMs: F.t0)
        }
    }

    @Test func renameSetsTheOperatorLabel() throws {
        var store = try F.paired([F.iosNode()])
        let renamed = try store.rename(deviceId: F.deviceId, label: "  Kitchen iPad  ")
        #expect(renamed.label == "Kitchen iPad")
        // The label survives a reconnect that refreshes the display name.
        store.recordConnect(F.iosNode(displayName: "Other"), nowMs: F.t0 + F.second)
        #expect(store.pairedDevice(F.deviceId)?.label == "Kitchen iPad")
        #expect(throws: PairingError.labelRequired(F.deviceId)) { _ = try store.rename(deviceId: F.deviceId, label: "  ") }
        #expect(throws: PairingError.unknownDevice("nope")) { _ = try store.rename(deviceId: "nope", label: "x") }
    }

    @Test func lastSeenFollowsPresenceBeaconsAndConnects() throws {
        var store = try F.paired([F.iosNode()])
        let recorded = store.recordLastSeen(deviceId: F.deviceId, atMs: F.t0 + F.minute, reason: "silent_push")
        let unknown = store.recordLastSeen(deviceId: "unknown", atMs: F.t0, reason: "background")
        #expect(recorded)
        #expect(!unknown)
        let seen = try #require(store.pairedDevice(F.deviceId))
        #expect(seen.lastSeenAtMs == F.t0 + F.minute)
        #expect(seen.lastSeenReason == "silent_push")
        guard case .admitted(let admitted, _) = store.admit(F.iosNode(remoteIp: "192.168.1.77"), nowMs: F.t0 + 2 * F.minute) else {
            Issue.record("expected admission")
            return
        }
        #expect(admitted.device.lastSeenAtMs == F.t0 + 2 * F.minute)
        #expect(admitted.device.lastSeenReason == "connect")
        #expect(admitted.device.remoteIp == "192.168.1.77")
    }
}
