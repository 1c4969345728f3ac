import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// The node command policy over real sockets (docs/protocol.md §6.7): what an operator's
/// `node.invoke` and the console's `invoke` are refused before anything reaches the node, and the
/// `talk.event` mirror. Breaks tried, each failing the tests named: the dispatch check removed from
/// `nodeInvoke` (every refusal test but the console's), the admin check removed (the
/// execApprovals/admin test), the `talk.event` scope gate set to `operator.write` (the talk test:
/// the reader gets no event).
@Suite("Node command policy on the wire")
struct NodeCommandPolicyWireTests {
    /// An iPhone node declaring `commands` (and `caps`), connected with auto approval.
    static func node(_ gateway: Gateway, byte: UInt8, commands: [String], caps: [String] = []) async throws
        -> (session: ConnectedSession, nodeId: String) {
        let identity = try TestIdentities.make(byte)
        let session = try await TestSessions.connect(gateway, identity: identity) { client in
            var params = client.connectParams()
            params.commands = commands
            params.caps = caps
            return params
        }
        return (session, identity.deviceId)
    }

    static func invoke(_ client: TestClient, nodeId: String, command: String, id: String = "invoke-req") async throws -> ResponseFrame {
        try await client.sendRequest("node.invoke", params: [
            "nodeId": .string(nodeId), "command": .string(command), "idempotencyKey": .string("key-\(command)"),
        ], id: id)
        return try await client.collect(untilResponseTo: id).response
    }

    /// No `node.invoke.request` reached the node (everything sent to it before the barrier's
    /// answer has arrived by then).
    static func expectNothingDelivered(_ node: ConnectedSession) async throws {
        let frames = try await node.client.barrier()
        #expect(TestClient.events("node.invoke.request", in: frames).isEmpty, "nothing reaches the node")
    }

    @Test func undeclaredAndDangerousCommandsAreRefusedBeforeDispatch() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x70), scopes: ["operator.write"])
            let (node, nodeId) = try await Self.node(gateway, byte: 0x71, commands: ["system.which", "device.info", "camera.snap"])

            let notDeclared = try await Self.invoke(writer.client, nodeId: nodeId, command: "location.get")
            #expect(notDeclared.error?.code == "INVALID_REQUEST")
            #expect(notDeclared.error?.details == ["reason": "command not declared by node", "command": "location.get"])
            #expect(notDeclared.error?.message.hasPrefix("node command not allowed: \"location.get\" on node \"\(nodeId)\" (platform: iOS 18.4.0)") == true)

            let dangerous = try await Self.invoke(writer.client, nodeId: nodeId, command: "camera.snap")
            #expect(dangerous.error?.details == ["reason": "command not allowlisted", "command": "camera.snap"])
            #expect(dangerous.error?.message.contains("requires explicit gateway.nodes.commands.allow opt-in") == true)

            let sms = try await Self.invoke(writer.client, nodeId: nodeId, command: "sms.send")
            #expect(sms.error?.details == ["reason": "command not allowlisted", "command": "sms.send"])

            let notOnIOS = try await Self.invoke(writer.client, nodeId: nodeId, command: "system.which")
            #expect(notOnIOS.error?.details?["reason"] == "command not allowlisted", "system.which is not an iOS command")
            try await Self.expectNothingDelivered(node)
        }
    }

    @Test func aDeclaredAllowlistedCommandIsDelivered() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x72), scopes: ["operator.write"])
            let (node, nodeId) = try await Self.node(gateway, byte: 0x73, commands: ["device.info"])
            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeId), "command": "device.info", "idempotencyKey": "k",
            ], id: "invoke-req")
            let request = try await node.client.event("node.invoke.request")
            #expect(request.payload?["command"] == "device.info")
        }
    }

    @Test func allowOptsInAndDenyAlwaysWins() async throws {
        var configuration = GatewayConfiguration(autoApproval: .auto)
        configuration.nodeCommands = NodeCommandPolicy(allow: ["camera.snap", "device.info"], deny: ["device.info"])
        try await Gateway.withGateway(configuration) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x74), scopes: ["operator.write"])
            let (node, nodeId) = try await Self.node(gateway, byte: 0x75, commands: ["device.info", "camera.snap"])

            let denied = try await Self.invoke(writer.client, nodeId: nodeId, command: "device.info")
            #expect(denied.error?.details == ["reason": "command not allowlisted", "command": "device.info"])
            #expect(denied.error?.message.contains("is blocked by gateway.nodes.commands.deny") == true)
            try await Self.expectNothingDelivered(node)

            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeId), "command": "camera.snap", "idempotencyKey": "k",
            ], id: "snap")
            let request = try await node.client.event("node.invoke.request")
            #expect(request.payload?["command"] == "camera.snap", "allow opts in to a dangerous command")

            // Changed at run time (the console's node-commands): the opt-in is gone.
            await gateway.setNodeCommandPolicy(NodeCommandPolicy())
            let again = try await Self.invoke(writer.client, nodeId: nodeId, command: "camera.snap", id: "snap-2")
            #expect(again.error?.details?["reason"] == "command not allowlisted")
        }
    }

    @Test func aNodeWithoutCommandsIsRefused() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x76), scopes: ["operator.write"])
            let (node, nodeId) = try await Self.node(gateway, byte: 0x77, commands: [])
            let refused = try await Self.invoke(writer.client, nodeId: nodeId, command: "device.info")
            #expect(refused.error?.details == ["reason": "node did not declare commands", "command": "device.info"])
            try await Self.expectNothingDelivered(node)
        }
    }

    @Test func execApprovalsAndPrivateControlsAreNeverInvocableAndAdminOnlyNeedsAdmin() async throws {
        var configuration = GatewayConfiguration(autoApproval: .auto)
        configuration.nodeCommands = NodeCommandPolicy(allow: ["system.execApprovals.get", "browser.proxy"])
        try await Gateway.withGateway(configuration) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x78), scopes: ["operator.write"])
            let (node, nodeId) = try await Self.node(gateway, byte: 0x79, commands: ["system.execApprovals.get", "browser.proxy"])

            let approvals = try await Self.invoke(writer.client, nodeId: nodeId, command: "system.execApprovals.get")
            #expect(approvals.error?.code == "INVALID_REQUEST")
            #expect(approvals.error?.message == "node.invoke does not allow system.execApprovals.*; use exec.approvals.node.*")
            #expect(approvals.error?.details == ["command": "system.execApprovals.get"])
            let offline = try await Self.invoke(writer.client, nodeId: "no-such-node", command: "system.execApprovals.set", id: "offline")
            #expect(offline.error?.message == "node.invoke does not allow system.execApprovals.*; use exec.approvals.node.*",
                    "checked before the node is looked up")
            let worker = try await Self.invoke(writer.client, nodeId: nodeId, command: "worker.launch.v1", id: "worker")
            #expect(worker.error?.message == "node.invoke does not allow private node controls")

            let proxy = try await Self.invoke(writer.client, nodeId: nodeId, command: "browser.proxy", id: "proxy")
            #expect(proxy.error?.code == "FORBIDDEN")
            #expect(proxy.error?.details?["missingScope"] == "operator.admin")
            try await Self.expectNothingDelivered(node)

            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x7A), scopes: ["operator.admin"])
            try await admin.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeId), "command": "browser.proxy", "idempotencyKey": "admin-proxy",
            ], id: "admin-proxy")
            let request = try await node.client.event("node.invoke.request")
            #expect(request.payload?["command"] == "browser.proxy",
                    "an administrator passes the scope check, and allow puts browser.proxy on the allowlist")
        }
    }

    @Test func talkPushToTalkIsMirroredAsTalkEventToReaders() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x7B), scopes: ["operator.write"])
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x7C), scopes: ["operator.read"])
            let (node, nodeId) = try await Self.node(gateway, byte: 0x7D, commands: ["talk.ptt.start", "talk.ptt.stop"], caps: ["talk"])

            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeId), "command": "talk.ptt.start", "idempotencyKey": "k1",
            ], id: "start")
            try await node.client.answerNextInvoke(nodeId: nodeId, ok: true,
                                                   payloadJSON: #"{"captureId":"cap-1","status":"listening"}"#)
            #expect(try await writer.client.collect(untilResponseTo: "start").response.ok)

            let event = try await reader.client.event("talk.event")
            #expect(event.payload?["nodeId"]?.stringValue == nodeId)
            #expect(event.payload?["command"] == "talk.ptt.start")
            let talk = try #require(event.payload?["talkEvent"])
            #expect(talk["type"] == "capture.started")
            #expect(talk["sessionId"]?.stringValue == "node:\(nodeId):talk:cap-1")
            #expect(talk["id"]?.stringValue == "node:\(nodeId):talk:cap-1:1")
            #expect(talk["captureId"] == "cap-1")
            #expect(talk["seq"] == 1)
            #expect(talk["final"] == false)
            #expect(talk["mode"] == "stt-tts")
            #expect(talk["transport"] == "managed-room")
            #expect(talk["brain"] == "agent-consult")
            #expect(talk["timestamp"]?.stringValue?.hasSuffix("Z") == true)
            #expect(talk["payload"] == ["nodeId": .string(nodeId), "command": "talk.ptt.start", "status": "listening"])

            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeId), "command": "talk.ptt.stop", "idempotencyKey": "k2",
            ], id: "stop")
            try await node.client.answerNextInvoke(nodeId: nodeId, ok: true,
                                                   payloadJSON: #"{"captureId":"cap-1","transcript":"hello"}"#)
            let stopped = try await reader.client.event("talk.event")
            #expect(stopped.payload?["talkEvent"]?["type"] == "capture.stopped")
            #expect(stopped.payload?["talkEvent"]?["seq"] == 2)
            #expect(stopped.payload?["talkEvent"]?["final"] == true)
            #expect(stopped.payload?["talkEvent"]?["payload"]?["transcript"] == "hello")
            let nodeFrames = try await node.client.barrier()
            #expect(TestClient.events("talk.event", in: nodeFrames).isEmpty, "nodes do not receive talk.event")
        }
    }

    @Test func talkCommandsNeedATalkCapableNode() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x7E), scopes: ["operator.write"])
            let (node, nodeId) = try await Self.node(gateway, byte: 0x7F, commands: ["device.info"])
            let refused = try await Self.invoke(writer.client, nodeId: nodeId, command: "talk.ptt.start")
            #expect(refused.error?.message.contains("requires a trusted Talk-capable node") == true)
            try await Self.expectNothingDelivered(node)
        }
    }

    @Test func healthSummaryIsOptInAndItsNodeErrorPassesThrough() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x80), scopes: ["operator.write"])
            let (first, nodeId) = try await Self.node(gateway, byte: 0x81, commands: ["device.info", "health.summary"])
            let refused = try await Self.invoke(writer.client, nodeId: nodeId, command: "health.summary")
            #expect(refused.error?.details == ["reason": "command not allowlisted", "command": "health.summary"])
            try await Self.expectNothingDelivered(first)

            // The allow takes effect at the node's next connect, which registers the declared
            // commands cut to the allowlist in force then (upstream's `effectiveCommands`); the
            // surface approved at pairing did not hold `health.summary` (it was not allowed), so
            // that connect widens it and the node pairing update must be approved
            // (docs/platforms/ios-healthkit.md: "Approve the resulting node pairing update").
            await gateway.setNodeCommandPolicy(NodeCommandPolicy(allow: ["health.summary"]))
            let notYet = try await Self.invoke(writer.client, nodeId: nodeId, command: "health.summary", id: "not-yet")
            #expect(notYet.error?.details == ["reason": "command not declared by node", "command": "health.summary"])
            _ = try await Self.node(gateway, byte: 0x81, commands: ["device.info", "health.summary"])
            let update = try #require(await gateway.pendingNodeSurfaceRequests().first)
            #expect(update.commands == ["device.info", "health.summary"])
            _ = await gateway.approveNodeSurface(requestId: update.requestId)
            let (node, _) = try await Self.node(gateway, byte: 0x81, commands: ["device.info", "health.summary"])
            try await writer.client.sendRequest("node.invoke", params: [
                "nodeId": .string(nodeId), "command": "health.summary", "params": ["period": "today"], "idempotencyKey": "h",
            ], id: "health")
            try await node.client.answerNextInvoke(nodeId: nodeId, ok: false,
                                                   error: NodeInvokeError(code: "HEALTH_ACCESS_DISABLED", message: "Health summaries are turned off"))
            let answer = try await writer.client.collect(untilResponseTo: "health").response
            #expect(answer.error?.code == "UNAVAILABLE")
            #expect(answer.error?.details?["nodeError"]?["code"] == "HEALTH_ACCESS_DISABLED")
        }
    }

    @Test func theConsoleInvokeObeysThePolicyAndForceSaysSoInTheTranscript() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let console = GatewayConsole(gateway: gateway, invokeWait: .seconds(10))
            let (node, nodeId) = try await Self.node(gateway, byte: 0x82, commands: ["system.which", "device.info"])
            let refused = await console.handle("invoke latest camera.snap")?.errorMessage
            #expect(refused?.contains("node command not allowed: \"camera.snap\"") == true)
            #expect(refused?.contains("command not allowlisted") == true)
            #expect(refused?.contains("--force") == true)
            try await Self.expectNothingDelivered(node)

            async let forced = console.handle("invoke --force latest camera.snap")
            let (request, _) = try await node.client.answerNextInvoke(
                nodeId: nodeId, ok: false, error: NodeInvokeError(code: "INVALID_REQUEST", message: "unknown command"))
            #expect(request.command == "camera.snap")
            #expect(await forced?.errorMessage == nil)
            let actions = gateway.transcript.entries.filter { $0.kind == .operatorAction }.map(\.text)
            #expect(actions.contains { ($0 ?? "").hasPrefix("invoke --force camera.snap on \(nodeId): node command policy bypassed") })

            let policy = await console.handle("node-commands allow camera.snap")
            guard case .nodeCommandPolicy(let shown)? = policy?.result else {
                Issue.record("node-commands did not show the policy: \(String(describing: policy))")
                return
            }
            #expect(shown.allow == ["camera.snap"])
            #expect(await gateway.nodeCommandRefusal(nodeId: nodeId, command: "camera.snap")?.details?["reason"]
                == "command not declared by node", "allowed now, but this node does not declare it")
            _ = await console.handle("node-commands deny device.info")
            #expect(await gateway.nodeCommandPolicy() == NodeCommandPolicy(allow: ["camera.snap"], deny: ["device.info"]))
            _ = await console.handle("node-commands reset")
            #expect(await gateway.nodeCommandPolicy() == NodeCommandPolicy())
        }
    }
}
