import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// Surface approval over real sockets (docs/protocol.md §6.7). Breaks tried: registering the
/// declared commands whatever the reconciliation says (`reconcileNodeSurface` returning
/// `declared`) fails the pending-approval refusal and the `node.describe` check; dropping the
/// `node.pair.requested` broadcast fails the event check.
@Suite("Node surface approval on the wire")
struct NodeSurfaceApprovalWireTests {
    @Test func aWidenedSurfaceWaitsForApprovalAndTheApprovedOneKeepsServing() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x90),
                                                               scopes: ["operator.write", "operator.pairing"])
            let (first, nodeId) = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x91, commands: ["device.info"])
            _ = try await admin.client.barrier()
            let (node, _) = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x91, commands: ["device.info", "location.get"])
            _ = first

            let frames = try await admin.client.barrier()
            let requested = TestClient.events("node.pair.requested", in: frames)
            #expect(requested.count == 1)
            let requestId = try #require(requested.first?.payload?["requestId"]?.stringValue)
            #expect(requested.first?.payload?["nodeId"]?.stringValue == nodeId)
            #expect(requested.first?.payload?["commands"] == ["device.info", "location.get"])

            let pending = try await NodeCommandPolicyWireTests.invoke(admin.client, nodeId: nodeId, command: "location.get")
            #expect(pending.error?.details == ["reason": "command not declared by node", "command": "location.get"])
            #expect(pending.error?.message.contains("is pending approval") == true)
            try await NodeCommandPolicyWireTests.expectNothingDelivered(node)

            try await admin.client.sendRequest("node.describe", params: ["nodeId": .string(nodeId)], id: "describe-1")
            let described = try await admin.client.collect(untilResponseTo: "describe-1").response
            #expect(described.payload?["commands"] == ["device.info"])

            try await admin.client.sendRequest("node.pair.list", params: [:], id: "list-1")
            let list = try await admin.client.collect(untilResponseTo: "list-1").response
            #expect(list.payload?["pending"]?.arrayValue?.compactMap { $0["requestId"]?.stringValue } == [requestId])

            try await admin.client.sendRequest("node.pair.approve", params: ["requestId": "nope"], id: "approve-0")
            let unknown = try await admin.client.collect(untilResponseTo: "approve-0").response
            #expect(unknown.error?.code == "INVALID_REQUEST")
            #expect(unknown.error?.message == "unknown requestId")

            try await admin.client.sendRequest("node.pair.approve", params: ["requestId": .string(requestId)], id: "approve-1")
            let approved = try await admin.client.collect(untilResponseTo: "approve-1")
            #expect(approved.response.payload?["node"]?["commands"] == ["device.info", "location.get"])
            let resolvedFrames = try await admin.client.barrier()
            let resolved = TestClient.events("node.pair.resolved", in: approved.before + resolvedFrames)
            #expect(resolved.first?.payload?["decision"] == "approved")

            _ = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x91, commands: ["device.info", "location.get"])
            try await admin.client.sendRequest("node.describe", params: ["nodeId": .string(nodeId)], id: "describe-2")
            let after = try await admin.client.collect(untilResponseTo: "describe-2").response
            #expect(after.payload?["commands"] == ["device.info", "location.get"])
            _ = node
        }
    }

    /// A widened surface that adds `system.run` needs `operator.admin` to approve: an operator
    /// with `operator.write` and `operator.pairing` is refused with `missing scope: operator.admin`
    /// and the request stays pending; an admin's approval then succeeds. (Tried: letting
    /// `operator.write` approve a `system.run` surface in `NodeState.handle(.surfaceApprove…)`
    /// fails the refusal and the still-pending check.)
    @Test func aSurfaceAddingSystemRunNeedsAnAdminToApprove() async throws {
        var configuration = GatewayConfiguration(autoApproval: .auto)
        configuration.nodeCommands = NodeCommandPolicy(allow: ["system.run"])
        try await Gateway.withGateway(configuration) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA0),
                                                                scopes: ["operator.write", "operator.pairing"])
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA1),
                                                               scopes: ["operator.admin"])
            let (first, nodeId) = try await NodeCommandPolicyWireTests.node(gateway, byte: 0xA2, commands: ["device.info"])
            _ = try await writer.client.barrier()
            let (node, _) = try await NodeCommandPolicyWireTests.node(gateway, byte: 0xA2, commands: ["device.info", "system.run"])
            _ = first
            let requested = TestClient.events("node.pair.requested", in: try await writer.client.barrier())
            let requestId = try #require(requested.first?.payload?["requestId"]?.stringValue)
            #expect(requested.first?.payload?["nodeId"]?.stringValue == nodeId)
            #expect(requested.first?.payload?["commands"] == ["device.info", "system.run"])

            try await writer.client.sendRequest("node.pair.approve", params: ["requestId": .string(requestId)], id: "approve-w")
            let refused = try await writer.client.collect(untilResponseTo: "approve-w").response
            #expect(refused.error?.code == "INVALID_REQUEST")
            #expect(refused.error?.message == "missing scope: operator.admin")
            try await writer.client.sendRequest("node.pair.list", params: [:], id: "list-w")
            let list = try await writer.client.collect(untilResponseTo: "list-w").response
            #expect(list.payload?["pending"]?.arrayValue?.compactMap { $0["requestId"]?.stringValue } == [requestId])

            try await admin.client.sendRequest("node.pair.approve", params: ["requestId": .string(requestId)], id: "approve-a")
            let approved = try await admin.client.collect(untilResponseTo: "approve-a").response
            #expect(approved.payload?["node"]?["commands"] == ["device.info", "system.run"])
            _ = node
        }
    }

    /// The console's `approve` with no argument approves the only pending node pairing request
    /// (tried: the spec without the node branch fails: "no pending pairing request").
    @Test func theConsoleApprovesANodePairingRequest() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let console = GatewayConsole(gateway: gateway)
            _ = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x92, commands: ["device.info"])
            let (_, nodeId) = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x92, commands: ["device.info", "location.get"])
            let pending = await gateway.pendingNodeSurfaceRequests()
            #expect(pending.count == 1)
            let reply = try #require(await console.handle("approve"))
            guard case .nodeSurfaceApproved(let requestId, let approvedNode, let commands)? = reply.result else {
                Issue.record("approve did not approve the node request: \(reply.errorMessage ?? "no result")")
                return
            }
            #expect(requestId == pending.first?.requestId)
            #expect(approvedNode == nodeId)
            #expect(commands == ["device.info", "location.get"])
            #expect(await gateway.pendingNodeSurfaceRequests().isEmpty)
        }
    }
    /// A node that reconnects declaring yet another widened surface while one waits supersedes it
    /// (upstream `broadcastNodePairingResult`): `node.pair.resolved` `rejected` for the old id,
    /// then `node.pair.requested` with a new id; `node.pair.list` shows only the new one and the old
    /// id is unknown to `node.pair.approve`. Back within the approved surface, the request is
    /// cleared with `node.pair.resolved` `rejected`. Tried breaks: reusing the waiting request
    /// (the rule before) fails the event and list checks; dropping the `rejected` broadcast fails
    /// the resolved checks.
    @Test func anotherWidenedSurfaceSupersedesTheWaitingRequest() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x93),
                                                               scopes: ["operator.write", "operator.pairing"])
            _ = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x94, commands: ["device.info"])
            _ = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x94, commands: ["device.info", "location.get"])
            let first = try #require(TestClient.events("node.pair.requested", in: try await admin.client.barrier()).first)
            let firstId = try #require(first.payload?["requestId"]?.stringValue)

            // The same surface again: the request stays, nothing is announced.
            _ = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x94, commands: ["location.get", "device.info"])
            let quiet = try await admin.client.barrier()
            #expect(TestClient.events("node.pair.requested", in: quiet).isEmpty)
            #expect(TestClient.events("node.pair.resolved", in: quiet).isEmpty)

            let (_, nodeId) = try await NodeCommandPolicyWireTests.node(
                gateway, byte: 0x94, commands: ["device.info", "location.get", "contacts.search"])
            let frames = try await admin.client.barrier()
            let resolved = TestClient.events("node.pair.resolved", in: frames)
            let requested = TestClient.events("node.pair.requested", in: frames)
            #expect(resolved.count == 1 && requested.count == 1)
            #expect(resolved.first?.payload?["requestId"]?.stringValue == firstId)
            #expect(resolved.first?.payload?["nodeId"]?.stringValue == nodeId)
            #expect(resolved.first?.payload?["decision"] == "rejected")
            let secondId = try #require(requested.first?.payload?["requestId"]?.stringValue)
            #expect(secondId != firstId)
            #expect(requested.first?.payload?["commands"] == ["device.info", "location.get", "contacts.search"])
            let order = TestClient.eventNames(frames).filter { $0.hasPrefix("node.pair.") }
            #expect(order == ["node.pair.resolved", "node.pair.requested"], "the superseded id is resolved first")

            try await admin.client.sendRequest("node.pair.list", params: [:], id: "list-s")
            let list = try await admin.client.collect(untilResponseTo: "list-s").response
            #expect(list.payload?["pending"]?.arrayValue?.compactMap { $0["requestId"]?.stringValue } == [secondId])
            try await admin.client.sendRequest("node.pair.approve", params: ["requestId": .string(firstId)], id: "approve-old")
            let old = try await admin.client.collect(untilResponseTo: "approve-old").response
            #expect(old.error?.message == "unknown requestId")

            _ = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x94, commands: ["device.info"])
            let cleared = TestClient.events("node.pair.resolved", in: try await admin.client.barrier())
            #expect(cleared.map { $0.payload?["requestId"]?.stringValue } == [secondId])
            #expect(cleared.first?.payload?["decision"] == "rejected")
            #expect(await gateway.pendingNodeSurfaceRequests().isEmpty)
        }
    }

    /// The console's `reject` with no argument rejects the only pending node pairing request; the
    /// node keeps its approved surface and operators read `node.pair.resolved` `rejected`
    /// (tried: the spec without the node branch fails: "no pending pairing request").
    @Test func theConsoleRejectsANodePairingRequest() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let console = GatewayConsole(gateway: gateway)
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x95),
                                                               scopes: ["operator.write", "operator.pairing"])
            _ = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x96, commands: ["device.info"])
            let (_, nodeId) = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x96, commands: ["device.info", "location.get"])
            let pending = await gateway.pendingNodeSurfaceRequests()
            #expect(pending.count == 1)
            _ = try await admin.client.barrier()
            let reply = try #require(await console.handle("reject"))
            guard case .nodeSurfaceRejected(let requestId, let rejectedNode, let commands)? = reply.result else {
                Issue.record("reject did not reject the node request: \(reply.errorMessage ?? "no result")")
                return
            }
            #expect(requestId == pending.first?.requestId)
            #expect(rejectedNode == nodeId)
            #expect(commands == ["device.info", "location.get"])
            #expect(await gateway.pendingNodeSurfaceRequests().isEmpty)
            let resolved = TestClient.events("node.pair.resolved", in: try await admin.client.barrier())
            #expect(resolved.first?.payload?["requestId"]?.stringValue == requestId)
            #expect(resolved.first?.payload?["decision"] == "rejected")
            try await admin.client.sendRequest("node.describe", params: ["nodeId": .string(nodeId)], id: "describe-r")
            let described = try await admin.client.collect(untilResponseTo: "describe-r").response
            #expect(described.payload?["commands"] == ["device.info"])
        }
    }

    /// A node with nothing pending is registered with its declared commands cut to its allowlist,
    /// as upstream registers `effectiveCommands` (`node-connect-reconcile.ts@16affee3`); so
    /// `node.list` and `node.describe` leave out what the policy would refuse (an iPhone's
    /// `sms.send`, dangerous `camera.snap`, macOS-only `canvas.present`). Break tried: registering
    /// the raw declared list when nothing waits (`reconcileNodeSurface` returning `declared`
    /// without a pending request) fails both checks.
    @Test func aNodeWithNothingPendingShowsOnlyItsAllowedCommands() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x9A),
                                                               scopes: ["operator.read"])
            let (node, nodeId) = try await NodeCommandPolicyWireTests.node(
                gateway, byte: 0x9B, commands: ["device.info", "sms.send", "camera.snap", "canvas.present"])
            #expect(await gateway.pendingNodeSurfaceRequests().isEmpty)

            try await admin.client.sendRequest("node.describe", params: ["nodeId": .string(nodeId)], id: "describe-e")
            let described = try await admin.client.collect(untilResponseTo: "describe-e").response
            #expect(described.payload?["commands"] == ["device.info"])

            try await admin.client.sendRequest("node.list", params: [:], id: "list-e")
            let listed = try await admin.client.collect(untilResponseTo: "list-e").response
            let entry = listed.payload?["nodes"]?.arrayValue?.first { $0["nodeId"]?.stringValue == nodeId }
            #expect(entry?["commands"] == ["device.info"])
            _ = node
        }
    }

    /// Upstream's per-node reapproval limit (`createNodeReapprovalCoordinator`, the auth rate
    /// limits in scope `node-reapproval`, never loopback-exempt): every node pairing request a
    /// widened surface opens counts; once the limit is reached, a further widening is admitted
    /// with the approved commands in effect but opens nothing and leaves the waiting request as
    /// it is; a reconnect with the waiting surface still reuses it; after the lockout a widening
    /// opens a request again. Break tried: `mayOpenRequest` always `true` fails the
    /// "nothing opens" checks.
    @Test func theReapprovalLimitStopsNewRequestsButKeepsTheWaitingOne() async throws {
        var configuration = GatewayConfiguration(autoApproval: .auto)
        configuration.authRateLimit = AuthRateLimitConfiguration(maxAttempts: 2, windowMs: 60_000, lockoutMs: 60_000)
        try await Gateway.withGateway(configuration) { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x9C),
                                                               scopes: ["operator.write", "operator.pairing"])
            var sessions: [Any] = []
            func connect(_ commands: [String]) async throws -> String {
                let (node, nodeId) = try await NodeCommandPolicyWireTests.node(gateway, byte: 0x9D, commands: commands)
                sessions.append(node)
                return nodeId
            }
            let nodeId = try await connect(["device.info"])
            _ = try await connect(["device.info", "location.get"])
            _ = try await connect(["device.info", "location.get", "contacts.search"])
            let second = try #require(await gateway.pendingNodeSurfaceRequests().first)
            #expect(second.commands == ["device.info", "location.get", "contacts.search"])
            _ = try await admin.client.barrier()

            // Two requests opened: the limit is reached.
            _ = try await connect(["device.info", "reminders.list"])
            let frames = try await admin.client.barrier()
            #expect(TestClient.events("node.pair.requested", in: frames).isEmpty, "no request opens over the limit")
            #expect(TestClient.events("node.pair.resolved", in: frames).isEmpty, "the waiting request is not superseded")
            #expect(await gateway.pendingNodeSurfaceRequests().map(\.requestId) == [second.requestId])
            try await admin.client.sendRequest("node.describe", params: ["nodeId": .string(nodeId)], id: "describe-l")
            let described = try await admin.client.collect(untilResponseTo: "describe-l").response
            #expect(described.payload?["commands"] == ["device.info"], "the approved commands stay in effect")

            // The waiting surface is reused, which the limit does not count.
            _ = try await connect(["device.info", "location.get", "contacts.search"])
            #expect(await gateway.pendingNodeSurfaceRequests().map(\.requestId) == [second.requestId])

            // After the lockout a widening opens a request again.
            await gateway.advance(by: .seconds(61))
            _ = try await connect(["device.info", "reminders.list"])
            let reopened = try await admin.client.barrier()
            #expect(TestClient.events("node.pair.requested", in: reopened).count == 1)
            #expect(await gateway.pendingNodeSurfaceRequests().first?.commands == ["device.info", "reminders.list"])
            _ = sessions
        }
    }
}
