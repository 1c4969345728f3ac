import GatewayProtocol

/// An invoke the Gateway is asked to send to a node (`node.invoke` after its checks and wake,
/// the scripting API, the console).
struct InvokeDispatch: Sendable, Hashable {
    /// The target node.
    var nodeId: String
    /// The command.
    var command: String
    /// The command's params (sent as `paramsJSON`).
    var params: JSONValue?
    /// The invoke's `timeoutMs` (0: unbounded).
    var timeoutMs: Int
    /// The idempotency key, when the caller gave one.
    var idempotencyKey: String?
}

/// Nodes and invokes as a state machine over ``NodeState``: an invoke dispatched, an operator's
/// `node.invoke` (with its wake sequence, `State/NodeState+Wake.swift`), a `node.invoke.result`,
/// a `node.event` (`State/NodeState+Events.swift`), the clock and a closed connection in,
/// ``GatewayEffect``s out (the `node.invoke.request`, the answers and log entries, a mirrored
/// `talk.event`, a queued foreground action, `presence` and `node.presence`, pushes to hand to a
/// transport, a last-seen write, and ``GatewayEffect/finishInvoke(_:outcome:queued:)`` for
/// whoever waits for the invoke). A push or a last-seen write is the last effect of its input:
/// the machine goes on when the actor reports its outcome as an input. No socket and no fault
/// plan; ids come from the `ids` stream the actor passes in (its own, so that a run draws the
/// same ids as before). A connecting node's command surface is reconciled by
/// ``reconcileSurface(_:limiter:nowMs:ids:)`` (`State/NodeState+Surface.swift`).
extension NodeState {
    /// What moves nodes and invokes.
    enum Input: Sendable {
        /// Send an invoke to the node's current socket (nothing when it is not connected).
        case dispatch(InvokeDispatch, nowMs: Int64)
        /// An operator's `node.invoke` after its first checks (params, preflight, scopes):
        /// dispatched at once to a connected node, otherwise its node is woken first
        /// (docs/protocol.md §6.9.1), within `deadlineMs` (the caller's `timeoutMs`, if any);
        /// `dispatchHoldMs` comes from the fault layer (``FaultLayer/wakeDispatchHold(nodeConnected:)``).
        case operatorInvoke(OperatorInvokeCaller, timeoutMs: Int, deadlineMs: Int64?, dispatchHoldMs: Int64 = 0, nowMs: Int64)
        /// The clock reached `nowMs` for the wake sequences: a wait that is over ends.
        case advanceWakes(nowMs: Int64)
        /// The transport answered a push of ``GatewayEffect/sendPush(_:)``.
        case pushAnswered(PushSend, PushDelivery, nowMs: Int64)
        /// A `node.event` (docs/protocol.md §6.5, §6.6), with the facts the machine does not hold.
        case nodeEvent(NodeEventCall, nowMs: Int64)
        /// The last-seen write of ``GatewayEffect/persistLastSeen(_:)`` ran: `stored` is whether it
        /// was stored, `nil` when the device's record is gone.
        case lastSeenPersisted(LastSeenWrite, stored: Bool?)
        /// A well-formed `node.invoke.result` from the node `callerNodeId`, answered at `reply`.
        case result(NodeInvokeResult, callerNodeId: String, ReplyAddress, nowMs: Int64)
        /// The clock reached `nowMs`: invokes past their `timeoutMs` time out.
        case clock(nowMs: Int64)
        /// A socket closed: the node it carried (if still its current socket) goes, every
        /// invoke sent on it fails with `nodeDisconnected`, and the wake sequences look again.
        case connectionClosed(String, nowMs: Int64)
        /// A node session was established (after its `hello-ok`): `node` becomes the node's routing
        /// target (a newer socket replaces an older one, which stays open), gets the wake-word
        /// settings (`voicewake.changed`, `voiceWake`) and everyone a new `presence`; a wake
        /// sequence waiting for the node dispatches.
        case registered(RegisteredNode, voiceWake: JSONValue, nowMs: Int64)
        /// `node.pending.pull` of node `nodeId`: its queued foreground actions that the node
        /// command policy still lets through to it (upstream `resolveAllowedPendingNodeActions`:
        /// connected, declared and allowed now); the others are dropped from the queue.
        case pendingPull(nodeId: String, ReplyAddress, nowMs: Int64)
        /// `node.pending.ack` of node `nodeId` for the actions `ids`.
        case pendingAck(nodeId: String, ids: [String], ReplyAddress, nowMs: Int64)
        /// `node.pair.list`: the pending surface requests and approved surfaces.
        case surfaceList(ReplyAddress, nowMs: Int64)
        /// `node.pair.approve` of `requestId` by a caller with `callerScopes`.
        case surfaceApprove(requestId: String, callerScopes: [String], ReplyAddress, nowMs: Int64)
        /// `node.pair.reject` of `requestId`.
        case surfaceReject(requestId: String, ReplyAddress, nowMs: Int64)
    }

    /// Applies an input, drawing new ids (invoke ids, capture ids, action ids) from `ids`.
    mutating func handle(_ input: Input, ids: inout SeededRandom) -> [GatewayEffect] {
        switch input {
        case .dispatch(let dispatch, let nowMs):
            return self.dispatch(dispatch, nowMs: nowMs, ids: &ids)?.effects ?? []
        case .result(let result, let callerNodeId, let reply, let nowMs):
            return take(result, callerNodeId: callerNodeId, reply: reply, nowMs: nowMs, ids: &ids)
        case .operatorInvoke(let caller, let timeoutMs, let deadlineMs, let hold, let nowMs):
            return routeOperatorInvoke(caller, timeoutMs: timeoutMs, deadlineMs: deadlineMs, dispatchHoldMs: hold, nowMs: nowMs,
                                       ids: &ids)
        case .advanceWakes(let nowMs):
            return advanceWakes(nowMs: nowMs, ids: &ids)
        case .pushAnswered(let send, let delivery, let nowMs):
            return pushAnswered(send, delivery, nowMs: nowMs, ids: &ids)
        case .nodeEvent(let call, let nowMs):
            return nodeEvent(call, nowMs: nowMs)
        case .lastSeenPersisted(let write, let stored):
            return lastSeenPersisted(write, stored: stored)
        case .clock(let nowMs):
            var effects: [GatewayEffect] = []
            for invoke in registry.expireInvokes(nowMs: nowMs) {
                effects += finishInvoke(invoke.id, outcome: .timedOut, queued: nil, nowMs: nowMs)
            }
            return effects
        case .connectionClosed(let connectionId, let nowMs):
            var effects: [GatewayEffect] = []
            if let nodeId = registry.unregister(connectionId: connectionId) {
                // The activity belonged to that connection (upstream keeps it on the node session).
                nodeActivity.removeValue(forKey: nodeId)
                effects.append(.log(.nodeDisconnected(nodeId: nodeId, connectionId: connectionId)))
                effects += presenceChanged(nowMs: nowMs)
            }
            // Also when a newer socket had replaced this one: nothing can answer an invoke sent
            // on a closed socket.
            effects += failInvokes(onConnection: connectionId, nowMs: nowMs)
            return effects + advanceWakes(nowMs: nowMs, ids: &ids)
        case .registered(let node, let voiceWake, let nowMs):
            var effects: [GatewayEffect] = []
            if let replaced = registry.register(node) {
                // The older socket stays open but is no longer the node's routing target.
                effects.append(.log(.nodeDisconnected(nodeId: node.nodeId, connectionId: replaced)))
            }
            effects.append(.log(.nodeConnected(nodeId: node.nodeId, connectionId: node.connectionId)))
            effects.append(.sendTargeted(event: GatewayEventName.voicewakeChanged.rawValue, payload: voiceWake, to: node.connectionId))
            effects += presenceChanged(nowMs: nowMs)
            return effects + advanceWakes(nowMs: nowMs, ids: &ids)
        case .pendingPull(let nodeId, let reply, let nowMs):
            // Decided before the queue is touched.
            let connected = registry.nodes[nodeId] != nil
            let queued = Set(pendingActions.live(nodeId: nodeId, nowMs: nowMs).map(\.command))
            let allowed = queued.filter { connected && commandRefusal(nodeId: nodeId, command: $0) == nil }
            let actions = pendingActions.pull(nodeId: nodeId, nowMs: nowMs) { allowed.contains($0) }
            return [reply.success(["nodeId": .string(nodeId), "actions": .array(actions.map(\.pullJSON))])]
        case .pendingAck(let nodeId, let ids, let reply, let nowMs):
            let (acked, remaining) = pendingActions.ack(nodeId: nodeId, ids: ids, nowMs: nowMs)
            return [reply.success(["nodeId": .string(nodeId), "ackedIds": .array(acked.map(JSONValue.string)),
                                   "remainingCount": .int(Int64(remaining))])]
        case .surfaceList(let reply, let nowMs):
            surfaces.prune(nowMs: nowMs)
            return [reply.success(["pending": .array(surfaces.pendingRequests(nowMs: nowMs).map(\.json)),
                                   "paired": .array(surfaces.pairedNodes.map(\.json))])]
        case .surfaceApprove(let requestId, let callerScopes, let reply, let nowMs):
            guard let request = surfaces.pending(requestId, nowMs: nowMs) else { return [reply.failure(Self.unknownSurfaceRequest)] }
            // A surface with `system.run` commands needs `operator.admin`, any other non-empty
            // one `operator.write`.
            let scopes = Set(wire: callerScopes)
            let needsAdmin = request.commands.contains { NodeCommandPolicy.systemRunCommands.contains($0) }
            let missing: OperatorScope? = needsAdmin ? (scopes.contains(.admin) ? nil : .admin)
                : (request.commands.isEmpty || scopes.contains(.write) || scopes.contains(.admin) ? nil : .write)
            if let missing {
                return [reply.failure(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "missing scope: \(missing.rawValue)"))]
            }
            guard let (node, effects) = approveSurface(requestId, nowMs: nowMs) else { return [reply.failure(Self.unknownSurfaceRequest)] }
            return [reply.success(["requestId": .string(requestId), "node": node.json])] + effects
        case .surfaceReject(let requestId, let reply, let nowMs):
            guard let (request, effects) = rejectSurface(requestId, nowMs: nowMs) else { return [reply.failure(Self.unknownSurfaceRequest)] }
            return [reply.success(["requestId": .string(requestId), "nodeId": .string(request.nodeId)])] + effects
        }
    }

    /// The answer to a `node.pair.*` request for a request that is not pending.
    static var unknownSurfaceRequest: ErrorShape {
        ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unknown requestId")
    }

    /// Approves a pending surface request (`node.pair.resolved` `approved`).
    /// - Returns: the approved surface and the broadcast, `nil` when no such request is pending.
    mutating func approveSurface(_ requestId: String, nowMs: Int64) -> (NodeSurfaceApprovals.PairedNode, [GatewayEffect])? {
        guard let approved = surfaces.approve(requestId, nowMs: nowMs) else { return nil }
        return (approved.node, [Self.surfaceResolved(requestId: requestId, nodeId: approved.request.nodeId, decision: "approved",
                                                     nowMs: nowMs)])
    }

    /// Rejects a pending surface request (`node.pair.resolved` `rejected`; the approved surface
    /// stays).
    /// - Returns: the rejected request and the broadcast, `nil` when no such request is pending.
    mutating func rejectSurface(_ requestId: String, nowMs: Int64) -> (NodeSurfaceApprovals.PendingRequest, [GatewayEffect])? {
        guard let request = surfaces.reject(requestId, nowMs: nowMs) else { return nil }
        return (request, [Self.surfaceResolved(requestId: requestId, nodeId: request.nodeId, decision: "rejected", nowMs: nowMs)])
    }

    /// The `node.pair.resolved` broadcast.
    static func surfaceResolved(requestId: String, nodeId: String, decision: String, nowMs: Int64) -> GatewayEffect {
        .broadcast(event: GatewayEventName.nodePairResolved.rawValue,
                   payload: ["requestId": .string(requestId), "nodeId": .string(nodeId), "decision": .string(decision),
                             "ts": .int(nowMs)],
                   stateVersion: nil)
    }

    /// Sends an invoke: a new id, the pending invoke, `node.invoke.request` to the node's
    /// current socket (without `seq`) and its log entry.
    /// - Returns: the invoke id and the effects, or `nil` when the node is not connected.
    mutating func dispatch(_ dispatch: InvokeDispatch, nowMs: Int64,
                           ids: inout SeededRandom) -> (id: String, effects: [GatewayEffect])? {
        guard let node = registry.nodes[dispatch.nodeId] else { return nil }
        let id = ids.uuidString()
        let paramsJSON = dispatch.params.map(\.jsonString)
        let deadline: Int64? = dispatch.timeoutMs > 0 ? nowMs + Int64(dispatch.timeoutMs) : nil
        registry.begin(PendingInvoke(id: id, nodeId: dispatch.nodeId, connectionId: node.connectionId, command: dispatch.command,
                                     idempotencyKey: dispatch.idempotencyKey, deadlineMs: deadline, paramsJSON: paramsJSON))
        let request = NodeInvokeRequest(id: id, nodeId: dispatch.nodeId, command: dispatch.command, paramsJSON: paramsJSON,
                                        timeoutMs: dispatch.timeoutMs, idempotencyKey: dispatch.idempotencyKey)
        return (id, [
            .sendTargeted(event: GatewayEventName.nodeInvokeRequest.rawValue, payload: (try? JSONValue(encoding: request)) ?? .null,
                          to: node.connectionId),
            .log(.invokeSent(id: id, nodeId: dispatch.nodeId, command: dispatch.command, connectionId: node.connectionId)),
        ])
    }

    /// Takes a `node.invoke.result` (docs/protocol.md §6.4): a result for another node is
    /// refused (`nodeId mismatch`), an unknown or late one acknowledged as ignored, a matching
    /// one completes its invoke (after its answer, its `talk.event` and any foreground action a
    /// background refusal queues).
    private mutating func take(_ result: NodeInvokeResult, callerNodeId: String, reply: ReplyAddress, nowMs: Int64,
                               ids: inout SeededRandom) -> [GatewayEffect] {
        let connectionId = reply.connectionId
        switch registry.takeResult(result, callerNodeId: callerNodeId) {
        case .nodeIdMismatch:
            return [.log(.invokeResult(id: result.id, nodeId: result.nodeId, ok: result.ok, matched: false, connectionId: connectionId)),
                    reply.failure(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "nodeId mismatch"))]
        case .ignored:
            return [.log(.invokeResult(id: result.id, nodeId: callerNodeId, ok: result.ok, matched: false, connectionId: connectionId)),
                    reply.success(["ok": true, "ignored": true])]
        case .completed(let pending, let result):
            var effects: [GatewayEffect] = [
                .log(.invokeResult(id: pending.id, nodeId: callerNodeId, ok: result.ok, matched: true, connectionId: connectionId)),
                reply.success(["ok": true]),
            ]
            effects += talkEvent(nodeId: pending.nodeId, command: pending.command, result: result, nowMs: nowMs, ids: &ids)
            let (queued, queueEffects) = queueForegroundAction(pending, result: result, nowMs: nowMs, ids: &ids)
            return effects + queueEffects + finishInvoke(pending.id, outcome: .result(result), queued: queued, nowMs: nowMs)
        }
    }

    /// Fails every invoke sent on `connectionId` (by id) with `nodeDisconnected`.
    mutating func failInvokes(onConnection connectionId: String, nowMs: Int64) -> [GatewayEffect] {
        var effects: [GatewayEffect] = []
        for invoke in registry.pendingInvokes.values.sorted(by: { $0.id < $1.id }) where invoke.connectionId == connectionId {
            _ = registry.cancelInvoke(id: invoke.id)
            effects += finishInvoke(invoke.id, outcome: .nodeDisconnected, queued: nil, nowMs: nowMs)
        }
        return effects
    }

    /// Queues a foreground-only command that an iOS node refused in the background
    /// (`PendingActionQueue`), so that the node can pull it after it returns to the foreground.
    /// - Returns: the queued action (an existing one for the same idempotency key) and the log
    ///   entry of a new one.
    mutating func queueForegroundAction(_ invoke: PendingInvoke, result: NodeInvokeResult, nowMs: Int64,
                                        ids: inout SeededRandom) -> (PendingNodeAction?, [GatewayEffect]) {
        guard !result.ok, let node = registry.nodes[invoke.nodeId],
              PendingActionQueue.shouldQueue(platform: node.platform, command: invoke.command,
                                             errorCode: result.error?.code, errorMessage: result.error?.message)
        else { return (nil, []) }
        let before = pendingActions.live(nodeId: invoke.nodeId, nowMs: nowMs).map(\.id)
        let action = pendingActions.enqueue(nodeId: invoke.nodeId, command: invoke.command, paramsJSON: invoke.paramsJSON,
                                            idempotencyKey: invoke.idempotencyKey ?? invoke.id, nowMs: nowMs,
                                            newId: { ids.uuidString() })
        guard !before.contains(action.id) else { return (action, []) }
        return (action, [.log(.pendingActionQueued(nodeId: invoke.nodeId, actionId: action.id, command: action.command))])
    }

    /// The `talk.event` broadcast mirrored from a successful `talk.ptt.*` invoke, with the talk
    /// session's next sequence number (``TalkPushToTalkEvent``).
    mutating func talkEvent(nodeId: String, command: String, result: NodeInvokeResult, nowMs: Int64,
                            ids: inout SeededRandom) -> [GatewayEffect] {
        guard result.ok, let type = TalkPushToTalkEvent.type(forCommand: command) else { return [] }
        let payload = result.payload ?? result.payloadJSON.flatMap { try? JSONValue(parsing: $0) }
        let captureId = payload?["captureId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? ids.uuidString()
        let sessionId = TalkPushToTalkEvent.sessionId(nodeId: nodeId, captureId: captureId)
        let seq = (policy.talkEventSeq[sessionId] ?? 0) + 1
        policy.talkEventSeq[sessionId] = seq
        if policy.talkEventSeq.count > TalkPushToTalkEvent.maxTrackedSessions,
           let oldest = policy.talkEventSeq.keys.sorted().first(where: { $0 != sessionId }) {
            policy.talkEventSeq.removeValue(forKey: oldest)
        }
        let event = TalkPushToTalkEvent(nodeId: nodeId, command: command, type: type, captureId: captureId, seq: seq,
                                        timestampMs: nowMs, status: payload?["status"]?.stringValue,
                                        transcript: payload?["transcript"]?.stringValue)
        return [.broadcast(event: GatewayEventName.talkEvent.rawValue, payload: event.payload, stateVersion: nil)]
    }
}
