import GatewayProtocol
import Locking

extension Gateway {
    /// Sends `node.invoke.request` without waiting for the result (the console's `invoke
    /// --no-wait`): the `invoke.sent` event carries its id, `invoke.result` its answer.
    /// - Parameters:
    ///   - nodeId: the node.
    ///   - command: the command name.
    ///   - params: sent as `paramsJSON`.
    ///   - timeoutMs: `timeoutMs` of the request; the Gateway gives up after it on its clock.
    ///   - transcriptLine: the operator-action line to record instead of `invoke <command> on <node>`.
    /// - Returns: the connection the request went to, or `nil` when the node is not connected.
    func sendInvoke(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int, transcriptLine: String? = nil) async -> String? {
        recordOperatorAction(transcriptLine ?? "invoke \(command) on \(nodeId)")
        return await core.sendInvoke(nodeId: nodeId, command: command, params: params, timeoutMs: timeoutMs)
    }

    /// Sends `node.invoke.request` and waits for the node's result, registering the waiter in the
    /// same actor turn that sends the request, so that a node answering at once is not missed
    /// (the console's `invoke`).
    /// - Parameters:
    ///   - nodeId: the node.
    ///   - command: the command name.
    ///   - params: sent as `paramsJSON`.
    ///   - timeoutMs: `timeoutMs` of the request; the Gateway gives up after it on its clock.
    ///   - transcriptLine: the operator-action line to record instead of `invoke <command> on
    ///     <node>` (an invoke sent although the node command policy refuses it says so).
    ///   - wait: how long to wait in real time before giving up (`.timedOut`).
    /// - Returns: the result, `.timedOut`, or `.nodeDisconnected` (also when the node is not connected).
    func invokeAndWait(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int,
                       idempotencyKey: String? = nil, transcriptLine: String? = nil, wait: Duration) async -> InvokeOutcome {
        recordOperatorAction(transcriptLine ?? "invoke \(command) on \(nodeId)")
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
    // Every access goes through the lock.
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
    /// Starts an invoke nobody waits for: the connection it went to, or `nil` without the node.
    func sendInvoke(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int) -> String? {
        guard let connectionId = nodeState.registry.nodes[nodeId]?.connectionId else { return nil }
        return startInvoke(nodeId: nodeId, command: command, params: params, timeoutMs: timeoutMs, idempotencyKey: nil) == nil
            ? nil : connectionId
    }

    func startInvokeAndWait(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int,
                            idempotencyKey: String?, ticket: InvokeTicket) async -> InvokeOutcome {
        guard let id = startInvoke(nodeId: nodeId, command: command, params: params, timeoutMs: timeoutMs,
                                   idempotencyKey: idempotencyKey) else { return .nodeDisconnected }
        // Sending can end the node's session (a Watch event over its queue limits): the invoke
        // has already failed, and nobody would resume a waiter registered now.
        guard nodeState.registry.pendingInvokes[id] != nil else { return .nodeDisconnected }
        guard ticket.start(id) else {
            _ = nodeState.registry.cancelInvoke(id: id)
            return .timedOut
        }
        return await withCheckedContinuation { continuation in
            nodeState.invokeWaiters[id] = continuation
        }
    }
}

/// One open connection as the console lists it.
public struct ConnectionSummary: Sendable, Hashable {
    /// The connection id (`connection.opened`).
    public var connectionId: String
    /// The peer's address.
    public var remoteAddress: String
    /// The session's role once `hello-ok` was sent; `nil` while the handshake is pending.
    public var role: String?
    /// The session's device id.
    public var deviceId: String?
    /// `client.id` of the session.
    public var clientId: String?
    /// Whether a close or reset is already queued.
    public var closing: Bool
}

/// What the Gateway's faults are set to now (the console's `status`).
public struct FaultStatus: Sendable, Hashable {
    /// Methods whose next response will be dropped.
    public var droppedResponses: [String]
    /// The delay before every response, if any.
    public var responseDelay: Duration?
    /// Whether ticks are stopped.
    public var ticksStopped: Bool
    /// Whether connects are answered with 1013 (starting up).
    public var startingUp: Bool
    /// Event frames still to be sent as binary.
    public var eventsAsBinary: Int
    /// Event frames still to be sent fragmented.
    public var eventsFragmented: Int
    /// Whether new connections are dropped (after ``Gateway/beginRestart(restartExpectedMs:)``).
    public var down: Bool = false
}

extension Gateway {
    /// The open connections, oldest first.
    public func openConnections() async -> [ConnectionSummary] {
        await core.connectionSummaries()
    }

    /// The faults armed now.
    public func faultStatus() async -> FaultStatus {
        await core.faultStatus()
    }
}

extension GatewayCore {
    func connectionSummaries() -> [ConnectionSummary] {
        var order: [String: Int] = [:]
        for (position, event) in events.all.enumerated() {
            if case .connectionOpened(let connectionId, _, _) = event { order[connectionId] = position }
        }
        return connectionTable.byId.values
            .sorted { (order[$0.id] ?? -1, $0.id) < (order[$1.id] ?? -1, $1.id) }
            .map { state in
                ConnectionSummary(connectionId: state.id, remoteAddress: state.remoteAddress, role: state.session?.role,
                                  deviceId: state.session?.deviceId, clientId: state.session?.client.id.rawValue,
                                  closing: state.closing)
            }
    }

    func faultStatus() -> FaultStatus {
        let plan = faultLayer.plan
        return FaultStatus(droppedResponses: plan.dropNextResponse.keys.sorted(), responseDelay: plan.responseDelay,
                           ticksStopped: plan.ticksStopped, startingUp: startingUp, eventsAsBinary: plan.nextEventsAsBinary,
                           eventsFragmented: plan.nextEventsFragmented, down: !connectionTable.accepting)
    }
}
