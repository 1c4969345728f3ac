import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("Auto-approval paths (docs/protocol.md §5.10)")
struct PairingAutoApprovalTests {
    typealias F = PairingFixtures

    static func approvedVia(_ admission: PairingAdmission) -> ApprovalMethod? {
        if case .admitted(let admitted, _) = admission { return admitted.silentlyApprovedVia }
        return nil
    }

    static func isRejected(_ admission: PairingAdmission) -> Bool {
        if case .rejected = admission { return true }
        return false
    }

    @Test func manualIsTheDefaultEvenOnLoopback() {
        var store = F.store()
        let admission = store.admit(F.iosNode(remoteIp: "127.0.0.1", isLoopback: true), nowMs: F.t0)
        guard case .rejected(let rejection, let request, let effects) = admission else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.requirement == .notPaired)
        #expect(rejection.requestId == request.requestId)
        #expect(effects == [.requested(request)])
    }

    @Test func aLoopbackClientIsApprovedSilentlyWithoutARequestedEvent() {
        var store = F.store()
        let admission = store.admit(F.iosNode(remoteIp: "127.0.0.1", isLoopback: true), policy: .loopbackLocal, nowMs: F.t0)
        guard case .admitted(let admitted, let effects) = admission else {
            Issue.record("expected admission")
            return
        }
        #expect(admitted.silentlyApprovedVia == .silent)
        #expect(admitted.device.approvedVia == .silent)
        #expect(admitted.device.lastSeenReason == "connect")
        let wire = F.wireEffects(effects)
        #expect(wire.count == 1)
        if case .resolved(let resolution) = wire.first { #expect(resolution.decision == .approved) } else { Issue.record("expected resolved") }
        #expect(store.pendingRequests(nowMs: F.t0).isEmpty)
    }

    @Test func loopbackApprovalExcludesRemoteBrowserAndWebClients() {
        var remote = F.store()
        #expect(Self.isRejected(remote.admit(F.iosNode(), policy: .loopbackLocal, nowMs: F.t0)))
        var browser = F.store()
        #expect(Self.isRejected(browser.admit(F.iosOperator(isLoopback: true, hasBrowserOrigin: true), policy: .loopbackLocal, nowMs: F.t0)))
        var controlUI = F.store()
        var attempt = F.iosOperator(isLoopback: true)
        attempt.client = PairingClientInfo(clientId: "openclaw-control-ui", clientMode: "ui")
        #expect(Self.isRejected(controlUI.admit(attempt, policy: .loopbackLocal, nowMs: F.t0)))
    }

    @Test func loopbackCoversRoleAndScopeUpgradesOfOperators() throws {
        var store = try F.paired([F.iosNode()])
        let role = store.admit(F.iosOperator(scopes: [PairingScope.read], isLoopback: true), policy: .loopbackLocal, nowMs: F.t0)
        #expect(Self.approvedVia(role) == .silent)
        let scope = store.admit(F.iosOperator(scopes: [PairingScope.read, PairingScope.approvals], isLoopback: true),
                                policy: .loopbackLocal, nowMs: F.t0 + 1)
        #expect(Self.approvedVia(scope) == .silent)
        #expect(store.pairedDevice(F.deviceId)?.roles == ["node", "operator"])
        #expect(store.pairedDevice(F.deviceId)?.scopes == ["operator.read", "operator.approvals"])
    }

    @Test func loopbackNeverUpgradesAnAlreadyPairedNonOperatorDevice() throws {
        var store = try F.paired([F.iosOperator()])
        let admission = store.admit(F.iosNode(isLoopback: true), policy: .loopbackLocal, nowMs: F.t0)
        guard case .rejected(let rejection, _, _) = admission else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.requirement == .roleUpgrade)
    }

    @Test func aLocalMetadataUpgradeIsSilentOnlyForANativeAppOperator() throws {
        var app = try F.paired([F.iosOperator()])
        let appChange = app.admit(F.iosOperator(isLoopback: true, platform: "Android 15"), policy: .loopbackLocal, nowMs: F.t0)
        #expect(Self.approvedVia(appChange) == .silent)
        #expect(app.pairedDevice(F.deviceId)?.platform == "Android 15")

        var host = F.store()
        var hostOperator = F.nodeHost(isLoopback: true)
        hostOperator.role = GatewayRole.operator
        hostOperator.client.clientMode = "cli"
        let outcome = host.requestPairing(for: hostOperator, nowMs: F.t0)
        _ = try host.approve(requestId: outcome.request.requestId, nowMs: F.t0)
        hostOperator.client.platform = "darwin"
        guard case .rejected(let rejection, _, _) = host.admit(hostOperator, policy: .loopbackLocal, nowMs: F.t0) else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.requirement == .metadataUpgrade)
    }

    @Test func aSilentPathDoesNotGrantWhatAnInteractiveRequestAsked() throws {
        var store = F.store()
        // A remote operator session asks first and waits for an operator.
        let remote = store.requestPairing(for: F.iosOperator(scopes: [PairingScope.admin]), nowMs: F.t0).request
        // A local node connect of the same device would merge into that request: no silent approval.
        let admission = store.admit(F.iosNode(isLoopback: true), policy: .loopbackLocal, nowMs: F.t0 + 1)
        guard case .rejected(_, let request, let effects) = admission else {
            Issue.record("expected a rejection")
            return
        }
        #expect(request.roles == ["operator", "node"])
        #expect(request.scopes == ["operator.admin"])
        #expect(F.wireEffects(effects).contains(.requested(request)))
        #expect(F.wireEffects(effects).contains(.resolved(PairingResolution(requestId: remote.requestId, deviceId: F.deviceId, decision: .rejected, ts: F.t0 + 1))))
        #expect(store.pairedDevice(F.deviceId) == nil)
    }

    @Test func trustedNetworksAdmitOnlyFreshScopelessNodes() throws {
        let policy = try AutoApprovalPolicy.trustedCIDRs(parsing: ["10.0.0.0/8", "fd00::/8"])
        var store = F.store()
        #expect(Self.approvedVia(store.admit(F.nodeHost(remoteIp: "10.9.8.7"), policy: policy, nowMs: F.t0)) == .trustedCIDR)
        #expect(store.pairedDevice(F.secondDeviceId)?.approvedVia == .trustedCIDR)

        var v6 = F.store()
        #expect(Self.approvedVia(v6.admit(F.nodeHost(remoteIp: "fd12::5"), policy: policy, nowMs: F.t0)) == .trustedCIDR)

        var outside = F.store()
        #expect(Self.isRejected(outside.admit(F.nodeHost(remoteIp: "192.168.1.5"), policy: policy, nowMs: F.t0)))
        var noIP = F.store()
        #expect(Self.isRejected(noIP.admit(F.nodeHost(remoteIp: nil), policy: policy, nowMs: F.t0)))
        var scoped = F.store()
        #expect(Self.isRejected(scoped.admit(F.nodeHost(scopes: [PairingScope.read], remoteIp: "10.9.8.7"), policy: policy, nowMs: F.t0)))
        var operatorRole = F.store()
        var attempt = F.nodeHost(remoteIp: "10.9.8.7")
        attempt.role = GatewayRole.operator
        #expect(Self.isRejected(operatorRole.admit(attempt, policy: policy, nowMs: F.t0)))
    }

    @Test func trustedNetworksLeaveUpgradesManual() throws {
        let policy = try AutoApprovalPolicy.trustedCIDRs(parsing: ["10.0.0.0/8"])
        var store = try F.paired([F.nodeHost()])
        var changed = F.nodeHost(remoteIp: "10.9.8.7")
        changed.client.platform = "win32"
        guard case .rejected(let rejection, _, _) = store.admit(changed, policy: policy, nowMs: F.t0) else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.requirement == .metadataUpgrade)
        // A re-keyed device is not fresh either: its record still exists.
        var rekeyed = F.nodeHost(publicKey: "another-key", remoteIp: "10.9.8.7")
        rekeyed.client.platform = "linux"
        #expect(Self.isRejected(store.admit(rekeyed, policy: policy, nowMs: F.t0)))
    }

    @Test func autoApprovesEverythingIncludingUpgrades() throws {
        var store = F.store()
        #expect(Self.approvedVia(store.admit(F.iosNode(), policy: .auto, nowMs: F.t0)) == .auto)
        #expect(Self.approvedVia(store.admit(F.iosOperator(scopes: [PairingScope.admin]), policy: .auto, nowMs: F.t0 + 1)) == .auto)
        #expect(store.pairedDevice(F.deviceId)?.scopes == ["operator.admin"])
        #expect(Self.approvedVia(store.admit(F.iosNode(), policy: .auto, nowMs: F.t0 + 2)) == nil)
    }
}
