import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("Pairing requirement evaluation (docs/protocol.md §5.7)")
struct PairingRequirementTests {
    typealias F = PairingFixtures

    @Test func anUnknownDeviceIsNotPaired() {
        let store = F.store()
        #expect(store.evaluate(F.iosNode()) == .required(.notPaired, existing: nil))
    }

    @Test func aPairedDeviceWithAnotherPublicKeyIsNotPaired() throws {
        let store = try F.paired([F.iosNode()])
        let record = try #require(store.pairedDevice(F.deviceId))
        #expect(store.evaluate(F.iosNode(publicKey: F.otherKey)) == .required(.notPaired, existing: record))
    }

    @Test func aPairedDeviceWithItsRoleAndKeyIsPaired() throws {
        let store = try F.paired([F.iosNode()])
        guard case .paired(let record) = store.evaluate(F.iosNode()) else {
            Issue.record("expected paired")
            return
        }
        #expect(record.roles == [GatewayRole.node])
        #expect(record.scopes.isEmpty)
    }

    @Test func aRoleThatWasNeverApprovedIsARoleUpgrade() throws {
        let store = try F.paired([F.iosNode()])
        guard case .required(let requirement, let existing) = store.evaluate(F.iosOperator()) else {
            Issue.record("expected a requirement")
            return
        }
        #expect(requirement == .roleUpgrade)
        #expect(existing?.deviceId == F.deviceId)
    }

    @Test func moreOperatorScopesThanApprovedIsAScopeUpgrade() throws {
        let store = try F.paired([F.iosOperator(scopes: [PairingScope.read])])
        guard case .required(let requirement, _) = store.evaluate(F.iosOperator(scopes: [PairingScope.read, PairingScope.approvals]))
        else {
            Issue.record("expected a requirement")
            return
        }
        #expect(requirement == .scopeUpgrade)
    }

    @Test func impliedScopesAreNotAnUpgrade() throws {
        let admin = try F.paired([F.iosOperator(scopes: [PairingScope.admin])])
        #expect(isPaired(admin.evaluate(F.iosOperator(scopes: [PairingScope.read, PairingScope.pairing, PairingScope.questions]))))
        let writer = try F.paired([F.iosOperator(scopes: [PairingScope.write])])
        #expect(isPaired(writer.evaluate(F.iosOperator(scopes: [PairingScope.read, PairingScope.talk]))))
        #expect(!isPaired(writer.evaluate(F.iosOperator(scopes: [PairingScope.admin]))))
    }

    @Test func operatorScopesOnANodeConnectAreIgnored() throws {
        let store = try F.paired([F.iosNode()])
        #expect(isPaired(store.evaluate(F.iosNode(scopes: [PairingScope.admin]))))
    }

    @Test func anotherPlatformFamilyIsAMetadataUpgrade() throws {
        let store = try F.paired([F.iosNode()])
        guard case .required(let requirement, _) = store.evaluate(F.iosNode(platform: "Android 15")) else {
            Issue.record("expected a requirement")
            return
        }
        #expect(requirement == .metadataUpgrade)
    }

    @Test func anotherDeviceFamilyIsAMetadataUpgrade() throws {
        let store = try F.paired([F.iosNode()])
        #expect(store.evaluate(F.iosNode(deviceFamily: "iPad")) == .required(.metadataUpgrade, existing: store.pairedDevice(F.deviceId)))
    }

    @Test func metadataIsCheckedBeforeTheRole() throws {
        let store = try F.paired([F.iosNode()])
        guard case .required(let requirement, _) = store.evaluate(F.iosOperator(platform: "Android 15")) else {
            Issue.record("expected a requirement")
            return
        }
        #expect(requirement == .metadataUpgrade)
    }

    @Test func anOSVersionChangeInTheSameFamilyIsRefreshedSilently() throws {
        var store = try F.paired([F.iosNode()])
        let update = F.iosNode(platform: "iOS 18.5.1", displayName: "Ana's new name")
        #expect(isPaired(store.evaluate(update)))
        let recorded = store.recordConnect(update, nowMs: F.t0 + F.minute)
        let refreshed = try #require(recorded)
        #expect(refreshed.platform == "iOS 18.5.1")
        #expect(refreshed.displayName == "Ana's new name")
        #expect(refreshed.lastSeenAtMs == F.t0 + F.minute)
        #expect(refreshed.lastSeenReason == "connect")
    }

    @Test func platformFamiliesAreTheFirstWordWithToleratedAliases() {
        #expect(DeviceMetadataPin.family(of: "iOS 18.4.0") == "ios")
        #expect(DeviceMetadataPin.family(of: "iPadOS 18.1") == "ios")
        #expect(DeviceMetadataPin.family(of: "macOS 15.3.0") == "macos")
        #expect(DeviceMetadataPin.family(of: "darwin") == "macos")
        #expect(DeviceMetadataPin.family(of: "  Android 14 ") == "android")
        #expect(DeviceMetadataPin.family(of: "linux") == "linux")
        #expect(DeviceMetadataPin.family(of: nil) == "")
    }

    @Test func anUnpinnedRecordAcceptsAnyMetadata() throws {
        let store = try F.paired([F.nodeHost()])
        var attempt = F.nodeHost()
        attempt.client.deviceFamily = "Mac"
        #expect(isPaired(store.evaluate(attempt)))
    }

    private func isPaired(_ evaluation: PairingEvaluation) -> Bool {
        if case .paired = evaluation { true } else { false }
    }

    @Test func anAttemptReadsRoleScopesAndClientFromConnectParams() {
        let params = ConnectParams(
            client: ClientInfo(id: .iOS, displayName: "Ana's iPhone", version: "2026.8.1", platform: "iOS 18.4.0",
                               deviceFamily: "iPhone", mode: .ui),
            scopes: [PairingScope.read])
        let attempt = PairingAttempt(params: params, deviceId: F.deviceId, publicKey: F.publicKey, remoteIp: "127.0.0.1",
                                     isLoopback: true, hasBrowserOrigin: false)
        #expect(attempt.role == .operator)
        #expect(attempt.scopes == [PairingScope.read])
        #expect(attempt.client == PairingClientInfo(clientId: .iOS, clientMode: .ui, displayName: "Ana's iPhone",
                                                    platform: "iOS 18.4.0", deviceFamily: "iPhone"))
        #expect(attempt.isLoopback)
    }

    @Test func isPairedAnswersPerRole() throws {
        let store = try F.paired([F.iosNode()])
        #expect(store.isPaired(deviceId: F.deviceId, role: .node))
        #expect(!store.isPaired(deviceId: F.deviceId, role: .operator))
        #expect(!store.isPaired(deviceId: F.secondDeviceId, role: .node))
    }
}
