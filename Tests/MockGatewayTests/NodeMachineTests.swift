import GatewayProtocol
@testable import MockGateway
import Testing

/// Nodes and invokes as a state machine (``NodeState/handle(_:ids:)``): dispatch, results, the
/// clock, closed connections and `node.pair.*` in, Gateway effects out, no socket. (Breaks tried:
/// failing the invokes of every connection on a close fails
/// `aClosedSocketTakesItsNodeAndFailsOnlyItsInvokes`; letting `operator.write` approve a
/// `system.run` surface fails `aSurfaceWithSystemRunNeedsAdminThenApprovalAnswersAndAnnounces`.)
@Suite struct NodeMachineTests {
    static let t0: Int64 = 1_000_000

    static func node(_ nodeId: String, on connectionId: String, platform: String = "iOS 18.4.0") -> RegisteredNode {
        RegisteredNode(nodeId: nodeId, connectionId: connectionId, clientId: "openclaw-ios", clientMode: "node", displayName: nil,
                       platform: platform, version: "1.0", deviceFamily: "iPhone", modelIdentifier: nil, caps: [],
                       commands: ["camera.snap", "talk.ptt.start"], permissions: [:], pathEnv: nil, remoteIp: "10.0.0.2",
                       connectedAtMs: t0)
    }

    static func nodes() -> NodeState {
        var state = NodeState(capabilityRandom: SeededRandom(seed: 3))
        state.registry.register(node("n1", on: "c1"))
        state.registry.register(node("n2", on: "c2"))
        return state
    }

    /// Sends one invoke to `nodeId` and returns its id.
    static func dispatch(_ state: inout NodeState, _ command: String = "camera.snap", to nodeId: String = "n1",
                         timeoutMs: Int = 5_000, ids: inout SeededRandom) -> String? {
        state.dispatch(InvokeDispatch(nodeId: nodeId, command: command, params: ["quality": 1], timeoutMs: timeoutMs,
                                      idempotencyKey: "k1"), nowMs: t0, ids: &ids)?.id
    }

    @Test func aDispatchSendsTheRequestToTheNodesSocketAndLogsIt() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        var expectedIds = SeededRandom(seed: 9)
        let effects = state.handle(.dispatch(InvokeDispatch(nodeId: "n1", command: "camera.snap", params: ["quality": 1],
                                                            timeoutMs: 5_000, idempotencyKey: "k1"), nowMs: Self.t0), ids: &ids)
        let id = expectedIds.uuidString()
        let request = NodeInvokeRequest(id: id, nodeId: "n1", command: "camera.snap", paramsJSON: #"{"quality":1}"#,
                                        timeoutMs: 5_000, idempotencyKey: "k1")
        #expect(effects == [
            .sendTargeted(event: GatewayEventName.nodeInvokeRequest.rawValue, payload: try JSONValue(encoding: request), to: "c1"),
            .log(.invokeSent(id: id, nodeId: "n1", command: "camera.snap", connectionId: "c1")),
        ])
        #expect(state.registry.pendingInvokes[id]?.deadlineMs == Self.t0 + 5_000)
        // A node that is not connected gets nothing, and nothing is pending for it.
        #expect(state.handle(.dispatch(InvokeDispatch(nodeId: "gone", command: "camera.snap", timeoutMs: 0), nowMs: Self.t0),
                             ids: &ids).isEmpty)
        #expect(state.registry.pendingInvokes.count == 1)
    }

    @Test func anInvokeTimesOutOnTheClockAtItsDeadline() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let id = try #require(Self.dispatch(&state, ids: &ids))
        let unbounded = try #require(Self.dispatch(&state, timeoutMs: 0, ids: &ids))
        #expect(state.handle(.clock(nowMs: Self.t0 + 4_999), ids: &ids).isEmpty)
        #expect(state.handle(.clock(nowMs: Self.t0 + 5_000), ids: &ids) == [.finishInvoke(id, outcome: .timedOut, queued: nil)])
        // `timeoutMs: 0` never times out on the Gateway clock.
        #expect(state.handle(.clock(nowMs: Self.t0 + 10_000_000), ids: &ids).isEmpty)
        #expect(Array(state.registry.pendingInvokes.keys) == [unbounded])
    }

    @Test func aResultCompletesItsInvokeAfterItsAnswer() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let id = try #require(Self.dispatch(&state, ids: &ids))
        let reply = ReplyAddress(requestId: "r1", method: GatewayMethod.nodeInvokeResult.rawValue, connectionId: "c1")
        let result = NodeInvokeResult(id: id, nodeId: "n1", ok: true, payloadJSON: "{}")
        #expect(state.handle(.result(result, callerNodeId: "n1", reply, nowMs: Self.t0 + 1), ids: &ids) == [
            .log(.invokeResult(id: id, nodeId: "n1", ok: true, matched: true, connectionId: "c1")),
            reply.success(["ok": true]),
            .finishInvoke(id, outcome: .result(result), queued: nil),
        ])
        // The same result again is late: acknowledged as ignored.
        #expect(state.handle(.result(result, callerNodeId: "n1", reply, nowMs: Self.t0 + 2), ids: &ids) == [
            .log(.invokeResult(id: id, nodeId: "n1", ok: true, matched: false, connectionId: "c1")),
            reply.success(["ok": true, "ignored": true]),
        ])
    }

    @Test func aResultNamingAnotherNodeIsRefusedAndCompletesNothing() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let id = try #require(Self.dispatch(&state, ids: &ids))
        let reply = ReplyAddress(requestId: "r1", method: GatewayMethod.nodeInvokeResult.rawValue, connectionId: "c2")
        let result = NodeInvokeResult(id: id, nodeId: "n1", ok: true)
        #expect(state.handle(.result(result, callerNodeId: "n2", reply, nowMs: Self.t0), ids: &ids) == [
            .log(.invokeResult(id: id, nodeId: "n1", ok: true, matched: false, connectionId: "c2")),
            reply.failure(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "nodeId mismatch")),
        ])
        #expect(state.registry.pendingInvokes[id] != nil)
    }

    @Test func aBackgroundRefusalQueuesTheForegroundActionOnce() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let id = try #require(Self.dispatch(&state, ids: &ids))
        let reply = ReplyAddress(requestId: "r1", method: GatewayMethod.nodeInvokeResult.rawValue, connectionId: "c1")
        let result = NodeInvokeResult(id: id, nodeId: "n1", ok: false,
                                      error: NodeInvokeError(code: "NODE_BACKGROUND_UNAVAILABLE", message: "in background"))
        let effects = state.handle(.result(result, callerNodeId: "n1", reply, nowMs: Self.t0), ids: &ids)
        let action = try #require(state.pendingActions.live(nodeId: "n1", nowMs: Self.t0).first)
        #expect(action.command == "camera.snap")
        #expect(effects.suffix(2) == [
            .log(.pendingActionQueued(nodeId: "n1", actionId: action.id, command: "camera.snap")),
            .finishInvoke(id, outcome: .result(result), queued: action),
        ])
    }

    @Test func aClosedSocketTakesItsNodeAndFailsOnlyItsInvokes() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let onC1 = try #require(Self.dispatch(&state, to: "n1", ids: &ids))
        let onC2 = try #require(Self.dispatch(&state, to: "n2", ids: &ids))
        let effects = state.handle(.connectionClosed("c1", nowMs: Self.t0 + 5), ids: &ids)
        #expect(effects.first == .log(.nodeDisconnected(nodeId: "n1", connectionId: "c1")))
        #expect(effects.last == .finishInvoke(onC1, outcome: .nodeDisconnected, queued: nil))
        #expect(effects.count == 3)
        guard case .broadcast(let event, _, let version)? = effects.dropFirst().first else {
            Issue.record("no presence broadcast"); return
        }
        #expect(event == GatewayEventName.presence.rawValue)
        #expect(version?.presence == 2)
        #expect(state.registry.nodes["n1"] == nil)
        #expect(Array(state.registry.pendingInvokes.keys) == [onC2])
    }

    /// A node whose approved surface is `camera.snap` reconnecting with `system.run` too: its
    /// widening waits as a surface request.
    static func widened(_ state: inout NodeState) throws -> NodeSurfaceApprovals.PendingRequest {
        _ = state.surfaces.setApproved(nodeId: "n1", commands: ["camera.snap"], nowMs: t0)
        let result = state.surfaces.reconcile(nodeId: "n1", declared: ["camera.snap", "system.run"],
                                              allowlist: ["camera.snap", "system.run"], metadata: .init(), nowMs: t0,
                                              newRequestId: { "p1" })
        return try #require(result.pending)
    }

    @Test func aSurfaceWithSystemRunNeedsAdminThenApprovalAnswersAndAnnounces() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let request = try Self.widened(&state)
        let reply = ReplyAddress(requestId: "r1", method: GatewayMethod.nodePairApprove.rawValue, connectionId: "c9")
        #expect(state.handle(.surfaceApprove(requestId: request.requestId, callerScopes: ["operator.write"], reply, nowMs: Self.t0),
                             ids: &ids)
            == [reply.failure(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "missing scope: operator.admin"))])
        let effects = state.handle(.surfaceApprove(requestId: request.requestId, callerScopes: ["operator.admin"], reply,
                                                   nowMs: Self.t0 + 1), ids: &ids)
        let node = try #require(state.surfaces.pairedNodes.first { $0.nodeId == "n1" })
        #expect(node.commands == ["camera.snap", "system.run"])
        #expect(effects == [
            reply.success(["requestId": .string(request.requestId), "node": node.json]),
            NodeState.surfaceResolved(requestId: request.requestId, nodeId: "n1", decision: "approved", nowMs: Self.t0 + 1),
        ])
        // Approving it again: the request is gone.
        #expect(state.handle(.surfaceReject(requestId: request.requestId, reply, nowMs: Self.t0 + 2), ids: &ids)
            == [reply.failure(NodeState.unknownSurfaceRequest)])
    }

    @Test func aRejectedSurfaceRequestKeepsTheApprovedSurface() throws {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let request = try Self.widened(&state)
        let reply = ReplyAddress(requestId: "r1", method: GatewayMethod.nodePairReject.rawValue, connectionId: "c9")
        #expect(state.handle(.surfaceReject(requestId: request.requestId, reply, nowMs: Self.t0), ids: &ids) == [
            reply.success(["requestId": .string(request.requestId), "nodeId": "n1"]),
            NodeState.surfaceResolved(requestId: request.requestId, nodeId: "n1", decision: "rejected", nowMs: Self.t0),
        ])
        #expect(state.surfaces.pairedNodes.first { $0.nodeId == "n1" }?.commands == ["camera.snap"])
        let list = state.handle(.surfaceList(reply, nowMs: Self.t0), ids: &ids)
        #expect(list == [reply.success(["pending": [], "paired": .array(state.surfaces.pairedNodes.map(\.json))])])
    }

    @Test func aNewerSocketReplacesTheNodesRoutingTargetAndPresenceMovesOn() {
        var state = Self.nodes()
        var ids = SeededRandom(seed: 9)
        let effects = state.handle(.registered(Self.node("n1", on: "c5"), voiceWake: ["triggers": []], nowMs: Self.t0), ids: &ids)
        #expect(Array(effects.prefix(3)) == [
            .log(.nodeDisconnected(nodeId: "n1", connectionId: "c1")),
            .log(.nodeConnected(nodeId: "n1", connectionId: "c5")),
            .sendTargeted(event: GatewayEventName.voicewakeChanged.rawValue, payload: ["triggers": []], to: "c5"),
        ])
        #expect(effects.count == 4)
        #expect(state.registry.nodes["n1"]?.connectionId == "c5")
        // The replaced socket closing later takes nothing with it.
        #expect(state.handle(.connectionClosed("c1", nowMs: Self.t0), ids: &ids).isEmpty)
    }

    /// (Pulling every queued action whatever the policy says fails this test.)
    @Test func aPullHandsOutOnlyAllowedActionsAndAnAckRetiresThem() throws {
        var state = Self.nodes()
        // `camera.snap` is declared and allowed; `screen.record` is not declared by n1.
        state.policy.policyOverride = NodeCommandPolicy(allow: ["camera.snap", "screen.record"])
        var ids = SeededRandom(seed: 9)
        let snap = state.pendingActions.enqueue(nodeId: "n1", command: "camera.snap", paramsJSON: nil, idempotencyKey: "k1",
                                                nowMs: Self.t0, newId: { "a1" })
        _ = state.pendingActions.enqueue(nodeId: "n1", command: "screen.record", paramsJSON: nil, idempotencyKey: "k2",
                                         nowMs: Self.t0, newId: { "a2" })
        let reply = ReplyAddress(requestId: "r1", method: GatewayMethod.nodePendingPull.rawValue, connectionId: "c1")
        #expect(state.handle(.pendingPull(nodeId: "n1", reply, nowMs: Self.t0 + 1), ids: &ids)
            == [reply.success(["nodeId": "n1", "actions": [snap.pullJSON]])])
        // The refused action left the queue; acknowledging the pulled one empties it.
        let ack = ReplyAddress(requestId: "r2", method: GatewayMethod.nodePendingAck.rawValue, connectionId: "c1")
        #expect(state.handle(.pendingAck(nodeId: "n1", ids: ["a1", " a1 "], ack, nowMs: Self.t0 + 2), ids: &ids)
            == [ack.success(["nodeId": "n1", "ackedIds": ["a1"], "remainingCount": 0])])
    }
}
