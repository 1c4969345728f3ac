import GatewayProtocol

/// A push the node machine hands to a node's transport. The actor signs and sends it
/// (`GatewayCore.sendPush`, which the fault layer may make a refusal) and reports the answer back
/// with ``NodeState/Input/pushAnswered(_:_:nowMs:)``; `purpose` says what waits for it.
struct PushSend: Sendable, Hashable {
    /// What the push is for, and so what its answer moves on.
    enum Purpose: Sendable, Hashable {
        /// The silent push of the wake sequence `key` (`force`: the second, unthrottled one).
        case invokeWake(key: String, force: Bool)
        /// The reopen nudge of the wake sequence `key`.
        case invokeNudge(key: String)
        /// The silent push sent when a background refusal queued `action` for `caller`, whose
        /// answer says how the push went (upstream wakes the node that refused).
        case queuedWake(OperatorInvokeCaller, action: PendingNodeAction, nodeError: NodeInvokeError?)
    }

    /// The node.
    var nodeId: String
    /// Its stored registration (relay or direct).
    var registration: JSONValue
    /// `background` or `alert`.
    var pushType: String
    /// The push payload.
    var payload: JSONValue
    /// What waits for the answer.
    var purpose: Purpose
}

/// How a wake attempt starts (upstream `maybeWakeNodeWithApns`): not at all, or with a push to
/// this registration.
enum WakeStart: Sendable, Hashable {
    /// Nothing is sent: ``NodeWakeAttempt/Path/throttled`` or ``NodeWakeAttempt/Path/noRegistration``.
    case skipped(NodeWakeAttempt.Path)
    /// Send a silent push to this registration (the attempt is recorded for the throttle).
    case send(registration: JSONValue)
}

/// The wake sequence of an operator's `node.invoke` (docs/protocol.md §6.9.1) as part of the node
/// machine: ``InvokeWakeFlow`` decides each step, this extension performs the steps that are
/// state (throttles, registrations, notes, the dispatch, the answer) and returns the pushes as
/// ``GatewayEffect/sendPush(_:)``, after which it stops until their answer comes back as an
/// input. The clock and the node's connection reach the flows through inputs
/// (``Input/advanceWakes(nowMs:)``, a node's registration, a closed connection).
extension NodeState {
    /// An operator's `node.invoke` for `caller.nodeId` after its first checks: dispatched at once
    /// when the node is connected, otherwise its wake sequence starts (`dispatchHoldMs`: Gateway
    /// time between finding the node and dispatching, which only a fault makes more than 0).
    mutating func routeOperatorInvoke(_ caller: OperatorInvokeCaller, timeoutMs: Int, deadlineMs: Int64?, dispatchHoldMs: Int64 = 0,
                                      nowMs: Int64, ids: inout SeededRandom) -> [GatewayEffect] {
        guard registry.nodes[caller.nodeId] == nil else {
            return dispatchOperatorInvoke(caller, timeoutMs: timeoutMs, nowMs: nowMs, ids: &ids)
        }
        var flow = InvokeWakeFlow(nodeId: caller.nodeId, deadlineMs: deadlineMs, dispatchHoldMs: dispatchHoldMs)
        let key = "\(caller.connectionId)\u{1F}\(caller.requestId)"
        let step = flow.start(facts: wakeFacts(caller.nodeId, nowMs: nowMs))
        invokeWake.pending[key] = InvokeWakeState.Pending(flow: flow, caller: caller, timeoutMs: timeoutMs)
        return run(step, forWake: key, nowMs: nowMs, ids: &ids)
    }

    /// Sends the invoke to the node's current connection and remembers the caller until the node
    /// answers; refused when the command policy (the call's admission policy, and the one in
    /// force now) does not let it through to the node now connected.
    mutating func dispatchOperatorInvoke(_ caller: OperatorInvokeCaller, timeoutMs: Int, nowMs: Int64,
                                         ids: inout SeededRandom) -> [GatewayEffect] {
        // A policy changed while the node was woken may take a command away but never grants one
        // (nodes.invoke.ts: "A reload may revoke authority for an in-flight request, but it must
        // not retroactively grant one").
        if let admitted = caller.admittedPolicy, admitted != commandPolicy, let node = policyNode(caller.nodeId),
           let refusal = admitted.refusal(command: caller.command, node: node) {
            return [Self.deliver(.failure(refusal), to: caller)]
        }
        if let refusal = commandRefusal(nodeId: caller.nodeId, command: caller.command) {
            return [Self.deliver(.failure(refusal), to: caller)]
        }
        let dispatch = InvokeDispatch(nodeId: caller.nodeId, command: caller.command, params: caller.params, timeoutMs: timeoutMs,
                                      idempotencyKey: caller.idempotencyKey)
        guard let (id, effects) = self.dispatch(dispatch, nowMs: nowMs, ids: &ids) else { return [] }
        invokeOperatorCallers[id] = caller
        return effects
    }

    /// Invoke `id` ended: whoever waits through the scripting API learns it
    /// (``GatewayEffect/finishInvoke(_:outcome:queued:)``), and an operator's `node.invoke` is
    /// answered; when a background refusal queued a foreground action, the node is woken first
    /// and the answer says how (it then waits for the push's answer).
    mutating func finishInvoke(_ id: String, outcome: InvokeOutcome, queued: PendingNodeAction?, nowMs: Int64) -> [GatewayEffect] {
        let finished = GatewayEffect.finishInvoke(id, outcome: outcome, queued: queued)
        guard let caller = invokeOperatorCallers.removeValue(forKey: id) else { return [finished] }
        guard let queued, case .result(let result) = outcome else {
            return [finished, Self.deliver(OperatorInvokeReply.reply(nodeId: caller.nodeId, command: caller.command, outcome: outcome),
                                           to: caller)]
        }
        // Upstream wakes the node that refused in the background (nodes.invoke.ts@296f520b).
        switch beginWake(nodeId: caller.nodeId, force: false, nowMs: nowMs) {
        case .send(let registration):
            return [finished, Self.wakePush(nodeId: caller.nodeId, registration: registration, nowMs: nowMs,
                                            purpose: .queuedWake(caller, action: queued, nodeError: result.error))]
        case .skipped(let path):
            let attempt = NodeWakeAttempt(nodeId: caller.nodeId, path: path, delivery: nil, reason: PushRelay.defaultWakeReason)
            return [finished, Self.deliver(.failure(OperatorInvokeReply.queued(queued, nodeError: result.error, wake: attempt)),
                                           to: caller)]
        }
    }

    /// Upstream's `maybeWakeNodeWithApns` before the send: throttled (unless forced) within 15 s
    /// of the last attempt, nothing without a stored registration, else the attempt is recorded
    /// and the push goes to the registration.
    mutating func beginWake(nodeId: String, force: Bool, nowMs: Int64) -> WakeStart {
        if invokeWake.throttle.wakeThrottled(nodeId: nodeId, force: force, nowMs: nowMs) { return .skipped(.throttled) }
        guard let registration = push.registrations[nodeId] else { return .skipped(.noRegistration) }
        invokeWake.throttle.recordWakeAttempt(nodeId: nodeId, nowMs: nowMs)
        return .send(registration: registration)
    }

    /// Every wake flow looks at the clock and the node's connection again, in key order; a flow
    /// that sends a push stops the pass until the push's answer comes back.
    mutating func advanceWakes(nowMs: Int64, ids: inout SeededRandom) -> [GatewayEffect] {
        invokeWake.passQueue = invokeWake.pending.keys.sorted()
        return continueWakePass(nowMs: nowMs, ids: &ids)
    }

    /// A push's answer: a stale direct registration is forgotten, and what waited for the push
    /// moves on.
    mutating func pushAnswered(_ send: PushSend, _ delivery: PushDelivery, nowMs: Int64, ids: inout SeededRandom) -> [GatewayEffect] {
        let nodeId = send.nodeId
        var effects = clearStaleRegistration(nodeId: nodeId, registration: send.registration, delivery: delivery)
        let path: NodeWakeAttempt.Path = delivery.accepted ? .sent : .sendError
        let key: String
        let step: InvokeWakeFlow.Step
        switch send.purpose {
        case .queuedWake(let caller, let action, let nodeError):
            let attempt = NodeWakeAttempt(nodeId: nodeId, path: path, delivery: delivery, reason: PushRelay.defaultWakeReason)
            return effects + [Self.deliver(.failure(OperatorInvokeReply.queued(action, nodeError: nodeError, wake: attempt)), to: caller)]
        case .invokeWake(let wakeKey, let force):
            effects.append(Self.wakeNote("node.invoke wake \(force ? "(forced) " : "")for \(nodeId): \(path.rawValue)"))
            guard var pending = invokeWake.pending[wakeKey] else { return effects + continueWakePass(nowMs: nowMs, ids: &ids) }
            step = pending.flow.wakeAttempted(available: true, facts: wakeFacts(nodeId, nowMs: nowMs))
            invokeWake.pending[wakeKey] = pending
            key = wakeKey
        case .invokeNudge(let nudgeKey):
            if delivery.accepted { invokeWake.throttle.recordNudgeSent(nodeId: nodeId, nowMs: nowMs) }
            guard var pending = invokeWake.pending[nudgeKey] else { return effects + continueWakePass(nowMs: nowMs, ids: &ids) }
            step = pending.flow.nudgeAttempted(facts: wakeFacts(nodeId, nowMs: nowMs))
            invokeWake.pending[nudgeKey] = pending
            key = nudgeKey
        }
        effects += run(step, forWake: key, nowMs: nowMs, ids: &ids)
        if Self.awaitsPush(effects) { return effects }
        return effects + continueWakePass(nowMs: nowMs, ids: &ids)
    }

    // MARK: - Steps

    /// Advances the flows left in the current pass, until one waits for a push.
    private mutating func continueWakePass(nowMs: Int64, ids: inout SeededRandom) -> [GatewayEffect] {
        var effects: [GatewayEffect] = []
        while !invokeWake.passQueue.isEmpty {
            let key = invokeWake.passQueue.removeFirst()
            guard var pending = invokeWake.pending[key],
                  let step = pending.flow.advance(facts: wakeFacts(pending.caller.nodeId, nowMs: nowMs)) else { continue }
            invokeWake.pending[key] = pending
            effects += run(step, forWake: key, nowMs: nowMs, ids: &ids)
            if Self.awaitsPush(effects) { return effects }
        }
        return effects
    }

    /// Performs the steps of flow `key` from `first` on, until the flow waits (for the clock, the
    /// node, or a push: then the push is the last effect) or ends.
    private mutating func run(_ first: InvokeWakeFlow.Step, forWake key: String, nowMs: Int64,
                              ids: inout SeededRandom) -> [GatewayEffect] {
        var step = first
        var effects: [GatewayEffect] = []
        while var pending = invokeWake.pending[key] {
            let nodeId = pending.caller.nodeId
            switch step {
            case .sendWake(let force):
                switch beginWake(nodeId: nodeId, force: force, nowMs: nowMs) {
                case .send(let registration):
                    return effects + [Self.wakePush(nodeId: nodeId, registration: registration, nowMs: nowMs,
                                                    purpose: .invokeWake(key: key, force: force))]
                case .skipped(let path):
                    effects.append(Self.wakeNote("node.invoke wake \(force ? "(forced) " : "")for \(nodeId): \(path.rawValue)"))
                    step = pending.flow.wakeAttempted(available: path != .noRegistration, facts: wakeFacts(nodeId, nowMs: nowMs))
                    invokeWake.pending[key] = pending
                }
            case .sendNudge:
                if invokeWake.throttle.nudgeThrottled(nodeId: nodeId, nowMs: nowMs) {
                    effects.append(Self.wakeNote("no reopen nudge to \(nodeId): one was sent less than 10 min ago"))
                } else if let registration = push.registrations[nodeId] {
                    let payload = PushRelay.alertPayload(title: InvokeWakeTimings.nudgeTitle, body: InvokeWakeTimings.nudgeBody,
                                                         nodeId: nodeId, nowMs: nowMs)
                    return effects + [.sendPush(PushSend(nodeId: nodeId, registration: registration, pushType: "alert",
                                                         payload: payload, purpose: .invokeNudge(key: key)))]
                } else {
                    effects.append(Self.wakeNote("no reopen nudge to \(nodeId): no push registration"))
                }
                step = pending.flow.nudgeAttempted(facts: wakeFacts(nodeId, nowMs: nowMs))
                invokeWake.pending[key] = pending
            case .wait(let untilMs):
                effects.append(Self.wakeNote("node.invoke for \(nodeId) waits for the node until Gateway time \(untilMs)"))
                return effects
            case .dispatch(let connectionId):
                invokeWake.pending.removeValue(forKey: key)
                // The final route check: the connection the wait found must still be the node's.
                guard registry.nodes[nodeId]?.connectionId == connectionId else {
                    return effects + Self.answerWake(pending.caller, .routeChanged)
                }
                let remaining = pending.flow.deadlineMs.map { Int(max(1, $0 - nowMs)) } ?? pending.timeoutMs
                return effects + dispatchOperatorInvoke(pending.caller, timeoutMs: remaining, nowMs: nowMs, ids: &ids)
            case .answer(let answer):
                invokeWake.pending.removeValue(forKey: key)
                return effects + Self.answerWake(pending.caller, answer)
            }
        }
        return effects
    }

    /// Upstream's `clearStaleApnsRegistrationIfNeeded` (`shouldClearStoredApnsRegistration`,
    /// `src/infra/push-apns.ts`): a direct registration answered 410, or 400 `BadDeviceToken`,
    /// is forgotten if it is still the stored one; relay registrations are kept.
    mutating func clearStaleRegistration(nodeId: String, registration: JSONValue, delivery: PushDelivery) -> [GatewayEffect] {
        guard PushRelay.isStaleRegistration(registration: registration, delivery: delivery),
              push.registrations[nodeId] == registration else { return [] }
        push.registrations.removeValue(forKey: nodeId)
        return [Self.wakeNote("push registration of \(nodeId) cleared: the transport answered \(delivery.status) \(delivery.reason ?? "")")]
    }

    private func wakeFacts(_ nodeId: String, nowMs: Int64) -> InvokeWakeFlow.Facts {
        InvokeWakeFlow.Facts(nowMs: nowMs, connectionId: registry.nodes[nodeId]?.connectionId)
    }

    /// Whether `effects` end with a push whose answer the machine waits for.
    private static func awaitsPush(_ effects: [GatewayEffect]) -> Bool {
        if case .sendPush? = effects.last { true } else { false }
    }

    /// The silent wake push to `registration`.
    private static func wakePush(nodeId: String, registration: JSONValue, nowMs: Int64, purpose: PushSend.Purpose) -> GatewayEffect {
        .sendPush(PushSend(nodeId: nodeId, registration: registration, pushType: "background",
                           payload: PushRelay.backgroundPayload(nodeId: nodeId, reason: PushRelay.defaultWakeReason, nowMs: nowMs),
                           purpose: purpose))
    }

    private static func wakeNote(_ text: String) -> GatewayEffect {
        .note(text, on: "-")
    }

    private static func answerWake(_ caller: OperatorInvokeCaller, _ answer: InvokeWakeFlow.Answer) -> [GatewayEffect] {
        let error = switch answer {
        case .notConnected: OperatorInvokeReply.notConnected(nodeId: caller.nodeId)
        case .timedOut: OperatorInvokeReply.timedOutBeforeDispatch()
        case .routeChanged: OperatorInvokeReply.routeChanged()
        }
        return [wakeNote("node.invoke for \(caller.nodeId) ends without a dispatch: \(answer)"), deliver(.failure(error), to: caller)]
    }

    /// The answer to an operator's `node.invoke`: on its socket, or to the scripting API's waiter.
    static func deliver(_ reply: OperatorInvokeReply, to caller: OperatorInvokeCaller) -> GatewayEffect {
        if caller.connectionId == OperatorInvokeCaller.scriptedConnectionId {
            let answer: OperatorInvokeAnswer = switch reply {
            case .success(let payload): .ok(payload)
            case .failure(let error): .failed(error)
            }
            return .answerScriptedInvoke(requestId: caller.requestId, answer)
        }
        let address = ReplyAddress(requestId: caller.requestId, method: GatewayMethod.nodeInvoke.rawValue,
                                   connectionId: caller.connectionId)
        return switch reply {
        case .success(let payload): address.success(payload)
        case .failure(let error): address.failure(error)
        }
    }
}
