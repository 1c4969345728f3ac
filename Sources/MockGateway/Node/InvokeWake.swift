import GatewayProtocol

/// Upstream's wake windows for a `node.invoke` to an absent node (docs/protocol.md §6.9.1).
///
/// Upstream (read for facts, not copied): `NODE_WAKE_RECONNECT_WAIT_MS = 3_000` and
/// `NODE_WAKE_RECONNECT_RETRY_WAIT_MS = 12_000` (`src/gateway/node-wake-state.ts@502850c1`),
/// `wakeThrottleMs: 15_000` and `wakeNudgeThrottleMs: 10 * 60_000`
/// (`src/gateway/server-methods/nodes-policy.ts`, `nodeInvokePolicy`).
enum InvokeWakeTimings {
    /// How long the Gateway waits for the node after the first silent push.
    static let reconnectWaitMs: Int64 = 3_000
    /// How long it waits after the forced second push.
    static let retryWaitMs: Int64 = 12_000
    /// A non-forced silent push to the same node is throttled for this long after the last one sent.
    static let wakeThrottleMs: Int64 = 15_000
    /// The reconnect nudge (an alert) goes to a node at most once in this window.
    static let nudgeThrottleMs: Int64 = 600_000
    /// The nudge alert's title and body (`maybeSendNodeWakeNudge`,
    /// `src/gateway/server-methods/nodes.wake.ts@2254f64e`).
    static let nudgeTitle = "OpenClaw needs a quick reopen"
    /// See ``nudgeTitle``.
    static let nudgeBody = "Tap to reopen OpenClaw and restore the node connection."
}

/// The per-node wake and nudge throttles (upstream `runNodeWakeAttempt` /
/// `runNodeWakeNudgeAttempt`, `src/gateway/node-wake-state.ts@502850c1`): a non-forced wake
/// within 15 s of the last *attempted* send is answered `throttled` (and counts as available,
/// so the caller still waits); a nudge within 10 min of the last *sent* nudge is not sent.
struct NodeWakeThrottle: Sendable, Hashable {
    private var lastWakeAtMs: [String: Int64] = [:]
    private var lastNudgeAtMs: [String: Int64] = [:]

    /// Whether a wake to `nodeId` at `nowMs` is throttled (a forced wake never is).
    func wakeThrottled(nodeId: String, force: Bool, nowMs: Int64) -> Bool {
        guard !force, let last = lastWakeAtMs[nodeId] else { return false }
        return nowMs - last < InvokeWakeTimings.wakeThrottleMs
    }

    /// Records that a silent push was handed to the transport (sent or refused).
    mutating func recordWakeAttempt(nodeId: String, nowMs: Int64) {
        lastWakeAtMs[nodeId] = nowMs
    }

    /// Whether a nudge to `nodeId` at `nowMs` is throttled.
    func nudgeThrottled(nodeId: String, nowMs: Int64) -> Bool {
        guard let last = lastNudgeAtMs[nodeId] else { return false }
        return nowMs - last < InvokeWakeTimings.nudgeThrottleMs
    }

    /// Records a nudge the transport accepted (only an accepted nudge starts the window).
    mutating func recordNudgeSent(nodeId: String, nowMs: Int64) {
        lastNudgeAtMs[nodeId] = nowMs
    }
}

/// The wake sequence of one operator `node.invoke` to a node that is not connected, as a pure
/// state machine on Gateway time (docs/protocol.md §6.9.1). The node machine
/// (`State/NodeState+Wake.swift`) performs each ``Step`` (a push, a timer, a dispatch, an
/// answer) and feeds back what happened.
///
/// The order is upstream's (`node.invoke`, `src/gateway/server-methods/nodes.invoke.ts@296f520b`):
/// a silent push; when it was available (sent, refused by APNs, or throttled) a wait of up to 3 s
/// for the node; then, still absent, a forced push and a wait of up to 12 s; then the nudge alert
/// and `NOT_CONNECTED`. Each wait is cut to what is left of the caller's `timeoutMs`, and an
/// expired deadline at any check answers `TIMEOUT` (nothing dispatched). A node that connects
/// during a wait ends it at once. Before the dispatch the connection is compared with the one the
/// wait found: a different (or no) connection is `ROUTE_CHANGED`.
struct InvokeWakeFlow: Sendable, Hashable {
    /// Where the flow stands.
    enum Stage: Sendable, Hashable {
        case awaitingFirstWake
        case firstWait(untilMs: Int64)
        case awaitingForcedWake
        case forcedWait(untilMs: Int64)
        case awaitingNudge
        case holdingDispatch(untilMs: Int64, connectionId: String)
        case finished
    }

    /// What the glue must do next.
    enum Step: Sendable, Hashable {
        /// Send a silent push (`force` skips the throttle) and report ``wakeAttempted(available:facts:)``.
        case sendWake(force: Bool)
        /// Nothing until `untilMs` or until the node connects.
        case wait(untilMs: Int64)
        /// Send the nudge alert and report ``nudgeAttempted(facts:)``.
        case sendNudge
        /// The node is connected on `connectionId`: check the command policy and dispatch there.
        case dispatch(connectionId: String)
        /// Answer the caller and forget the flow.
        case answer(Answer)
    }

    /// How the flow ends without a dispatch.
    enum Answer: Sendable, Hashable {
        /// `UNAVAILABLE "node not connected"`, `details.code NOT_CONNECTED`.
        case notConnected
        /// The caller's `timeoutMs` ran out first: `TIMEOUT`, nothing dispatched.
        case timedOut
        /// The connection changed between the check and the dispatch: `ROUTE_CHANGED`.
        case routeChanged
    }

    /// What the glue reads from the Gateway each time it advances the flow.
    struct Facts: Sendable, Hashable {
        /// Gateway time.
        var nowMs: Int64
        /// The node's current connection, `nil` when it is not connected.
        var connectionId: String?
    }

    /// The node to wake.
    let nodeId: String
    /// The caller's deadline (`timeoutMs` > 0), `nil` for an unbounded invoke.
    let deadlineMs: Int64?
    /// Gateway time between finding the node and dispatching (upstream's asynchronous checks
    /// there; 0 unless a fault holds the dispatch).
    let dispatchHoldMs: Int64
    /// Where the flow stands.
    private(set) var stage: Stage = .awaitingFirstWake
    private var firstWakeAvailable = false

    /// A flow for an invoke that found `nodeId` absent.
    init(nodeId: String, deadlineMs: Int64?, dispatchHoldMs: Int64 = 0) {
        self.nodeId = nodeId
        self.deadlineMs = deadlineMs
        self.dispatchHoldMs = max(0, dispatchHoldMs)
    }

    /// The instant the flow next needs the clock, if it is waiting.
    var dueMs: Int64? {
        switch stage {
        case .firstWait(let until), .forcedWait(let until), .holdingDispatch(let until, _): until
        default: nil
        }
    }

    private func expired(_ nowMs: Int64) -> Bool {
        deadlineMs.map { nowMs >= $0 } ?? false
    }

    private mutating func finish(_ answer: Answer) -> Step {
        stage = .finished
        return .answer(answer)
    }

    private func waitUntil(_ nowMs: Int64, windowMs: Int64) -> Int64 {
        let end = nowMs + windowMs
        return deadlineMs.map { min(end, $0) } ?? end
    }

    /// The first step: the silent push (or `TIMEOUT` when the deadline is already gone).
    mutating func start(facts: Facts) -> Step {
        if expired(facts.nowMs) { return finish(.timedOut) }
        if let connection = facts.connectionId { return found(connection, facts: facts) }
        stage = .awaitingFirstWake
        return .sendWake(force: false)
    }

    /// The push of ``Step/sendWake(force:)`` went out (or not): `available` is upstream's
    /// `NodeWakeAttempt.available`.
    mutating func wakeAttempted(available: Bool, facts: Facts) -> Step {
        switch stage {
        case .awaitingFirstWake:
            firstWakeAvailable = available
            if expired(facts.nowMs) { return finish(.timedOut) }
            guard available else { return afterFirstWait(facts: facts) }
            stage = .firstWait(untilMs: waitUntil(facts.nowMs, windowMs: InvokeWakeTimings.reconnectWaitMs))
            return .wait(untilMs: dueMs ?? facts.nowMs)
        case .awaitingForcedWake:
            if expired(facts.nowMs) { return finish(.timedOut) }
            guard available else { return afterForcedWait(facts: facts) }
            stage = .forcedWait(untilMs: waitUntil(facts.nowMs, windowMs: InvokeWakeTimings.retryWaitMs))
            return .wait(untilMs: dueMs ?? facts.nowMs)
        default:
            return .wait(untilMs: dueMs ?? facts.nowMs)
        }
    }

    /// The clock moved, or the node's connection changed: ends a wait that is over.
    /// - Returns: `nil` while the flow keeps waiting.
    mutating func advance(facts: Facts) -> Step? {
        switch stage {
        case .firstWait(let until):
            guard facts.connectionId != nil || facts.nowMs >= until else { return nil }
            return afterFirstWait(facts: facts)
        case .forcedWait(let until):
            guard facts.connectionId != nil || facts.nowMs >= until else { return nil }
            return afterForcedWait(facts: facts)
        case .holdingDispatch(let until, let connectionId):
            if expired(facts.nowMs) { return finish(.timedOut) }
            guard facts.nowMs >= until else {
                // A connection that changes during the hold cannot change back: answer now.
                return facts.connectionId == connectionId ? nil : finish(.routeChanged)
            }
            guard facts.connectionId == connectionId else { return finish(.routeChanged) }
            stage = .finished
            return .dispatch(connectionId: connectionId)
        default:
            return nil
        }
    }

    /// The nudge of ``Step/sendNudge`` went out (or was throttled or refused).
    mutating func nudgeAttempted(facts: Facts) -> Step {
        finish(.notConnected)
    }

    private mutating func afterFirstWait(facts: Facts) -> Step {
        if expired(facts.nowMs) { return finish(.timedOut) }
        if let connection = facts.connectionId { return found(connection, facts: facts) }
        guard firstWakeAvailable else { return toNudge(facts: facts) }
        stage = .awaitingForcedWake
        return .sendWake(force: true)
    }

    private mutating func afterForcedWait(facts: Facts) -> Step {
        if expired(facts.nowMs) { return finish(.timedOut) }
        if let connection = facts.connectionId { return found(connection, facts: facts) }
        return toNudge(facts: facts)
    }

    private mutating func toNudge(facts: Facts) -> Step {
        if expired(facts.nowMs) { return finish(.timedOut) }
        stage = .awaitingNudge
        return .sendNudge
    }

    private mutating func found(_ connectionId: String, facts: Facts) -> Step {
        guard dispatchHoldMs > 0 else {
            stage = .finished
            return .dispatch(connectionId: connectionId)
        }
        stage = .holdingDispatch(untilMs: facts.nowMs + dispatchHoldMs, connectionId: connectionId)
        return .wait(untilMs: facts.nowMs + dispatchHoldMs)
    }
}

/// The Gateway's wake bookkeeping: the throttles, the flows in progress (keyed by the operator
/// request they answer), the scripting API's waiting callers and the pass in progress.
struct InvokeWakeState: Sendable {
    /// One flow with the caller it answers.
    struct Pending: Sendable {
        var flow: InvokeWakeFlow
        var caller: OperatorInvokeCaller
        var timeoutMs: Int
    }

    /// The wake and nudge throttles.
    var throttle = NodeWakeThrottle()
    /// The flows in progress, by a Gateway-chosen key.
    var pending: [String: Pending] = [:]
    /// Operator invokes made through the scripting API (``Gateway/operatorInvoke(nodeId:command:params:timeoutMs:)``),
    /// by request id: they are answered here instead of on a socket.
    var scriptedAnswers: [String: CheckedContinuation<OperatorInvokeAnswer, Never>] = [:]
    /// Numbers the scripted requests.
    var scriptedCount = 0
    /// The flows an advance (``NodeState/advanceWakes(nowMs:ids:)``) has still to look at while
    /// it waits for a push's answer.
    var passQueue: [String] = []
}

/// How an operator's `node.invoke` was answered, as the scripting API reports it: the payload of
/// an `ok:true` response or the error of an `ok:false` one (docs/protocol.md §6.9).
public enum OperatorInvokeAnswer: Sendable, Hashable {
    /// `ok:true` with this payload.
    case ok(JSONValue)
    /// `ok:false` with this error.
    case failed(ErrorShape)

    /// The error, when the invoke failed.
    public var error: ErrorShape? {
        if case .failed(let error) = self { error } else { nil }
    }

    /// One line for people.
    public var summary: String {
        switch self {
        case .ok(let payload): "ok \(payload.jsonString)"
        case .failed(let error): "\(error.code) \(error.message)\(error.detailCode.map { " (\($0))" } ?? "")"
        }
    }
}
