import GatewayProtocol
@testable import MockGateway
import Testing

/// Shared values for the pairing, device-token and bootstrap tests.
enum PairingFixtures {
    /// 2026-01-01T00:00:00Z, the instant of the specification's examples.
    static let t0: Int64 = 1_767_225_600_000
    static let minute: Int64 = 60_000
    static let second: Int64 = 1_000

    /// The device of the specification's test vector (docs/protocol.md §3.12).
    static let deviceId = "56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c"
    static let publicKey = "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg"
    /// The same device id presenting another key (a reinstall with a forged id never happens in
    /// practice; it exercises the key comparison).
    static let otherKey = "B7FHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg"
    static let secondDeviceId = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
    static let secondKey = "C8GHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg"

    static func store(seed: UInt64 = 7) -> PairingStore {
        PairingStore(random: SeededRandom(seed: seed))
    }

    static let iosClient = PairingClientInfo(
        clientId: "openclaw-ios", clientMode: "node", displayName: "Ana's iPhone", platform: "iOS 18.4.0", deviceFamily: "iPhone")

    /// The iOS node connection (docs/protocol.md §3.13).
    static func iosNode(
        deviceId: String = deviceId, publicKey: String = publicKey, scopes: [String] = [], remoteIp: String? = "192.168.1.20",
        isLoopback: Bool = false, platform: String = "iOS 18.4.0", deviceFamily: String = "iPhone", displayName: String = "Ana's iPhone"
    ) -> PairingAttempt {
        PairingAttempt(
            deviceId: deviceId, publicKey: publicKey, role: GatewayRole.node, scopes: scopes,
            client: PairingClientInfo(clientId: "openclaw-ios", clientMode: "node", displayName: displayName, platform: platform, deviceFamily: deviceFamily),
            remoteIp: remoteIp, isLoopback: isLoopback)
    }

    /// The iOS operator connection of the same device.
    static func iosOperator(
        scopes: [String] = [PairingScope.read, PairingScope.write], publicKey: String = publicKey,
        remoteIp: String? = "192.168.1.20", isLoopback: Bool = false, platform: String = "iOS 18.4.0",
        hasBrowserOrigin: Bool = false
    ) -> PairingAttempt {
        PairingAttempt(
            deviceId: deviceId, publicKey: publicKey, role: GatewayRole.operator, scopes: scopes,
            client: PairingClientInfo(clientId: "openclaw-ios", clientMode: "ui", displayName: "Ana's iPhone", platform: platform, deviceFamily: "iPhone"),
            remoteIp: remoteIp, isLoopback: isLoopback, hasBrowserOrigin: hasBrowserOrigin)
    }

    /// The TypeScript node host (`openclaw node run`).
    static func nodeHost(
        deviceId: String = secondDeviceId, publicKey: String = secondKey, scopes: [String] = [], remoteIp: String? = "10.1.2.3",
        isLoopback: Bool = false
    ) -> PairingAttempt {
        PairingAttempt(
            deviceId: deviceId, publicKey: publicKey, role: GatewayRole.node, scopes: scopes,
            client: PairingClientInfo(clientId: "node-host", clientMode: "node", displayName: "build-box", platform: "linux"),
            remoteIp: remoteIp, isLoopback: isLoopback)
    }

    /// Pairs `attempt` through a manual approval and returns the store.
    static func paired(_ attempts: [PairingAttempt], seed: UInt64 = 7, at nowMs: Int64 = t0) throws -> PairingStore {
        var store = store(seed: seed)
        for attempt in attempts {
            let outcome = store.requestPairing(for: attempt, nowMs: nowMs)
            _ = try store.approve(requestId: outcome.request.requestId, nowMs: nowMs)
        }
        return store
    }

    /// The requested/resolved effects only: what goes on the wire.
    static func wireEffects(_ effects: [PairingEffect]) -> [PairingEffect] {
        effects.filter {
            switch $0 {
            case .requested, .resolved: true
            default: false
            }
        }
    }
}

@Suite("Pairing fixtures")
struct PairingFixturesTests {
    @Test func fixtureAttemptsDescribeTheSameDeviceForNodeAndOperator() {
        #expect(PairingFixtures.iosNode().deviceId == PairingFixtures.iosOperator().deviceId)
        #expect(PairingFixtures.iosNode().role == GatewayRole.node)
        #expect(PairingFixtures.iosOperator().role == GatewayRole.operator)
    }
}

/// Operator scope wire strings for the pairing tests.
enum PairingScope {
    static let admin = OperatorScope.admin.rawValue
    static let read = OperatorScope.read.rawValue
    static let write = OperatorScope.write.rawValue
    static let talk = OperatorScope.talk.rawValue
    static let approvals = OperatorScope.approvals.rawValue
    static let pairing = OperatorScope.pairing.rawValue
    static let questions = OperatorScope.questions.rawValue
}
