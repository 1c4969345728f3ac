import Synchronization

/// Something the reference client did, recorded so that tests and tools can wait for it (with
/// a deadline) instead of sleeping.
public enum ClientObservation: Sendable, Hashable {
    /// A session of `role` starts a connect attempt.
    case attemptStarted(role: String)
    /// A session of `role` received `hello-ok` (connection `generation`).
    case connected(role: String, generation: Int)
    /// A session of `role` ended an attempt or session and decided what to do next.
    case ended(role: String, end: ConnectionEnd, decision: ReconnectDecision)
    /// The Gateway asked for pairing approval of `requestId`.
    case pairingPending(role: String, requestId: String?)
    /// A `node.invoke.result` was sent for `id`.
    case invokeAnswered(id: String, ok: Bool)
    /// A result for `id` was not sent (`reason`: for example its socket is gone).
    case invokeDiscarded(id: String, reason: String)
    /// A presence beacon was sent with `trigger`.
    case beaconSent(trigger: String)
    /// The reply to a beacon arrived; `durable` says whether it counts as recorded.
    case beaconReplied(durable: Bool, reason: String?)
    /// A background wake skipped the beacon (a durable one is recent).
    case beaconSkipped
    /// `push.apns.register` was sent with `gatewayDeviceId`.
    case pushRegistered(transport: String, gatewayDeviceId: String?)
    /// An approval card changed.
    case approvalChanged(id: String)
    /// A read-back of approval `id` was made.
    case approvalReadBack(id: String)
    /// A question card changed.
    case questionChanged(id: String)
    /// Pending questions were reloaded (`question.list`).
    case questionsReloaded
    /// An event `seq` skipped numbers (tolerated).
    case seqGap(role: String)
}

/// An append-only list of observations with deadline-bounded waiting.
public final class ObservationLog: Sendable {
    private struct Waiter {
        var from: Int
        var predicate: @Sendable (ClientObservation) -> Bool
        var continuation: CheckedContinuation<ClientObservation?, Never>
    }

    private struct State {
        var items: [ClientObservation] = []
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
    }

    // Items and waiters live behind this Mutex.
    private let state = Mutex(State())

    init() {}

    /// Every observation so far.
    public var all: [ClientObservation] { state.withLock { $0.items } }

    /// The number of observations so far (a cursor for ``first(from:timeout:where:)``).
    public var count: Int { state.withLock { $0.items.count } }

    func append(_ observation: ClientObservation) {
        let ready = state.withLock { state -> [CheckedContinuation<ClientObservation?, Never>] in
            state.items.append(observation)
            let index = state.items.count - 1
            let ids = state.waiters.filter { $0.value.from <= index && $0.value.predicate(observation) }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        for continuation in ready { continuation.resume(returning: observation) }
    }

    /// The first observation at or after `cursor` that `predicate` accepts, waiting up to
    /// `timeout` (real time) for it.
    /// - Returns: the observation, or `nil` on timeout or cancellation.
    public func first(from cursor: Int = 0, timeout: Duration,
                      where predicate: @escaping @Sendable (ClientObservation) -> Bool) async -> ClientObservation? {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.finish(id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ClientObservation?, Never>) in
                let found = state.withLock { state -> ClientObservation?? in
                    if let match = state.items.dropFirst(max(0, cursor)).first(where: predicate) { return .some(match) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = Waiter(from: cursor, predicate: predicate, continuation: continuation)
                    return nil
                }
                if let found { continuation.resume(returning: found) }
            }
        } onCancel: {
            finish(id)
        }
    }

    private func finish(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: nil)
    }
}
