import GatewayProtocol

/// The glue between `node.invoke` and ``InvokeWakeFlow``: pushes through the fake relay or APNs
/// stand-in, timers on the Gateway clock, and the answers (docs/protocol.md §6.9.1).
extension GatewayCore {
    /// Answers an operator's `node.invoke` for `caller.nodeId`: dispatches at once when the node
    /// is connected, otherwise starts the wake sequence.
    func routeOperatorInvoke(_ caller: OperatorInvokeCaller, timeoutMs: Int, deadlineMs: Int64?) {
        // The command policy's first check ran in `nodeInvoke`, before any wake.
        guard nodes.nodes[caller.nodeId] == nil else {
            return dispatchOperatorInvoke(caller, timeoutMs: timeoutMs)
        }
        let hold = invokeWake.nextDispatchHoldMs
        invokeWake.nextDispatchHoldMs = 0
        var flow = InvokeWakeFlow(nodeId: caller.nodeId, deadlineMs: deadlineMs, dispatchHoldMs: hold)
        let key = "\(caller.connectionId)\u{1F}\(caller.requestId)"
        let step = flow.start(facts: wakeFacts(caller.nodeId))
        invokeWake.pending[key] = InvokeWakeState.Pending(flow: flow, caller: caller, timeoutMs: timeoutMs)
        perform(step, forWake: key)
    }

    /// Sends the invoke to the node's current connection and parks the caller until the node answers.
    func dispatchOperatorInvoke(_ caller: OperatorInvokeCaller, timeoutMs: Int) {
        // Command policy, second check (at dispatch, against the node now connected): under the
        // policy of the call's admission and the one in force now, so that a change made while
        // the node was woken never grants a command (nodes.invoke.ts: "A reload may revoke
        // authority for an in-flight request, but it must not retroactively grant one").
        if let admitted = caller.admittedPolicy, admitted != nodeCommandPolicy, let node = policyNode(caller.nodeId),
           let refusal = admitted.refusal(command: caller.command, node: node) {
            return deliver(.failure(refusal), to: caller)
        }
        if let refusal = nodeCommandRefusal(nodeId: caller.nodeId, command: caller.command) {
            return deliver(.failure(refusal), to: caller)
        }
        if let invokeId = startInvoke(nodeId: caller.nodeId, command: caller.command, params: caller.params,
                                      timeoutMs: timeoutMs, idempotencyKey: caller.idempotencyKey) {
            invokeOperatorCallers[invokeId] = caller
        }
    }

    /// Advances every wake flow after the clock moved or a node connected or disconnected.
    func advanceInvokeWakes() {
        for key in invokeWake.pending.keys.sorted() {
            guard var pending = invokeWake.pending[key],
                  let step = pending.flow.advance(facts: wakeFacts(pending.caller.nodeId)) else { continue }
            invokeWake.pending[key] = pending
            perform(step, forWake: key)
        }
    }

    private func wakeFacts(_ nodeId: String) -> InvokeWakeFlow.Facts {
        InvokeWakeFlow.Facts(nowMs: nowMs, connectionId: nodes.nodes[nodeId]?.connectionId)
    }

    private func perform(_ first: InvokeWakeFlow.Step, forWake key: String) {
        var step = first
        while var pending = invokeWake.pending[key] {
            let nodeId = pending.caller.nodeId
            switch step {
            case .sendWake(let force):
                let attempt = sendInvokeWake(nodeId: nodeId, force: force)
                noteWake("node.invoke wake \(force ? "(forced) " : "")for \(nodeId): \(attempt.path.rawValue)")
                step = pending.flow.wakeAttempted(available: attempt.isAvailable, facts: wakeFacts(nodeId))
                invokeWake.pending[key] = pending
            case .sendNudge:
                sendWakeNudge(nodeId: nodeId)
                step = pending.flow.nudgeAttempted(facts: wakeFacts(nodeId))
                invokeWake.pending[key] = pending
            case .wait(let untilMs):
                noteWake("node.invoke for \(nodeId) waits for the node until Gateway time \(untilMs)")
                invokeWake.pending[key] = pending
                return
            case .dispatch(let connectionId):
                invokeWake.pending.removeValue(forKey: key)
                // The final route check: the connection the wait found must still be the node's.
                guard nodes.nodes[nodeId]?.connectionId == connectionId else {
                    return answerWake(pending.caller, .routeChanged)
                }
                let remaining = pending.flow.deadlineMs.map { Int(max(1, $0 - nowMs)) } ?? pending.timeoutMs
                return dispatchOperatorInvoke(pending.caller, timeoutMs: remaining)
            case .answer(let answer):
                invokeWake.pending.removeValue(forKey: key)
                return answerWake(pending.caller, answer)
            }
        }
    }

    private func answerWake(_ caller: OperatorInvokeCaller, _ answer: InvokeWakeFlow.Answer) {
        noteWake("node.invoke for \(caller.nodeId) ends without a dispatch: \(answer)")
        let error = switch answer {
        case .notConnected: OperatorInvokeReply.notConnected(nodeId: caller.nodeId)
        case .timedOut: OperatorInvokeReply.timedOutBeforeDispatch()
        case .routeChanged: OperatorInvokeReply.routeChanged()
        }
        deliver(.failure(error), to: caller)
    }

    /// Answers the operator: on its socket, or to the scripting API's waiter.
    func deliver(_ reply: OperatorInvokeReply, to caller: OperatorInvokeCaller) {
        if caller.connectionId == OperatorInvokeCaller.scriptedConnectionId {
            let answer: OperatorInvokeAnswer = switch reply {
            case .success(let payload): .ok(payload)
            case .failure(let error): .failed(error)
            }
            invokeWake.scriptedAnswers.removeValue(forKey: caller.requestId)?.resume(returning: answer)
            return
        }
        switch reply {
        case .success(let payload):
            respond(.success(id: caller.requestId, payload: payload), method: GatewayMethod.nodeInvoke.rawValue, to: caller.connectionId)
        case .failure(let error):
            fail(caller.requestId, method: GatewayMethod.nodeInvoke.rawValue, error, to: caller.connectionId)
        }
    }

    /// An operator `node.invoke` without a socket (``Gateway/operatorInvoke(nodeId:command:params:timeoutMs:)``).
    func scriptedOperatorInvoke(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int) async -> OperatorInvokeAnswer {
        invokeWake.scriptedCount += 1
        let requestId = "scripted-invoke-\(invokeWake.scriptedCount)"
        let caller = OperatorInvokeCaller(connectionId: OperatorInvokeCaller.scriptedConnectionId, requestId: requestId,
                                          nodeId: nodeId, command: command, params: params, idempotencyKey: requestId)
        return await withCheckedContinuation { continuation in
            invokeWake.scriptedAnswers[requestId] = continuation
            routeOperatorInvoke(caller, timeoutMs: timeoutMs, deadlineMs: timeoutMs > 0 ? nowMs + Int64(timeoutMs) : nil)
        }
    }

    private func noteWake(_ text: String) {
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: "-", kind: .note,
                                          text: text))
    }

    /// Upstream's `maybeWakeNodeWithApns` on the fake transports: throttled (unless forced)
    /// within 15 s of the last attempt, `no-registration` without a stored registration, else a
    /// silent push whose refusal by APNs as a bad token clears a direct registration.
    func sendInvokeWake(nodeId: String, force: Bool) -> NodeWakeAttempt {
        let reason = PushRelay.defaultWakeReason
        if invokeWake.throttle.wakeThrottled(nodeId: nodeId, force: force, nowMs: nowMs) {
            return NodeWakeAttempt(nodeId: nodeId, path: .throttled, delivery: nil, reason: reason)
        }
        guard let registration = pushRegistrations[nodeId] else {
            return NodeWakeAttempt(nodeId: nodeId, path: .noRegistration, delivery: nil, reason: reason)
        }
        invokeWake.throttle.recordWakeAttempt(nodeId: nodeId, nowMs: nowMs)
        let delivery = sendPush(nodeId: nodeId, registration: registration, pushType: "background",
                                payload: PushRelay.backgroundPayload(nodeId: nodeId, reason: reason, nowMs: nowMs))
        clearStaleRegistration(nodeId: nodeId, registration: registration, delivery: delivery)
        return NodeWakeAttempt(nodeId: nodeId, path: delivery.accepted ? .sent : .sendError, delivery: delivery, reason: reason)
    }

    /// Upstream's `maybeSendNodeWakeNudge`: the reopen alert, at most one accepted per node in
    /// 10 min; nothing without a registration.
    func sendWakeNudge(nodeId: String) {
        guard !invokeWake.throttle.nudgeThrottled(nodeId: nodeId, nowMs: nowMs) else {
            return noteWake("no reopen nudge to \(nodeId): one was sent less than 10 min ago")
        }
        guard let registration = pushRegistrations[nodeId] else {
            return noteWake("no reopen nudge to \(nodeId): no push registration")
        }
        let payload = PushRelay.alertPayload(title: InvokeWakeTimings.nudgeTitle, body: InvokeWakeTimings.nudgeBody,
                                             nodeId: nodeId, nowMs: nowMs)
        let delivery = sendPush(nodeId: nodeId, registration: registration, pushType: "alert", payload: payload)
        clearStaleRegistration(nodeId: nodeId, registration: registration, delivery: delivery)
        if delivery.accepted { invokeWake.throttle.recordNudgeSent(nodeId: nodeId, nowMs: nowMs) }
    }

    /// Upstream's `clearStaleApnsRegistrationIfNeeded` (`shouldClearStoredApnsRegistration`,
    /// `src/infra/push-apns.ts`): a direct registration answered 410, or 400 `BadDeviceToken`,
    /// is forgotten if it is still the stored one; relay registrations are kept.
    func clearStaleRegistration(nodeId: String, registration: JSONValue, delivery: PushDelivery) {
        guard PushRelay.isStaleRegistration(registration: registration, delivery: delivery),
              pushRegistrations[nodeId] == registration else { return }
        pushRegistrations.removeValue(forKey: nodeId)
        noteWake("push registration of \(nodeId) cleared: the transport answered \(delivery.status) \(delivery.reason ?? "")")
    }

    func armWakeDispatchHold(_ ms: Int64) {
        invokeWake.nextDispatchHoldMs = max(0, ms)
        noteFault("the next node.invoke that finds its woken node holds the dispatch for \(ms) ms")
    }
}

extension Gateway {
    /// Fault: the next `node.invoke` whose wake finds the node holds the dispatch for `duration`
    /// of Gateway time, as upstream's asynchronous checks between finding the node and
    /// dispatching can. A node whose connection changes meanwhile (a reconnect or a disconnect)
    /// gets `UNAVAILABLE "node connection changed before dispatch"`, `details.code ROUTE_CHANGED`
    /// (docs/protocol.md §6.9.1).
    public func holdNextWakeDispatch(for duration: Duration) async {
        recordOperatorAction("hold the next woken dispatch for \(duration.milliseconds) ms")
        await core.armWakeDispatchHold(duration.milliseconds)
    }

    /// Invokes `command` on `nodeId` exactly as an operator's `node.invoke` would (docs/protocol.md
    /// §6.9): a node that is not connected is woken first (§6.9.1: silent push, waits, forced push,
    /// nudge), and the answer is what the operator would read. The pushes are recorded
    /// (``pushDeliveries()``); none reaches a device by itself.
    /// - Parameter timeoutMs: the caller's `timeoutMs`, which bounds the wake and the invoke on the
    ///   Gateway clock; it must be positive, so that the call always ends.
    public func operatorInvoke(nodeId: String, command: String, params: JSONValue? = nil,
                               timeoutMs: Int = 30_000) async -> OperatorInvokeAnswer {
        recordOperatorAction("operator node.invoke \(command) on \(nodeId) (timeoutMs \(timeoutMs))")
        return await core.scriptedOperatorInvoke(nodeId: nodeId, command: command, params: params, timeoutMs: max(1, timeoutMs))
    }

    /// Whether `nodeId` still has a stored push registration (a bad-token answer clears a direct one).
    public func hasPushRegistration(nodeId: String) async -> Bool {
        await core.pushRegistrations[nodeId] != nil
    }
}
