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
///
/// With a ``Retention``, the log keeps at most a budget of bytes: once the budget is exceeded,
/// the oldest values are replaced in place by their compacted form (for a frame event: the frame
/// without its payload, with a marker saying so); when even the compacted values exceed it, the
/// oldest are dropped (``droppedCount``). Positions never change: ``count`` goes on counting,
/// and reads start at the oldest value kept. Waiters and streams always see each value whole
/// when it is appended.
public final class EventLog<Element: Sendable>: Sendable {
    /// How much of the values a log keeps.
    public struct Retention: Sendable {
        /// The most bytes (as `cost` estimates them) kept before old values are compacted.
        public var budgetBytes: Int
        /// What a value costs to keep, roughly in bytes.
        public var cost: @Sendable (Element) -> Int
        /// The value with its body dropped; must cost (much) less than the original.
        public var compact: @Sendable (Element) -> Element

        /// Creates a retention policy.
        public init(budgetBytes: Int, cost: @escaping @Sendable (Element) -> Int,
                    compact: @escaping @Sendable (Element) -> Element) {
            self.budgetBytes = budgetBytes
            self.cost = cost
            self.compact = compact
        }
    }

    // The state and `append` are `@usableFromInline` / `@inlinable` so that `append`, which
    // runs for every frame and event of a run, is specialized for the element type where it is
    // called: unspecialized, each append looked up the generic type metadata of the waiters,
    // streams and tuples it touched (Benchmarks/README.md).
    @usableFromInline struct Waiter: Sendable {
        @usableFromInline let id: UInt64
        @usableFromInline let from: Int
        @usableFromInline let predicate: @Sendable (Element) -> Bool
        @usableFromInline let continuation: CheckedContinuation<EventLogWait<Element>, Never>
        @usableFromInline var timer: Task<Void, Never>?

        init(id: UInt64, from: Int, predicate: @escaping @Sendable (Element) -> Bool,
             continuation: CheckedContinuation<EventLogWait<Element>, Never>, timer: Task<Void, Never>? = nil) {
            self.id = id
            self.from = from
            self.predicate = predicate
            self.continuation = continuation
            self.timer = timer
        }
    }

    @usableFromInline struct Stream: Sendable {
        @usableFromInline let id: UInt64
        @usableFromInline let continuation: AsyncStream<Element>.Continuation
    }

    @usableFromInline struct State: Sendable {
        @usableFromInline var elements: [Element] = []
        /// In the order their waits started (ascending ids): the order they are woken in.
        @usableFromInline var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        /// In the order they were created (ascending ids): the order they get each value in.
        @usableFromInline var streams: [Stream] = []
        @usableFromInline var finished = false
        @usableFromInline var costs: [Int] = []
        @usableFromInline var retainedBytes = 0
        /// The position of the next value to compact.
        @usableFromInline var compactedUpTo = 0
        @usableFromInline var compactedCount = 0
        /// How many of the oldest values were dropped: the position of `elements[0]`.
        @usableFromInline var dropped = 0

        @usableFromInline var count: Int { dropped + elements.count }

        /// The index in `elements` of position `position`, clamped to what is kept.
        func index(of position: Int) -> Int { min(max(0, position - dropped), elements.count) }

        /// Registers `waiter`, keeping ``waiters`` in ascending id order.
        mutating func add(_ waiter: Waiter) {
            guard let last = waiters.last, last.id > waiter.id else {
                waiters.append(waiter)
                return
            }
            var index = waiters.endIndex
            while index > waiters.startIndex, waiters[index - 1].id > waiter.id { index -= 1 }
            waiters.insert(waiter, at: index)
        }

        /// Removes and returns the waiter with `id`, if it is still waiting.
        mutating func removeWaiter(_ id: UInt64) -> Waiter? {
            guard let index = waiters.lastIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index)
        }
    }

    // All state is behind the lock; continuations are resumed outside of it.
    @usableFromInline let state = Locked(State())
    @usableFromInline let retention: Retention?

    /// Creates an empty log.
    /// - Parameter retention: how much of the values to keep; `nil` keeps everything.
    public init(retention: Retention? = nil) {
        self.retention = retention
    }

    /// The bytes the values currently cost, as the retention estimates them (0 without one).
    public var retainedBytes: Int { state.withLock { $0.retainedBytes } }

    /// How many values were compacted to stay within the retention budget.
    public var compactedCount: Int { state.withLock { $0.compactedCount } }

    /// How many of the oldest values were dropped to stay within the retention budget (their
    /// positions are not reused).
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// The number of values appended so far: the cursor that means "from now on".
    public var count: Int { state.withLock { $0.count } }

    /// A copy of every value appended so far (that is still kept, see ``droppedCount``).
    public var all: [Element] { state.withLock { $0.elements } }

    /// The values from position `index` on (that are still kept).
    public func elements(from index: Int) -> [Element] {
        state.withLock { state in
            Array(state.elements[state.index(of: index)...])
        }
    }

    /// Whether ``finish()`` was called.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Appends a value and wakes the waiters it satisfies (in the order they started waiting).
    @inlinable
    public func append(_ element: Element) {
        let cost = retention.map { $0.cost(element) } ?? 0
        // Runs for every frame and event of a run: no dictionaries, no sorting, nothing
        // allocated unless a waiter is satisfied.
        let (ready, position): ([Waiter], Int) = state.withLock { state in
            guard !state.finished else { return ([], 0) }
            state.elements.append(element)
            let position = state.count - 1
            defer { if let retention { compact(&state, adding: cost, retention: retention) } }
            var ready: [Waiter] = []
            if !state.waiters.isEmpty {
                var kept = 0
                for index in state.waiters.indices {
                    let waiter = state.waiters[index]
                    if waiter.from <= position && waiter.predicate(element) {
                        ready.append(waiter)
                    } else {
                        if kept != index { state.waiters[kept] = waiter }
                        kept += 1
                    }
                }
                state.waiters.removeLast(state.waiters.count - kept)
            }
            // Yielding under the lock keeps every stream in append order.
            for stream in state.streams { stream.continuation.yield(element) }
            return (ready, position)
        }
        for waiter in ready { Self.resume(waiter, .found(position: position, element: element)) }
    }

    /// Accounts for a new value and compacts the oldest ones while over budget; drops the
    /// oldest when even compacted they are. Runs after the waiters and streams have seen the
    /// new value.
    @inlinable
    func compact(_ state: inout State, adding cost: Int, retention: Retention) {
        state.costs.append(cost)
        state.retainedBytes += cost
        state.compactedUpTo = max(state.compactedUpTo, state.dropped)
        while state.retainedBytes > retention.budgetBytes, state.compactedUpTo < state.count {
            let index = state.compactedUpTo - state.dropped
            state.compactedUpTo += 1
            let old = state.costs[index]
            let compacted = retention.compact(state.elements[index])
            let new = min(old, retention.cost(compacted))
            guard new < old else { continue }
            state.elements[index] = compacted
            state.costs[index] = new
            state.retainedBytes -= old - new
            state.compactedCount += 1
        }
        // Still over budget with everything compacted: drop the oldest, down to 90% of the
        // budget so that dropping happens in batches.
        guard state.retainedBytes > retention.budgetBytes else { return }
        var drop = 0
        while drop < state.elements.count - 1, state.retainedBytes > retention.budgetBytes / 10 * 9 {
            state.retainedBytes -= state.costs[drop]
            drop += 1
        }
        state.elements.removeFirst(drop)
        state.costs.removeFirst(drop)
        state.dropped += drop
    }

    /// Ends the log: pending and future waits return ``EventLogWait/finished``, streams finish.
    public func finish() {
        let (waiters, streams) = state.withLock { state -> ([Waiter], [Stream]) in
            state.finished = true
            defer { state.waiters = []; state.streams = [] }
            return (state.waiters, state.streams)
        }
        for waiter in waiters { Self.resume(waiter, .finished) }
        for stream in streams { stream.continuation.finish() }
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
                    for index in state.index(of: from)..<state.elements.count where predicate(state.elements[index]) {
                        return .found(position: state.dropped + index, element: state.elements[index])
                    }
                    if state.finished { return .finished }
                    if Task.isCancelled { return .cancelled }
                    if let timeout, timeout <= .zero { return .timedOut(.reached) }
                    state.add(Waiter(id: id, from: from, predicate: predicate, continuation: continuation))
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
                    guard let index = state.waiters.lastIndex(where: { $0.id == id }) else { return true }
                    state.waiters[index].timer = timer
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
        let waiter = state.withLock { $0.removeWaiter(id) }
        if let waiter { Self.resume(waiter, outcome) }
    }

    @usableFromInline
    static func resume(_ waiter: Waiter, _ outcome: EventLogWait<Element>) {
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: outcome)
    }

    /// A stream of the values appended from now on (or from `from`, replaying what is already there).
    public func stream(from: Int? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            if let from {
                for element in state.elements[state.index(of: from)...] { continuation.yield(element) }
            }
            if state.finished {
                continuation.finish()
            } else {
                state.streams.append(Stream(id: state.nextWaiterID, continuation: continuation))
            }
            return state.nextWaiterID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                if let index = state.streams.firstIndex(where: { $0.id == id }) { state.streams.remove(at: index) }
            }
        }
        return stream
    }
}
