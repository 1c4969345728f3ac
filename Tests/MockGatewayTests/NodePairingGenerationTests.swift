import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// The node pairing generation (``NodePairingGeneration``) that keys the beacon throttle and a
/// node connection's currency, and the `node.presence` broadcast of `node.presence.activity`:
/// the pure rules, then both over real sockets.
@Suite struct NodePairingGenerationTests {
    static func device(key: String = "pk-1", createdAtMs: Int64 = 100, approvedAtMs: Int64 = 200,
                       roles: [GatewayRole] = [.node], surface: NodeSurfaceApproval? = NodeSurfaceApproval(createdAtMs: 200, approvedAtMs: 200))
        -> PairedDevice {
        PairedDevice(deviceId: "dev", publicKey: key, roles: roles, scopes: [], createdAtMs: createdAtMs,
                     approvedAtMs: approvedAtMs, approvedVia: .manual, nodeSurface: surface)
    }

    static func token(_ value: String = "tok-1", role: GatewayRole = .node, revokedAtMs: Int64? = nil) -> DeviceToken {
        DeviceToken(token: value, role: role, scopes: [], createdAtMs: 150, revokedAtMs: revokedAtMs)
    }

    // MARK: - The rule

    @Test func theKeyChangesWithEveryNodeOwnedPairingFact() throws {
        let base = try #require(NodePairingGeneration.key(device: Self.device(), nodeToken: Self.token()))
        #expect(base.count == 64 && base.allSatisfy(\.isHexDigit), "a SHA-256 hex digest, as upstream")
        #expect(NodePairingGeneration.key(device: Self.device(), nodeToken: Self.token()) == base, "a pure function")
        let changed: [(String, String?)] = [
            ("a new public key", NodePairingGeneration.key(device: Self.device(key: "pk-2"), nodeToken: Self.token())),
            ("a record created anew", NodePairingGeneration.key(device: Self.device(createdAtMs: 101), nodeToken: Self.token())),
            ("a re-issued node token", NodePairingGeneration.key(device: Self.device(), nodeToken: Self.token("tok-2"))),
            ("a new approval of the node role", NodePairingGeneration.key(
                device: Self.device(surface: NodeSurfaceApproval(createdAtMs: 200, approvedAtMs: 900)), nodeToken: Self.token())),
            ("a surface created anew", NodePairingGeneration.key(
                device: Self.device(surface: NodeSurfaceApproval(createdAtMs: 201, approvedAtMs: 200)), nodeToken: Self.token())),
        ]
        for (what, key) in changed {
            #expect(key != nil && key != base, "\(what) starts a new generation")
        }
        // Device-wide approval time alone (an operator upgrade) leaves node work valid.
        #expect(NodePairingGeneration.key(device: Self.device(approvedAtMs: 5_000), nodeToken: Self.token()) == base)
    }

    @Test func thereIsNoGenerationWithoutAnEffectiveNodePairing() {
        #expect(NodePairingGeneration.key(device: nil, nodeToken: Self.token()) == nil)
        #expect(NodePairingGeneration.key(device: Self.device(), nodeToken: nil) == nil, "no node token")
        #expect(NodePairingGeneration.key(device: Self.device(), nodeToken: Self.token(revokedAtMs: 300)) == nil, "a revoked token")
        #expect(NodePairingGeneration.key(device: Self.device(), nodeToken: Self.token(role: .operator)) == nil)
        #expect(NodePairingGeneration.key(device: Self.device(roles: [.operator]), nodeToken: Self.token()) == nil, "no node role")
        #expect(NodePairingGeneration.key(device: Self.device(surface: nil), nodeToken: Self.token()) == nil, "no node surface")
    }

    @Test func approvalsDateTheNodeSurfaceOnlyWhenTheyGrantTheNodeRole() throws {
        var store = PairingFixtures.store()
        let asOperator = store.requestPairing(for: PairingFixtures.iosOperator(), nowMs: 1_000)
        let operatorOnly = try store.approve(requestId: asOperator.request.requestId, nowMs: 1_000)
        #expect(operatorOnly.device.nodeSurface == nil)
        let asNode = store.requestPairing(for: PairingFixtures.iosNode(), nowMs: 2_000)
        let node = try store.approve(requestId: asNode.request.requestId, nowMs: 2_000)
        #expect(node.device.nodeSurface == NodeSurfaceApproval(createdAtMs: 2_000, approvedAtMs: 2_000))
        #expect(node.device.createdAtMs == 1_000, "the record itself is the one created first")
        _ = store.grantHelloAuth(deviceId: PairingFixtures.deviceId, role: .node, scopes: [], nowMs: 2_000)
        let generation = try #require(store.nodePairingGeneration(deviceId: PairingFixtures.deviceId))

        // An operator upgrade later leaves the node generation alone...
        let upgrade = store.requestPairing(for: PairingFixtures.iosOperator(scopes: [PairingScope.read, PairingScope.write, "operator.approvals"]),
                                           nowMs: 3_000)
        _ = try store.approve(requestId: upgrade.request.requestId, nowMs: 3_000)
        #expect(store.nodePairingGeneration(deviceId: PairingFixtures.deviceId) == generation)
        // ...and removing the device ends it.
        _ = try store.remove(deviceId: PairingFixtures.deviceId, nowMs: 4_000)
        #expect(store.nodePairingGeneration(deviceId: PairingFixtures.deviceId) == nil)
    }

    // MARK: - node.presence from node.presence.activity

    @Test func activityKeepsTheLastActiveTimeMonotonic() {
        let first = NodeActivity.updated(nil, idleSeconds: 30, saturated: false, nowMs: 100_000)
        #expect(first.lastActiveAtMs == 70_000 && first.reportedAtMs == 100_000)
        #expect(first.presencePayload(nodeId: "mac") == ["nodeId": "mac", "lastActiveAtMs": 70_000, "presenceUpdatedAtMs": 100_000])
        // An older input reported later never moves the last-active time back.
        let stale = NodeActivity.updated(first, idleSeconds: 50, saturated: false, nowMs: 110_000)
        #expect(stale.lastActiveAtMs == 70_000 && stale.reportedAtMs == 110_000)
        let fresh = NodeActivity.updated(first, idleSeconds: 1, saturated: false, nowMs: 120_000)
        #expect(fresh.lastActiveAtMs == 119_000)
        // A saturated counter says only "at least this long": the known time stays.
        let saturated = NodeActivity.updated(fresh, idleSeconds: 0, saturated: true, nowMs: 130_000)
        #expect(saturated.lastActiveAtMs == 119_000 && saturated.reportedAtMs == 130_000)
        #expect(NodeActivity.updated(nil, idleSeconds: 2_592_000, saturated: true, nowMs: 5_000).lastActiveAtMs == 0, "never below 0")
        #expect(NodeActivity.clearedPresencePayload(nodeId: "mac") == ["nodeId": "mac", "lastActiveAtMs": .null, "presenceUpdatedAtMs": .null])
    }

    @Test func activityBroadcastsNodePresenceToReadersAndBeaconsBroadcastNothing() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto, clock: .manual(startMs: 500_000))) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE2), scopes: ["operator.read"])
            let pairer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE3), scopes: ["operator.pairing"])
            #expect(reader.hello.features.events.contains("node.presence"))
            let mac = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xE4))
            var params = mac.connectParams()
            params.permissions = ["accessibility": true]
            #expect(try await mac.connect(params).ok)
            let nodeId = mac.identity.deviceId
            _ = try await reader.client.barrier()
            _ = try await pairer.client.barrier()
            func send(_ event: String, _ payload: String) async throws -> String? {
                try await mac.request("node.event", params: ["event": .string(event), "payloadJSON": .string(payload)]).payload?["reason"]?.stringValue
            }

            #expect(try await send("node.presence.alive", #"{"trigger":"manual"}"#) == "persisted")
            #expect(try await send("node.presence.activity", #"{"action":"clear"}"#) == "already_clear")
            let quiet = try await reader.client.barrier()
            #expect(TestClient.events("node.presence", in: quiet).isEmpty, "neither a beacon nor an already-clear broadcasts")
            #expect(TestClient.events("presence", in: quiet).isEmpty, "a beacon does not change system presence")

            #expect(try await send("node.presence.activity", #"{"idleSeconds":20}"#) == "updated")
            let update = try await reader.client.event("node.presence")
            #expect(update.payload == ["nodeId": .string(nodeId), "lastActiveAtMs": 480_000, "presenceUpdatedAtMs": 500_000])
            #expect(try await send("node.presence.activity", #"{"action":"clear"}"#) == "cleared")
            let cleared = try await reader.client.event("node.presence")
            #expect(cleared.payload == ["nodeId": .string(nodeId), "lastActiveAtMs": .null, "presenceUpdatedAtMs": .null])
            #expect(TestClient.events("node.presence", in: try await pairer.client.barrier()).isEmpty, "node.presence needs operator.read")
        }
    }

    // MARK: - The generation on the wire

    /// Removed and paired again inside the 60 s throttle window: a new pairing generation, so a
    /// new window. With no clock movement at all (0 s) only the re-issued node token tells the
    /// pairings apart.
    @Test(arguments: [0, 5])
    func aRepairedDeviceGetsANewGenerationAndItsFirstBeaconPersists(secondsLater: Int) async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xE5)
            let beacon: JSONValue = ["event": "node.presence.alive", "payloadJSON": #"{"trigger":"silent_push"}"#]
            let first = try await TestClient.open(gateway.url, identity: identity)
            #expect(try await first.connect(first.connectParams()).ok)
            #expect(try await first.request("node.event", params: beacon).payload?["reason"] == "persisted")
            #expect(try await first.request("node.event", params: beacon).payload?["reason"] == "throttled")

            try await gateway.removeDevice(identity.deviceId)
            _ = try await first.closed()
            if secondsLater > 0 { await gateway.advance(by: .seconds(secondsLater)) }
            let second = try await TestClient.open(gateway.url, identity: identity)
            #expect(try await second.connect(second.connectParams()).ok)
            #expect(try await second.request("node.event", params: beacon).payload?["reason"] == "persisted")
            #expect(try await second.request("node.event", params: beacon).payload?["reason"] == "throttled")
        }
    }

    @Test func aRotatedNodeTokenStartsANewGenerationAndTheOldConnectionIsStale() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xE6)
            let beacon: JSONValue = ["event": "node.presence.alive", "payloadJSON": #"{"trigger":"background"}"#]
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            #expect(try await node.client.request("node.event", params: beacon).payload?["reason"] == "persisted")

            let rotated = try await gateway.rotateToken(deviceId: identity.deviceId, role: "node")
            _ = try await node.client.closed()
            let back = try await TestSessions.connect(gateway, identity: identity) { $0.connectParams(deviceToken: rotated) }
            let reply = try await back.client.request("node.event", params: beacon)
            #expect(reply.payload?["reason"] == "persisted", "a new node token is a new pairing generation")
        }
    }
}
