import GatewayProtocol
import Locking

extension Gateway {
    /// Sends `node.invoke.request` and waits for the node's result, registering the waiter in the
    /// same actor turn that sends the request, so that a node answering at once is not missed
    /// (the console's `invoke`).
    /// - Parameters:
    ///   - nodeId: the node.
    ///   - command: the command name.
    ///   - params: sent as `paramsJSON`.
    ///   - timeoutMs: `timeoutMs` of the request; the Gateway gives up after it on its clock.
    ///   - wait: how long to wait in real time before giving up (`.timedOut`).
    /// - Returns: the result, `.timedOut`, or `.nodeDisconnected` (also when the node is not connected).
    func invokeAndWait(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int,
                       idempotencyKey: String? = nil, wait: Duration) async -> InvokeOutcome {
        let ticket = InvokeTicket()
        return await withTaskGroup(of: InvokeOutcome?.self) { group in
            group.addTask {
                await self.core.startInvokeAndWait(nodeId: nodeId, command: command, params: params,
                                                   timeoutMs: timeoutMs, idempotencyKey: idempotencyKey, ticket: ticket)
            }
            group.addTask {
                // The caller's patience, on the Gateway's wait time line (virtual in a simulated run).
                if await self.clock.waitTimeline.sleep(for: wait, purpose: .deadline) == .cancelled { return nil }
                if let id = ticket.expire() { await self.core.abandonInvoke(id) }
                return nil
            }
            var outcome: InvokeOutcome = .timedOut
            for await result in group {
                if let result {
                    outcome = result
                    break
                }
            }
            group.cancelAll()
            return outcome
        }
    }
}

/// Hands the invoke id from the sending actor turn to the real-time deadline, and tells the
/// sender when the deadline came first.
final class InvokeTicket: Sendable {
    // Every access goes through the mutex.
    private let state = Locked<(id: String?, expired: Bool)>((nil, false))

    /// Records the id; `false` when the deadline already passed.
    func start(_ id: String) -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.id = id
            return true
        }
    }

    /// Marks the deadline as passed; returns the id when the invoke was started.
    func expire() -> String? {
        state.withLock { state in
            state.expired = true
            return state.id
        }
    }
}

extension GatewayCore {
    /// `startInvoke` and the waiter registration in one actor turn: no result can be handled in
    /// between (`withCheckedContinuation` runs its body before suspending).
    func startInvokeAndWait(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int,
                            idempotencyKey: String?, ticket: InvokeTicket) async -> InvokeOutcome {
        guard let id = startInvoke(nodeId: nodeId, command: command, params: params, timeoutMs: timeoutMs,
                                   idempotencyKey: idempotencyKey) else { return .nodeDisconnected }
        guard ticket.start(id) else {
            _ = nodes.cancelInvoke(id: id)
            return .timedOut
        }
        return await withCheckedContinuation { continuation in
            invokeWaiters[id] = continuation
        }
    }
}
