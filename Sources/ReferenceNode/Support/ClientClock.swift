import Foundation
import Simulation
import Locking

/// The time source of the reference client: every protocol timer (backoff, challenge wait,
/// request timeouts, tick watchdog, invoke deadlines, beacon interval) reads it.
///
/// Pass ``SystemClientClock`` for real use and ``ManualClientClock`` in tests and conformance
/// runs, so that a 30 s backoff or a 60 s watchdog takes no real time.
public protocol ClientClock: Sendable {
    /// Milliseconds on this clock's time line (wall-clock milliseconds for the system clock).
    var nowMs: Int64 { get }
    /// Suspends until ``nowMs`` reaches `deadlineMs`.
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    func sleep(untilMs deadlineMs: Int64) async throws
    /// The time line the client's own waits with a deadline run on (waiting for the outcome of
    /// a stimulus): real time, or a simulated run's virtual time.
    var waitTimeline: any Timeline { get }
}

extension ClientClock {
    /// Real time, unless a clock says otherwise.
    public var waitTimeline: any Timeline { WallTimeline() }
}

extension ClientClock {
    /// Suspends for `milliseconds` on this clock.
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(forMs milliseconds: Int64) async throws {
        try await sleep(untilMs: nowMs + max(0, milliseconds))
    }
}

/// The real clock: wall-clock milliseconds, sleeping with `Task.sleep`.
public struct SystemClientClock: ClientClock {
    /// Creates the system clock.
    public init() {}

    /// Milliseconds since 1970.
    public var nowMs: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Sleeps in real time until the wall clock reaches `deadlineMs`.
    /// - Throws: `CancellationError`.
    public func sleep(untilMs deadlineMs: Int64) async throws {
        while true {
            let remaining = deadlineMs - nowMs
            if remaining <= 0 { return }
            try await Task.sleep(for: .milliseconds(remaining))
        }
    }
}

/// A clock that moves only when told to: ``advance(byMs:)``, ``set(_:)``, or, when it reads
/// another time source, ``wake()`` after that source moved.
///
/// ```swift
/// let clock = ManualClientClock(startMs: 1_767_225_600_000)
/// let client = ReferenceClient(configuration: .init(gatewayURL: url, stateDirectory: dir, clock: clock))
/// clock.advance(byMs: 30_000)   // fires every timer that became due
/// ```
///
/// To share the fake Gateway's manual clock, create it with ``init(reading:)`` and call
/// ``wake()`` after each Gateway clock advance.
public final class ManualClientClock: ClientClock {
    private struct Waiter {
        var deadlineMs: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var ownNowMs: Int64
        var nextWaiterID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
    }

    private let source: (@Sendable () -> Int64)?
    // All mutable state lives behind this lock, so the class is Sendable.
    private let state: Locked<State>

    /// A clock with its own time line starting at `startMs` (2026-01-01T00:00:00Z by default,
    /// the fake Gateway's default start).
    public init(startMs: Int64 = 1_767_225_600_000) {
        source = nil
        state = Locked(State(ownNowMs: startMs))
    }

    /// A clock that reads another time source (for example the fake Gateway's clock); call
    /// ``wake()`` whenever that source moves so that sleepers re-check their deadlines.
    public init(reading source: @escaping @Sendable () -> Int64) {
        self.source = source
        state = Locked(State(ownNowMs: 0))
    }

    /// The current time.
    public var nowMs: Int64 {
        if let source { return source() }
        return state.withLock { $0.ownNowMs }
    }

    /// The number of tasks currently sleeping on this clock (lets tests wait until a timer is
    /// armed before advancing).
    public var sleeperCount: Int { state.withLock { $0.waiters.count } }

    /// The earliest deadline of a sleeping task, if any.
    public var nextDeadlineMs: Int64? { state.withLock { $0.waiters.values.map(\.deadlineMs).min() } }

    /// Moves the clock forward by `milliseconds` and wakes every sleeper whose deadline passed.
    /// Ignored (apart from the wake-up) for a clock that reads another source.
    public func advance(byMs milliseconds: Int64) {
        if source == nil { state.withLock { $0.ownNowMs += max(0, milliseconds) } }
        wake()
    }

    /// Sets the time (never backwards) and wakes due sleepers.
    public func set(_ nowMs: Int64) {
        if source == nil { state.withLock { $0.ownNowMs = max($0.ownNowMs, nowMs) } }
        wake()
    }

    /// Resumes every sleeper whose deadline has been reached.
    public func wake() {
        let now = nowMs
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let ids = state.waiters.filter { $0.value.deadlineMs <= now }.map(\.key).sorted()
            return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        for continuation in due { continuation.resume() }
    }

    /// Suspends until the clock reaches `deadlineMs`.
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func sleep(untilMs deadlineMs: Int64) async throws {
        if nowMs >= deadlineMs { return }
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = Waiter(deadlineMs: deadlineMs, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate); return }
                // The source may have moved between the first check and registration.
                if nowMs >= deadlineMs { wake() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}

/// The seeded generator of backoff jitter: the project's one SplitMix64 (`SeededRandom`).
public typealias SeededGenerator = SeededRandom
