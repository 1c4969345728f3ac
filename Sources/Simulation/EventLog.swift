import Locking

/// How a wait on an ``EventLog`` ended.
public enum EventLogWait<Element: Sendable>: Sendable {
    /// A matching value, at `position`.
    case found(position: Int, element: Element)
    /// The deadline came first: `reason` is ``WakeReason/reached``, or
    /// ``WakeReason/nothingPending`` when a simulation found that nothing could happen anymore.
    case timedOut(WakeReason)
    /// The waiting task was cancelled.
    case cancelled
    /// The log was finished (``EventLog/finish()``) without a match.
    case finished

    /// The matched value, if any.
    public var match: (position: Int, element: Element)? {
        if case .found(let position, let element) = self { (position, element) } else { nil }
    }
}

/// An append-only log of values that many readers can wait on.
///
/// Every value ever appended stays readable by position, so a reader that starts waiting after
/// something happened still sees it: waits take a starting position (a cursor) instead of relying
/// on having subscribed in time. Waiting never polls and never sleeps: a waiter is resumed by the
/// append that satisfies it, by its deadline on the given ``Timeline``, by cancellation, or by
/// ``finish()``.
public final class EventLog<Element: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let from: Int
        let predicate: @Sendable (Element) -> Bool
        let continuation: CheckedContinuation<EventLogWait<Element>, Never>
        var timer: Task<Void, Never>?
    }

    private struct State: Sendable {
        var elements: [Element] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
        var streams: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var finished = false
    }

    // All state is behind the mutex; continuations are resumed outside of it.
    private let state = Locked(State())

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

    /// Whether ``finish()`` was called.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Appends a value and wakes the waiters it satisfies (in the order they started waiting).
    public func append(_ element: Element) {
        let ready: [(Waiter, EventLogWait<Element>)] = state.withLock { state in
            guard !state.finished else { return [] }
            state.elements.append(element)
            let position = state.elements.count - 1
            let ids = state.waiters.filter { $0.value.from <= position && $0.value.predicate(element) }.keys.sorted()
            // Yielding under the lock keeps every stream in append order.
            for (_, stream) in state.streams.sorted(by: { $0.key < $1.key }) { stream.yield(element) }
            return ids.compactMap { id in state.waiters.removeValue(forKey: id).map { ($0, .found(position: position, element: element)) } }
        }
        Self.resume(ready)
    }

    /// Ends the log: pending and future waits return ``EventLogWait/finished``, streams finish.
    public func finish() {
        let (waiters, streams) = state.withLock { state -> ([(Waiter, EventLogWait<Element>)], [AsyncStream<Element>.Continuation]) in
            state.finished = true
            defer { state.waiters = [:]; state.streams = [:] }
            return (state.waiters.sorted { $0.key < $1.key }.map { ($0.value, .finished) },
                    state.streams.sorted { $0.key < $1.key }.map(\.value))
        }
        Self.resume(waiters)
        for stream in streams { stream.finish() }
    }

    /// Waits for the first value at or after position `from` that satisfies `predicate`.
    ///
    /// The waiter is registered before its deadline is armed, so neither a zero timeout nor a
    /// caller that is already cancelled can leave it waiting. `predicate` runs while the log's
    /// lock is held: it must not read this log.
    /// - Parameters:
    ///   - from: the cursor to start at (``count`` before the action that should cause the value).
    ///   - timeout: how long to wait on `timeline`; `nil` waits without a deadline.
    ///   - timeline: the time the deadline runs on: real time by default, a simulated run's
    ///     virtual time when it is a driven ``VirtualTimeline``.
    ///   - purpose: what the deadline is to a simulation: a wait's deadline by default, or an
    ///     ``SleepPurpose/activity`` when the waiter acts at the deadline (a timer).
    ///   - predicate: which value is wanted.
    /// - Returns: how the wait ended.
    public func wait(
        from: Int, timeout: Duration?, on timeline: any Timeline = WallTimeline(), purpose: SleepPurpose = .deadline,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async -> EventLogWait<Element> {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let deadlineMs = timeout.map { timeline.nowMs + max(0, $0.milliseconds) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<EventLogWait<Element>, Never>) in
                let immediate: EventLogWait<Element>? = state.withLock { state in
                    let start = min(max(0, from), state.elements.count)
                    for index in start..<state.elements.count where predicate(state.elements[index]) {
                        return .found(position: index, element: state.elements[index])
                    }
                    if state.finished { return .finished }
                    if Task.isCancelled { return .cancelled }
                    if let timeout, timeout <= .zero { return .timedOut(.reached) }
                    state.waiters[id] = Waiter(from: from, predicate: predicate, continuation: continuation)
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    return
                }
                guard let deadlineMs else { return }
                // Armed only now that the waiter is registered: a deadline cannot fire before it.
                let timer = spawnTask { [weak self] in
                    let reason = await timeline.sleep(untilMs: deadlineMs, purpose: purpose)
                    // A cancelled timer means the wait already ended.
                    if reason != .cancelled { self?.end(id, with: .timedOut(reason)) }
                }
                let stale = state.withLock { state -> Bool in
                    guard state.waiters[id] != nil else { return true }
                    state.waiters[id]?.timer = timer
                    return false
                }
                if stale { timer.cancel() }
            }
        } onCancel: {
            end(id, with: .cancelled)
        }
    }

    /// Waits for the first value at or after position `from` that satisfies `predicate`
    /// (see ``wait(from:timeout:on:where:)``).
    /// - Returns: the value's position and the value, or `nil` when the deadline passed, the
    ///   caller was cancelled or the log finished first.
    public func first(
        from: Int, timeout: Duration, on timeline: any Timeline = WallTimeline(),
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async -> (position: Int, element: Element)? {
        await wait(from: from, timeout: timeout, on: timeline, where: predicate).match
    }

    private func end(_ id: UInt64, with outcome: EventLogWait<Element>) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        if let waiter { Self.resume([(waiter, outcome)]) }
    }

    private static func resume(_ items: [(Waiter, EventLogWait<Element>)]) {
        for (waiter, outcome) in items {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: outcome)
        }
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
