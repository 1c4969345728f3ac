import GatewayProtocol
import Testing
@testable import MockGateway

/// Restart, suspend and closing drains (`GatewayDrain`) and the queue of foreground actions
/// (`PendingActionQueue`): the pure rules, then the wire.
@Suite("Drains and pending foreground actions")
struct DrainAndPendingActionTests {
    // MARK: - Drain rules

    @Test("each drain refuses with its reason, retryable, retryAfterMs 1000 and the method in details")
    func drainRefusals() {
        let expected: [(GatewayDrain, String, String, JSONValue?)] = [
            (.restarting, "gateway-restarting", "node.event unavailable during gateway restart", "accepting"),
            (.suspending, "gateway-suspending", "node.event unavailable during gateway suspension", "draining"),
            (.closing, "gateway-closing", "node.event unavailable while the gateway closes", nil),
        ]
        for (drain, reason, message, phase) in expected {
            let error = drain.refusal(method: "node.event")
            #expect(error.code == "UNAVAILABLE")
            #expect(error.message == message)
            #expect(error.retryable == true)
            #expect(error.retryAfterMs == 1_000)
            #expect(error.details?["reason"]?.stringValue == reason)
            #expect(error.details?["method"] == "node.event")
            #expect(error.details?["phase"] == phase)
            #expect(GatewayDrain.isDrainRefusal(error))
        }
        #expect(!GatewayDrain.isDrainRefusal(ErrorShape(code: "UNAVAILABLE", message: "gateway starting",
                                                         details: ["reason": "startup-sidecars"])))
    }

    @Test("continuations of admitted work pass a drain; new work does not")
    func drainAdmission() {
        for drain in GatewayDrain.allCases {
            #expect(drain.admits(method: "node.invoke.result"))
            #expect(drain.admits(method: "approval.resolve"))
            #expect(drain.admits(method: "question.resolve"))
            #expect(!drain.admits(method: "node.event"))
            #expect(!drain.admits(method: "node.invoke"))
            #expect(!drain.admits(method: "question.list"))
        }
    }

    @Test("drains are named by state, verb or reason")
    func drainNames() {
        #expect(GatewayDrain(name: "restart") == .restarting)
        #expect(GatewayDrain(name: "gateway-suspending") == .suspending)
        #expect(GatewayDrain(name: "closing") == .closing)
        #expect(GatewayDrain(name: "off") == nil)
    }

    // MARK: - Pending action rules

    @Test("only an iOS/iPadOS node's background refusal of a foreground command is queued")
    func queueingRule() {
        #expect(PendingActionQueue.shouldQueue(platform: "iOS 18.4.0", command: "camera.snap",
                                               errorCode: "NODE_BACKGROUND_UNAVAILABLE", errorMessage: nil))
        #expect(PendingActionQueue.shouldQueue(platform: "iPadOS 18", command: "screen.record",
                                               errorCode: "UNAVAILABLE", errorMessage: "NODE_BACKGROUND_UNAVAILABLE: foreground needed"))
        #expect(!PendingActionQueue.shouldQueue(platform: "android", command: "camera.snap",
                                                errorCode: "NODE_BACKGROUND_UNAVAILABLE", errorMessage: nil))
        #expect(!PendingActionQueue.shouldQueue(platform: "iOS 18.4.0", command: "device.info",
                                                errorCode: "NODE_BACKGROUND_UNAVAILABLE", errorMessage: nil))
        #expect(!PendingActionQueue.shouldQueue(platform: "iOS 18.4.0", command: "camera.snap",
                                                errorCode: "INVALID_REQUEST", errorMessage: "bad params"))
    }

    @Test("a repeated idempotency key returns the queued entry; entries expire after 10 minutes; at most 64 per node")
    func queueBounds() {
        var queue = PendingActionQueue()
        var counter = 0
        func nextId() -> String { counter += 1; return "a\(counter)" }
        let first = queue.enqueue(nodeId: "n", command: "camera.snap", paramsJSON: "{}", idempotencyKey: "k", nowMs: 0, newId: nextId)
        let again = queue.enqueue(nodeId: "n", command: "camera.snap", paramsJSON: "{}", idempotencyKey: "k", nowMs: 5, newId: nextId)
        #expect(first == again)
        #expect(queue.live(nodeId: "n", nowMs: PendingActionQueue.ttlMs).count == 1)
        #expect(queue.live(nodeId: "n", nowMs: PendingActionQueue.ttlMs + 1).isEmpty)
        for index in 0..<70 {
            _ = queue.enqueue(nodeId: "n", command: "camera.snap", paramsJSON: nil, idempotencyKey: "k\(index)", nowMs: 1_000_000, newId: nextId)
        }
        let live = queue.live(nodeId: "n", nowMs: 1_000_000)
        #expect(live.count == PendingActionQueue.maximumPerNode)
        #expect(live.first?.idempotencyKey == "k6", "the oldest entries go first")
    }

    @Test("pull lists only still-allowed commands; ack echoes the trimmed unique ids and counts the rest")
    func pullAndAck() {
        var queue = PendingActionQueue()
        var counter = 0
        func nextId() -> String { counter += 1; return "a\(counter)" }
        _ = queue.enqueue(nodeId: "n", command: "camera.snap", paramsJSON: nil, idempotencyKey: "1", nowMs: 0, newId: nextId)
        _ = queue.enqueue(nodeId: "n", command: "screen.record", paramsJSON: nil, idempotencyKey: "2", nowMs: 0, newId: nextId)
        _ = queue.enqueue(nodeId: "n", command: "canvas.present", paramsJSON: nil, idempotencyKey: "3", nowMs: 0, newId: nextId)
        let allowed: Set<String> = ["camera.snap", "canvas.present"]
        let pulled = queue.pull(nodeId: "n", nowMs: 1) { allowed.contains($0) }
        #expect(pulled.map(\.id) == ["a1", "a3"])
        #expect(pulled.first?.pullJSON == ["id": "a1", "command": "camera.snap", "paramsJSON": .null, "enqueuedAtMs": 0])
        let (acked, remaining) = queue.ack(nodeId: "n", ids: [" a1 ", "a1", "", "zz"], nowMs: 2)
        #expect(acked == ["a1", "zz"])
        #expect(remaining == 1)
    }

    // MARK: - On the wire

    @Test func aDrainRefusesRequestsUntilItEndsAndKeepsTheSession() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0x61))
            await gateway.beginDrain(.suspending)
            #expect(await gateway.currentDrain() == .suspending)
            let refused = try await node.client.request("node.pending.pull", params: nil)
            #expect(refused.error?.code == "UNAVAILABLE")
            #expect(refused.error?.details?["reason"] == "gateway-suspending")
            #expect(refused.error?.retryAfterMs == 1_000)
            let late = try await node.client.request("node.invoke.result", params: ["id": "x", "nodeId": "y", "ok": true])
            #expect(late.error?.details?["reason"] == nil, "a result is a continuation and passes the drain")
            await gateway.endDrain()
            #expect(try await node.client.request("node.pending.pull", params: nil).ok)
        }
    }

    /// An iOS node that declares `camera.snap` (opted in by the policy) answers an operator's
    /// `camera.snap` invoke `NODE_BACKGROUND_UNAVAILABLE`, which the Gateway queues: the node's
    /// session and the operator's answer.
    private static func backgroundSnapQueued(_ gateway: Gateway, node nodeSeed: UInt8, operator operatorSeed: UInt8,
                                             params: JSONValue?, idempotencyKey: String)
        async throws -> (node: ConnectedSession, deviceId: String, answer: ResponseFrame) {
        let identity = try TestIdentities.make(nodeSeed)
        let node = try await TestSessions.connect(gateway, identity: identity) { client in
            var connect = client.connectParams()
            connect.commands = ["device.info", "camera.snap"]
            return connect
        }
        let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(operatorSeed), scopes: ["operator.write"])
        var invoke: [String: JSONValue] = [
            "nodeId": .string(identity.deviceId), "command": "camera.snap", "idempotencyKey": .string(idempotencyKey),
        ]
        if let params { invoke["params"] = params }
        try await writer.client.sendRequest("node.invoke", params: .object(invoke), id: "invoke-req")
        let request = try await node.client.event("node.invoke.request")
        let delivered = try #require(try request.payload?.decode(as: NodeInvokeRequest.self))
        _ = try await node.client.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
            id: delivered.id, nodeId: identity.deviceId, ok: false,
            error: NodeInvokeError(code: "NODE_BACKGROUND_UNAVAILABLE", message: "app is in the background"))))
        let (answer, _) = try await writer.client.collect(untilResponseTo: "invoke-req")
        return (node, identity.deviceId, answer)
    }

    /// `node.pending.pull` applies the node command policy as it stands at the pull (upstream
    /// `resolveAllowedPendingNodeActions`): an action queued while `camera.snap` was opted in is
    /// dropped once the policy denies it, although the node still declares it. Tried break:
    /// filtering by the declared commands only (the rule before) lists the action.
    @Test func aPullDropsAnActionThePolicyNoLongerAllows() async throws {
        var configuration = GatewayConfiguration(autoApproval: .auto)
        configuration.nodeCommands = NodeCommandPolicy(allow: ["camera.snap"])
        try await Gateway.withGateway(configuration) { gateway in
            let (node, deviceId, answer) = try await Self.backgroundSnapQueued(gateway, node: 0x64, operator: 0x65,
                                                                                params: nil, idempotencyKey: "snap-2")
            #expect(answer.error?.detailCode == "QUEUED_UNTIL_FOREGROUND")
            #expect(await gateway.pendingActions(nodeId: deviceId).count == 1)

            await gateway.setNodeCommandPolicy(NodeCommandPolicy(deny: ["camera.snap"]))
            let pulled = try await node.client.request("node.pending.pull", params: nil)
            #expect(pulled.payload?["actions"] == [], "a command the policy now refuses is not handed to the node")
            #expect(await gateway.pendingActions(nodeId: deviceId).isEmpty, "and it leaves the queue")
        }
    }

    @Test func aBackgroundRefusalOfAnIOSNodeIsQueuedPulledAndAcked() async throws {
        // camera.snap is dangerous: the operator's invoke reaches the node only with the opt-in
        // (docs/protocol.md §6.7).
        var configuration = GatewayConfiguration(autoApproval: .auto)
        configuration.nodeCommands = NodeCommandPolicy(allow: ["camera.snap"])
        try await Gateway.withGateway(configuration) { gateway in
            let (node, deviceId, answer) = try await Self.backgroundSnapQueued(gateway, node: 0x62, operator: 0x63,
                                                                                params: ["facing": "back"], idempotencyKey: "snap-1")
            #expect(answer.error?.code == "UNAVAILABLE")
            #expect(answer.error?.detailCode == "QUEUED_UNTIL_FOREGROUND")
            #expect(answer.error?.retryable == true)
            #expect(answer.error?.details?["nodeError"]?["code"] == "NODE_BACKGROUND_UNAVAILABLE")
            let actionId = try #require(answer.error?.details?["queuedActionId"]?.stringValue)
            #expect(await gateway.pendingActions(nodeId: deviceId).map(\.id) == [actionId])

            let pulled = try await node.client.request("node.pending.pull", params: nil)
            let actions = pulled.payload?["actions"]?.arrayValue ?? []
            #expect(actions.map { $0["id"]?.stringValue } == [actionId])
            #expect(actions.first?["command"] == "camera.snap")
            #expect(actions.first?["paramsJSON"] == #"{"facing":"back"}"#)
            let acked = try await node.client.request("node.pending.ack", params: ["ids": [.string(actionId)]])
            #expect(acked.payload?["ackedIds"] == [.string(actionId)])
            #expect(acked.payload?["remainingCount"] == 0)
            #expect(await gateway.pendingActions(nodeId: deviceId).isEmpty)
        }
    }
}
