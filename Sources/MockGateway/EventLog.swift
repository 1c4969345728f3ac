import Synchronization

/// An append-only log of values that many readers can wait on.
///
/// Every value ever appended stays readable by position, so a scenario that starts waiting after
/// something happened still sees it: waits take a starting position (a cursor) instead of relying
/// on having subscribed in time. Waiting never polls and never sleeps: a waiter is resumed by the
/// append that satisfies it, or by its deadline task.
public final class EventLog<Element: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let id: UInt64
        let from: Int
        let predicate: @Sendable (Element) -> Bool
        let continuation: CheckedContinuation<(Int, Element)?, Never>
    }

    private struct State: Sendable {
        var elements: [Element] = []
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        var streams: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var finished = false
    }

    // All state is behind the mutex; continuations are resumed outside of it.
    private let state = Mutex(State())

    /// Creates an empty log.
    public init() {}

    /// The number of values appended so far: the cursor that means "from now on".
    public var count: Int { state.withLock { $0.elements.count } }

    /// A copy of every value appended so far.
    public var all: [Element] { state.withLock { $0.elements } }

    /// The values from position `index` on.
    public func elements(from index: Int) -> [Element] {
        state.withLock { state in
            let start = min(max(0, index), state.elements.count)
            return Array(state.elements[start...])
        }
    }

    /// Appends a value and wakes the waiters it satisfies.
    public func append(_ element: Element) {
        let (position, ready): (Int, [Waiter]) = state.withLock { state in
            guard !state.finished else { return (0, []) }
            state.elements.append(element)
            let position = state.elements.count - 1
            var ready: [Waiter] = []
            state.waiters.removeAll { waiter in
                if waiter.from <= position, waiter.predicate(element) {
                    ready.append(waiter)
                    return true
                }
                return false
            }
            // Yielding under the lock keeps every stream in append order.
            for stream in state.streams.values { stream.yield(element) }
            return (position, ready)
        }
        for waiter in ready { waiter.continuation.resume(returning: (position, element)) }
    }

    /// Ends the log: pending and future waits return `nil`, streams finish.
    public func finish() {
        let (waiters, streams) = state.withLock { state -> ([Waiter], [AsyncStream<Element>.Continuation]) in
            state.finished = true
            defer { state.waiters = []; state.streams = [:] }
            return (state.waiters, Array(state.streams.values))
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
        for stream in streams { stream.finish() }
    }

    /// Waits for the first value at or after position `from` that satisfies `predicate`.
    ///
    /// `predicate` runs while the log's lock is held: it must not read this log.
    /// - Parameters:
    ///   - from: the cursor to start at (`count` before the action that should cause the value).
    ///   - timeout: how long to wait, in real time.
    ///   - predicate: which value is wanted.
    /// - Returns: the value's position and the value, or `nil` when the deadline passed or the
    ///   log finished first.
    public func first(
        from: Int, timeout: Duration, where predicate: @escaping @Sendable (Element) -> Bool
    ) async -> (position: Int, element: Element)? {
        // Already there?
        let existing: (Int, Element)? = state.withLock { state in
            let start = min(max(0, from), state.elements.count)
            for index in start..<state.elements.count where predicate(state.elements[index]) {
                return (index, state.elements[index])
            }
            return nil
        }
        if let existing { return existing }

        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withTaskGroup(of: Void.self) { group in
            group.addTask { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.cancelWaiter(id)
            }
            let result: (Int, Element)? = await withCheckedContinuation { continuation in
                let immediate: (Int, Element)?? = state.withLock { state in
                    if state.finished { return .some(nil) }
                    // Re-check what arrived between the scan above and registration.
                    let start = min(max(0, from), state.elements.count)
                    for index in start..<state.elements.count where predicate(state.elements[index]) {
                        return .some((index, state.elements[index]))
                    }
                    state.waiters.append(Waiter(id: id, from: from, predicate: predicate, continuation: continuation))
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
            group.cancelAll()
            return result
        }
    }

    private func cancelWaiter(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: nil)
    }

    /// A stream of the values appended from now on (or from `from`, replaying what is already there).
    public func stream(from: Int? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            if let from {
                let start = min(max(0, from), state.elements.count)
                for element in state.elements[start...] { continuation.yield(element) }
            }
            if state.finished {
                continuation.finish()
            } else {
                state.streams[state.nextWaiterID] = continuation
            }
            return state.nextWaiterID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }
}
