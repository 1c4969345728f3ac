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
}
