import GatewayProtocol

/// The actor's side of `node.invoke`'s wake sequence (docs/protocol.md §6.9.1): the rules are the
/// node machine's (`State/NodeState+Wake.swift`); here its feed (with the fault layer's dispatch
/// hold) and the scripting API's waiters.
extension GatewayCore {
    /// Feeds an operator's `node.invoke` to the node machine, with the dispatch hold the fault
    /// layer gives a wake sequence.
    func routeOperatorInvoke(_ caller: OperatorInvokeCaller, timeoutMs: Int, deadlineMs: Int64?) {
        let hold = faultLayer.wakeDispatchHold(nodeConnected: nodeState.registry.nodes[caller.nodeId] != nil)
        handleNodes(.operatorInvoke(caller, timeoutMs: timeoutMs, deadlineMs: deadlineMs, dispatchHoldMs: hold, nowMs: nowMs))
    }

    /// An operator `node.invoke` without a socket (``Gateway/operatorInvoke(nodeId:command:params:timeoutMs:)``).
    func scriptedOperatorInvoke(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int) async -> OperatorInvokeAnswer {
        nodeState.invokeWake.scriptedCount += 1
        let requestId = "scripted-invoke-\(nodeState.invokeWake.scriptedCount)"
        let caller = OperatorInvokeCaller(connectionId: OperatorInvokeCaller.scriptedConnectionId, requestId: requestId,
                                          nodeId: nodeId, command: command, params: params, idempotencyKey: requestId)
        return await withCheckedContinuation { continuation in
            nodeState.invokeWake.scriptedAnswers[requestId] = continuation
            routeOperatorInvoke(caller, timeoutMs: timeoutMs, deadlineMs: timeoutMs > 0 ? nowMs + Int64(timeoutMs) : nil)
        }
    }

    func armWakeDispatchHold(_ ms: Int64) {
        arm(.wakeDispatchHold(ms: ms))
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
        await core.nodeState.push.registrations[nodeId] != nil
    }
}
