import GatewayProtocol
@testable import MockGateway
import Testing

/// The node machine's wake sequence of an operator's `node.invoke` (`State/NodeState+Wake.swift`),
/// driven input by input: pushes go out as effects and their answers come back as inputs.
/// (Breaks tried, each failing the test named: feeding `available: false` after a sent push
/// fails `aSilentPushThenAForcedOneThenTheNudgeEndNotConnected`; registering a node without
/// advancing the wakes fails `aNodeThatConnectsDuringTheWaitGetsTheInvokeAndItsAnswer`; counting a
/// missing registration as available fails `withoutARegistrationTheAnswerIsNotConnectedAtOnce`;
/// keeping a registration APNs refused with 410 fails `aRefusedDirectRegistrationIsForgotten`;
/// answering a queued refusal without waking the node fails `aQueuedRefusalWakesTheNodeThenAnswers`.)
@Suite struct NodeMachineWakeTests {
    static let t0 = NodeMachineTests.t0
    static let registration: JSONValue = ["transport": "direct", "token": "abcd", "topic": "ai.openclaw.client"]
    static let key = "op1\u{1F}r1"

    static func caller(_ nodeId: String = "n9") -> OperatorInvokeCaller {
        OperatorInvokeCaller(connectionId: "op1", requestId: "r1", nodeId: nodeId, command: "camera.snap", params: nil,
                             idempotencyKey: "k1")
    }

    static var reply: ReplyAddress {
        ReplyAddress(requestId: "r1", method: GatewayMethod.nodeInvoke.rawValue, connectionId: "op1")
    }

    static func delivery(for send: PushSend, accepted: Bool = true, status: Int = 200, reason: String? = nil) -> PushDelivery {
        PushDelivery(nodeId: send.nodeId, transport: "direct", pushType: send.pushType, bodyJSON: "{}", gatewayDeviceId: nil,
                     signedAtMs: nil, signature: nil, sendGrant: nil, accepted: accepted, status: status, reason: reason)
    }

    /// The push that ends `effects` (the machine waits for its answer).
    static func push(_ effects: [GatewayEffect]) throws -> PushSend {
        guard case .sendPush(let send)? = effects.last else {
            Issue.record("no push at the end of \(effects)")
            throw CancellationError()
        }
        return send
    }

    static func note(_ text: String) -> GatewayEffect { .note(text, on: "-") }

    /// n1 and n2 connected, n9 absent with a direct push registration; `camera.snap` allowed.
    static func state() -> NodeState {
        var state = NodeMachineTests.nodes()
        state.policy.policyOverride = NodeCommandPolicy(allow: ["camera.snap"])
        state.push.registrations["n9"] = registration
        return state
    }

    @Test func aSilentPushThenAForcedOneThenTheNudgeEndNotConnected() throws {
        var state = Self.state()
        var ids = SeededRandom(seed: 9)
        let start = state.handle(.operatorInvoke(Self.caller(), timeoutMs: 30_000, deadlineMs: Self.t0 + 30_000, nowMs: Self.t0),
                                 ids: &ids)
        #expect(start.count == 1)
        let first = try Self.push(start)
        #expect(first.purpose == .invokeWake(key: Self.key, force: false))
        #expect(first.pushType == "background")
        #expect(state.handle(.pushAnswered(first, Self.delivery(for: first), nowMs: Self.t0), ids: &ids) == [
            Self.note("node.invoke wake for n9: sent"),
            Self.note("node.invoke for n9 waits for the node until Gateway time \(Self.t0 + 3_000)"),
        ])
        #expect(state.handle(.advanceWakes(nowMs: Self.t0 + 2_999), ids: &ids).isEmpty)
        let forced = try Self.push(state.handle(.advanceWakes(nowMs: Self.t0 + 3_000), ids: &ids))
        #expect(forced.purpose == .invokeWake(key: Self.key, force: true))
        #expect(state.handle(.pushAnswered(forced, Self.delivery(for: forced), nowMs: Self.t0 + 3_000), ids: &ids) == [
            Self.note("node.invoke wake (forced) for n9: sent"),
            Self.note("node.invoke for n9 waits for the node until Gateway time \(Self.t0 + 15_000)"),
        ])
        let nudge = try Self.push(state.handle(.advanceWakes(nowMs: Self.t0 + 15_000), ids: &ids))
        #expect(nudge.purpose == .invokeNudge(key: Self.key))
        #expect(nudge.pushType == "alert")
        #expect(state.handle(.pushAnswered(nudge, Self.delivery(for: nudge), nowMs: Self.t0 + 15_000), ids: &ids) == [
            Self.note("node.invoke for n9 ends without a dispatch: notConnected"),
            Self.reply.failure(OperatorInvokeReply.notConnected(nodeId: "n9")),
        ])
        #expect(state.invokeWake.pending.isEmpty)
        #expect(state.registry.pendingInvokes.isEmpty)
    }

    @Test func aNodeThatConnectsDuringTheWaitGetsTheInvokeAndItsAnswer() throws {
        var state = Self.state()
        var ids = SeededRandom(seed: 9)
        let first = try Self.push(state.handle(.operatorInvoke(Self.caller(), timeoutMs: 30_000, deadlineMs: Self.t0 + 30_000,
                                                               nowMs: Self.t0), ids: &ids))
        _ = state.handle(.pushAnswered(first, Self.delivery(for: first), nowMs: Self.t0), ids: &ids)
        let connected = state.handle(.registered(NodeMachineTests.node("n9", on: "c9"), voiceWake: [:], nowMs: Self.t0 + 1_000),
                                     ids: &ids)
        let id = try #require(state.registry.pendingInvokes.keys.first)
        #expect(connected.last == .log(.invokeSent(id: id, nodeId: "n9", command: "camera.snap", connectionId: "c9")))
        // What is left of the caller's timeoutMs bounds the invoke.
        #expect(state.registry.pendingInvokes[id]?.deadlineMs == Self.t0 + 30_000)
        #expect(state.invokeWake.pending.isEmpty)
        let result = NodeInvokeResult(id: id, nodeId: "n9", ok: true, payloadJSON: #"{"a":1}"#)
        let answer = ReplyAddress(requestId: "x1", method: GatewayMethod.nodeInvokeResult.rawValue, connectionId: "c9")
        let effects = state.handle(.result(result, callerNodeId: "n9", answer, nowMs: Self.t0 + 2_000), ids: &ids)
        #expect(Array(effects.suffix(2)) == [
            .finishInvoke(id, outcome: .result(result), queued: nil),
            Self.reply.success(OperatorInvokeReply.success(nodeId: "n9", command: "camera.snap", result: result)),
        ])
        #expect(state.invokeOperatorCallers.isEmpty)
    }

    @Test func withoutARegistrationTheAnswerIsNotConnectedAtOnce() {
        var state = Self.state()
        state.push.registrations = [:]
        var ids = SeededRandom(seed: 9)
        #expect(state.handle(.operatorInvoke(Self.caller(), timeoutMs: 30_000, deadlineMs: Self.t0 + 30_000, nowMs: Self.t0),
                             ids: &ids) == [
            Self.note("node.invoke wake for n9: no-registration"),
            Self.note("no reopen nudge to n9: no push registration"),
            Self.note("node.invoke for n9 ends without a dispatch: notConnected"),
            Self.reply.failure(OperatorInvokeReply.notConnected(nodeId: "n9")),
        ])
    }

    @Test func aRefusedDirectRegistrationIsForgotten() throws {
        var state = Self.state()
        var ids = SeededRandom(seed: 9)
        let first = try Self.push(state.handle(.operatorInvoke(Self.caller(), timeoutMs: 30_000, deadlineMs: Self.t0 + 30_000,
                                                               nowMs: Self.t0), ids: &ids))
        let refused = Self.delivery(for: first, accepted: false, status: 410, reason: "Unregistered")
        #expect(state.handle(.pushAnswered(first, refused, nowMs: Self.t0), ids: &ids) == [
            Self.note("push registration of n9 cleared: the transport answered 410 Unregistered"),
            Self.note("node.invoke wake for n9: send-error"),
            Self.note("node.invoke for n9 waits for the node until Gateway time \(Self.t0 + 3_000)"),
        ])
        #expect(state.push.registrations["n9"] == nil)
    }

    @Test func aQueuedRefusalWakesTheNodeThenAnswers() throws {
        var state = Self.state()
        state.push.registrations["n1"] = Self.registration
        var ids = SeededRandom(seed: 9)
        _ = state.handle(.operatorInvoke(Self.caller("n1"), timeoutMs: 30_000, deadlineMs: Self.t0 + 30_000, nowMs: Self.t0),
                         ids: &ids)
        let id = try #require(state.registry.pendingInvokes.keys.first)
        let error = NodeInvokeError(code: "NODE_BACKGROUND_UNAVAILABLE", message: "in background")
        let result = NodeInvokeResult(id: id, nodeId: "n1", ok: false, error: error)
        let answer = ReplyAddress(requestId: "x1", method: GatewayMethod.nodeInvokeResult.rawValue, connectionId: "c1")
        let effects = state.handle(.result(result, callerNodeId: "n1", answer, nowMs: Self.t0 + 10), ids: &ids)
        let action = try #require(state.pendingActions.live(nodeId: "n1", nowMs: Self.t0 + 10).first)
        let wake = try Self.push(effects)
        #expect(wake.purpose == .queuedWake(Self.caller("n1"), action: action, nodeError: error))
        #expect(effects.dropLast().last == .finishInvoke(id, outcome: .result(result), queued: action))
        let delivery = Self.delivery(for: wake)
        #expect(state.handle(.pushAnswered(wake, delivery, nowMs: Self.t0 + 10), ids: &ids) == [
            Self.reply.failure(OperatorInvokeReply.queued(action, nodeError: error, wake: NodeWakeAttempt(
                nodeId: "n1", path: .sent, delivery: delivery, reason: PushRelay.defaultWakeReason))),
        ])
    }
}

/// `node.event` in the node machine (`State/NodeState+Events.swift`): the rules' decision applied,
/// the last-seen write as an effect and its outcome as an input. (Breaks tried: not applying
/// `afterPersist`'s effects, so that no throttle window starts, fails
/// `aBeaconIsWrittenThenAnsweredAndTheNextIsThrottled`; treating a vanished record as stored fails
/// `aBeaconWhoseRecordVanishedIsPairingChanged`.)
@Suite struct NodeMachineEventTests {
    static let t0 = NodeMachineTests.t0
    static let alive = NodeEventName.presenceAlive.rawValue

    static func call(_ event: String = alive, payloadJSON: String = #"{"trigger":"silent_push"}"#) throws -> NodeEventCall {
        NodeEventCall(nodeId: "n1", request: try #require(NodeEventRequest(params: ["event": .string(event),
                                                                                    "payloadJSON": .string(payloadJSON)])),
                      reply: ReplyAddress(requestId: "e1", method: GatewayMethod.nodeEvent.rawValue, connectionId: "c1"),
                      replyStyle: .structured, deviceId: "n1", sessionPairingGeneration: "g1", currentPairingGeneration: "g1",
                      gatewayDeviceId: "gw")
    }

    static func reply(_ call: NodeEventCall, handled: Bool, reason: String) -> GatewayEffect {
        call.reply.success(["ok": true, "event": .string(alive), "handled": .bool(handled), "reason": .string(reason)])
    }

    @Test func aBeaconIsWrittenThenAnsweredAndTheNextIsThrottled() throws {
        var state = NodeMachineTests.nodes()
        var ids = SeededRandom(seed: 9)
        let call = try Self.call()
        let facts = state.eventFacts(call, nowMs: Self.t0)
        let write = LastSeenWrite(deviceId: "n1", reason: "silent_push", atMs: Self.t0, call: call, facts: facts)
        #expect(state.handle(.nodeEvent(call, nowMs: Self.t0), ids: &ids) == [
            .log(.nodeEvent(nodeId: "n1", event: Self.alive, payloadJSON: #"{"trigger":"silent_push"}"#, connectionId: "c1")),
            .persistLastSeen(write),
        ])
        #expect(state.handle(.lastSeenPersisted(write, stored: true), ids: &ids) == [
            .log(.presenceHandled(nodeId: "n1", trigger: "silent_push", handled: true, reason: .persisted)),
            Self.reply(call, handled: true, reason: "persisted"),
        ])
        // Within 60 s of the write the next beacon writes nothing.
        let again = state.handle(.nodeEvent(call, nowMs: Self.t0 + 59_999), ids: &ids)
        #expect(Array(again.suffix(2)) == [
            .log(.presenceHandled(nodeId: "n1", trigger: "silent_push", handled: true, reason: .throttled)),
            Self.reply(call, handled: true, reason: "throttled"),
        ])
        #expect(!again.contains { if case .persistLastSeen = $0 { true } else { false } })
    }

    @Test func aBeaconWhoseRecordVanishedIsPairingChanged() throws {
        var state = NodeMachineTests.nodes()
        var ids = SeededRandom(seed: 9)
        let call = try Self.call()
        let effects = state.handle(.nodeEvent(call, nowMs: Self.t0), ids: &ids)
        guard case .persistLastSeen(let write)? = effects.last else { Issue.record("no write"); return }
        #expect(state.handle(.lastSeenPersisted(write, stored: nil), ids: &ids).last == Self.reply(call, handled: false,
                                                                                                     reason: "pairing_changed"))
        #expect(state.presencePersistStamps.isEmpty)
    }

    @Test func anActivityReportFromANodeWithoutAccessibilityIsRefusedAndBroadcastsNothing() throws {
        var state = NodeMachineTests.nodes()
        var ids = SeededRandom(seed: 9)
        let call = try Self.call(NodeEventName.presenceActivity.rawValue, payloadJSON: #"{"idleSeconds":5}"#)
        let effects = state.handle(.nodeEvent(call, nowMs: Self.t0), ids: &ids)
        #expect(effects.count == 2)
        #expect(effects.last == call.reply.success(["ok": true, "event": .string(NodeEventName.presenceActivity.rawValue),
                                                    "handled": false, "reason": "permission_required"]))
        #expect(state.nodeActivity.isEmpty)
    }
}

/// Command-surface reconciliation at connect in the node machine (`State/NodeState+Surface.swift`).
/// (Breaks tried: registering the declared commands while a widening waits fails
/// `aWidenedSurfaceWaitsWithTheApprovedCommandsInEffect`; not counting written requests against
/// the reapproval limit fails `theReapprovalLimitStopsNewRequests`.)
@Suite struct NodeMachineSurfaceTests {
    static let t0 = NodeMachineTests.t0
    static let policy = NodeCommandPolicy(allow: ["x.one", "x.two", "x.three"], deny: ["x.denied"])

    static func declaration(_ commands: [String], version: String = "1.0") -> SurfaceDeclaration {
        SurfaceDeclaration(nodeId: "n7", declared: commands, platform: "linux", deviceFamily: nil,
                           metadata: NodeSurfaceApprovals.Metadata(platform: "linux", version: version, caps: ["x"], remoteIp: "10.0.0.7"))
    }

    @Test func aFirstConnectRegistersTheAllowlistedDeclaredCommands() {
        var state = NodeState(capabilityRandom: SeededRandom(seed: 3), commandPolicy: Self.policy)
        var limiter = AuthRateLimiter()
        var ids = SeededRandom(seed: 9)
        let (effective, effects) = state.reconcileSurface(Self.declaration(["x.one", " x.one ", "x.denied", "not.allowed"]),
                                                          limiter: &limiter, nowMs: Self.t0, ids: &ids)
        #expect(effective == ["x.one"])
        #expect(effects.isEmpty)
        #expect(state.surfaces.pairedNodes.map(\.commands) == [["x.one"]])
    }

    @Test func aWidenedSurfaceWaitsWithTheApprovedCommandsInEffect() throws {
        var state = NodeState(capabilityRandom: SeededRandom(seed: 3), commandPolicy: Self.policy)
        var limiter = AuthRateLimiter()
        var ids = SeededRandom(seed: 9)
        _ = state.reconcileSurface(Self.declaration(["x.one"]), limiter: &limiter, nowMs: Self.t0, ids: &ids)
        let (effective, effects) = state.reconcileSurface(Self.declaration(["x.one", "x.two"]), limiter: &limiter,
                                                          nowMs: Self.t0 + 1, ids: &ids)
        #expect(effective == ["x.one"])
        let request = try #require(state.surfaces.pendingRequests(nowMs: Self.t0 + 1).first)
        #expect(request.commands == ["x.one", "x.two"])
        #expect(effects == [.broadcast(event: GatewayEventName.nodePairRequested.rawValue, payload: request.json, stateVersion: nil)])
        // Another widening supersedes it: the old request is announced rejected, then the new one.
        let (_, next) = state.reconcileSurface(Self.declaration(["x.one", "x.three"]), limiter: &limiter, nowMs: Self.t0 + 2,
                                               ids: &ids)
        let replacement = try #require(state.surfaces.pendingRequests(nowMs: Self.t0 + 2).first)
        #expect(next == [
            NodeState.surfaceResolved(requestId: request.requestId, nodeId: "n7", decision: "rejected", nowMs: Self.t0 + 2),
            .broadcast(event: GatewayEventName.nodePairRequested.rawValue, payload: replacement.json, stateVersion: nil),
        ])
    }

    @Test func theReapprovalLimitStopsNewRequests() throws {
        var state = NodeState(capabilityRandom: SeededRandom(seed: 3), commandPolicy: Self.policy)
        var limiter = AuthRateLimiter(configuration: AuthRateLimitConfiguration(maxAttempts: 2, exemptLoopback: false))
        var ids = SeededRandom(seed: 9)
        _ = state.reconcileSurface(Self.declaration(["x.one"]), limiter: &limiter, nowMs: Self.t0, ids: &ids)
        _ = state.reconcileSurface(Self.declaration(["x.one", "x.two"]), limiter: &limiter, nowMs: Self.t0 + 1, ids: &ids)
        _ = state.reconcileSurface(Self.declaration(["x.one", "x.three"]), limiter: &limiter, nowMs: Self.t0 + 2, ids: &ids)
        let waiting = state.surfaces.pendingRequests(nowMs: Self.t0 + 3)
        // Two writes used up the limit: a third widening opens nothing and announces nothing.
        let (effective, effects) = state.reconcileSurface(Self.declaration(["x.two", "x.three"]), limiter: &limiter,
                                                          nowMs: Self.t0 + 3, ids: &ids)
        #expect(effective == ["x.one"])
        #expect(effects.isEmpty)
        #expect(state.surfaces.pendingRequests(nowMs: Self.t0 + 3) == waiting)
    }
}
