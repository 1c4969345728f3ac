import Foundation

/// Why a sleeping task woke up.
public enum WakeReason: Sendable, Hashable {
    /// The time line reached the deadline.
    case reached
    /// A simulation found nothing else that could happen before the deadline (no task ready, no
    /// timer of a client or a Gateway pending) and woke the sleeper early, without moving time:
    /// a wait that nothing pending can satisfy fails at once.
    case nothingPending
    /// The sleeping task was cancelled.
    case cancelled
}

/// What a sleeper is waiting for, which decides what a simulation does when every task is idle.
public enum SleepPurpose: Sendable, Hashable {
    /// Something will happen at the deadline: a client's backoff, a Gateway timer, a scenario
    /// letting time pass. Idle simulations jump straight to the earliest activity.
    case activity
    /// A deadline of a wait ("the client connects within 5 s"): it only says when to give up.
    /// When nothing but such deadlines is pending, the earliest one is woken with
    /// ``WakeReason/nothingPending`` at once.
    case deadline
}

/// A time line tasks can sleep on: the wall clock, or the virtual time of a simulated run.
public protocol Timeline: Sendable {
    /// The current time in Unix milliseconds.
    var nowMs: Int64 { get }
    /// Suspends the calling task until the time line reaches `deadlineMs`, the task is cancelled,
    /// or (virtual time) nothing else can happen first.
    /// - Parameters:
    ///   - deadlineMs: the instant to wake at.
    ///   - purpose: what the sleep is for (see ``SleepPurpose``).
    /// - Returns: why the task woke.
    func sleep(untilMs deadlineMs: Int64, purpose: SleepPurpose) async -> WakeReason
}

extension Timeline {
    /// Sleeps for `duration` of this time line's time (see ``sleep(untilMs:purpose:)``).
    @discardableResult
    public func sleep(for duration: Duration, purpose: SleepPurpose = .activity) async -> WakeReason {
        await sleep(untilMs: nowMs + max(0, duration.milliseconds), purpose: purpose)
    }
}

/// The wall clock as a ``Timeline``: `Task.sleep` in real time.
public struct WallTimeline: Timeline {
    /// Creates the wall-clock time line.
    public init() {}

    /// Milliseconds since 1970.
    public var nowMs: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Sleeps in real time; `purpose` makes no difference on the wall clock.
    public func sleep(untilMs deadlineMs: Int64, purpose: SleepPurpose) async -> WakeReason {
        while true {
            if Task.isCancelled { return .cancelled }
            let remaining = deadlineMs - nowMs
            if remaining <= 0 { return .reached }
            do { try await Task.sleep(for: .milliseconds(remaining)) } catch { return .cancelled }
        }
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    public var milliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
