import Locking

/// Virtual time: a clock that moves only when told to, with the tasks sleeping on it.
///
/// Tests move it by hand (``advance(byMs:)``); a ``SimulationExecutor`` moves it by itself
/// whenever no task of its run can make progress, straight to the next deadline
/// (``advanceToNextDeadline()``). Sleepers whose deadlines pass are resumed in the order of their
/// deadlines, then of their sleep calls, so that the same run resumes them in the same order.
public final class VirtualTimeline: Timeline {
    private struct Sleeper: Sendable {
        let id: UInt64
        let deadlineMs: Int64
        let purpose: SleepPurpose
        let continuation: CheckedContinuation<WakeReason, Never>
    }

    private struct State: Sendable {
        var nowMs: Int64
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        var driven = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What ``advanceToNextDeadline()`` did.
    public enum IdleStep: Sendable, Hashable {
        /// Time moved to `ms` and the sleepers due then were woken.
        case advanced(toMs: Int64)
        /// Tasks waiting for the run to be idle (``untilIdle()``) were woken; time did not move.
        case wokeIdleWaiters(count: Int)
        /// Only wait deadlines were pending: the earliest were woken with
        /// ``WakeReason/nothingPending`` and time did not move.
        case wokeDeadlines(count: Int)
        /// Nobody sleeps on this time line.
        case nothingPending
    }

    // Every read and write of the state goes through this lock; continuations are resumed
    // after it is released.
    private let state: Locked<State>

    /// Creates a time line standing at `startMs` (2026-01-01T00:00:00Z by default).
    public init(startMs: Int64 = 1_767_225_600_000) {
        state = Locked(State(nowMs: startMs))
    }

    /// The current virtual time in Unix milliseconds.
    public var nowMs: Int64 { state.withLock { $0.nowMs } }

    /// Whether a simulation moves this time line by itself (set by ``SimulationExecutor``):
    /// waits with a deadline then time out in virtual time instead of real time.
    public var isDriven: Bool { state.withLock { $0.driven } }

    func setDriven(_ driven: Bool) { state.withLock { $0.driven = driven } }

    /// Suspends until the time line reaches `deadlineMs` (or cancellation, or, for a
    /// ``SleepPurpose/deadline`` in a simulation, until nothing else can happen).
    public func sleep(untilMs deadlineMs: Int64, purpose: SleepPurpose = .activity) async -> WakeReason {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WakeReason, Never>) in
                let immediate = state.withLock { state -> WakeReason? in
                    if Task.isCancelled { return .cancelled }
                    if state.nowMs >= deadlineMs { return .reached }
                    state.sleepers[id] = Sleeper(id: id, deadlineMs: deadlineMs, purpose: purpose, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(returning: .cancelled)
        }
    }

    /// Returns once every other task of the simulation that drives this time line is idle at the
    /// current instant (has done everything it can without time passing), before time moves on.
    /// Outside a simulation it returns at once: nothing can tell when real tasks are idle.
    public func untilIdle() async {
        guard isDriven else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { $0.idleWaiters.append(continuation) }
        }
    }

    /// Moves the time line forward by `milliseconds` (negative values are ignored) and wakes
    /// every sleeper whose deadline passed. Everything due wakes at the new time: a jump.
    public func advance(byMs milliseconds: Int64) {
        let due = state.withLock { state -> [Sleeper] in
            state.nowMs += max(0, milliseconds)
            return Self.takeDue(&state)
        }
        for sleeper in due { sleeper.continuation.resume(returning: .reached) }
    }

    /// Moves the time line to `ms` if that is later, and wakes the sleepers due.
    public func advance(toMs ms: Int64) {
        let due = state.withLock { state -> [Sleeper] in
            state.nowMs = max(state.nowMs, ms)
            return Self.takeDue(&state)
        }
        for sleeper in due { sleeper.continuation.resume(returning: .reached) }
    }

    /// The earliest deadline anybody sleeps for, optionally only of one purpose.
    public func nextDeadlineMs(purpose: SleepPurpose? = nil) -> Int64? {
        state.withLock { state in
            state.sleepers.values.filter { purpose == nil || $0.purpose == purpose }.map(\.deadlineMs).min()
        }
    }

    /// How many tasks sleep, by purpose.
    public var sleeperCounts: (activity: Int, deadline: Int) {
        state.withLock { state in
            let activity = state.sleepers.values.filter { $0.purpose == .activity }.count
            return (activity, state.sleepers.count - activity)
        }
    }

    /// What an idle simulation does: wake the tasks waiting for idleness (``untilIdle()``) if
    /// any; otherwise jump to the earliest activity deadline (or a wait deadline that comes before
    /// it) and wake what is due; when only wait deadlines remain, wake the earliest of them with
    /// ``WakeReason/nothingPending`` without moving time.
    @discardableResult
    public func advanceToNextDeadline() -> IdleStep {
        let idle = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        if !idle.isEmpty {
            for waiter in idle { waiter.resume() }
            return .wokeIdleWaiters(count: idle.count)
        }
        let (step, woken): (IdleStep, [(Sleeper, WakeReason)]) = state.withLock { state in
            guard !state.sleepers.isEmpty else { return (.nothingPending, []) }
            let activity = state.sleepers.values.filter { $0.purpose == .activity }.map(\.deadlineMs).min()
            let deadline = state.sleepers.values.filter { $0.purpose == .deadline }.map(\.deadlineMs).min()
            if let activity, activity <= (deadline ?? Int64.max) {
                state.nowMs = max(state.nowMs, activity)
                return (.advanced(toMs: state.nowMs), Self.takeDue(&state).map { ($0, .reached) })
            }
            guard let deadline else { return (.nothingPending, []) }
            if activity != nil {
                // A wait gives up before the next activity: its deadline is simply reached.
                state.nowMs = max(state.nowMs, deadline)
                return (.advanced(toMs: state.nowMs), Self.takeDue(&state).map { ($0, .reached) })
            }
            let earliest = state.sleepers.values.filter { $0.purpose == .deadline && $0.deadlineMs == deadline }
                .sorted { $0.id < $1.id }
            for sleeper in earliest { state.sleepers.removeValue(forKey: sleeper.id) }
            return (.wokeDeadlines(count: earliest.count), earliest.map { ($0, .nothingPending) })
        }
        for (sleeper, reason) in woken { sleeper.continuation.resume(returning: reason) }
        return step
    }

    private static func takeDue(_ state: inout State) -> [Sleeper] {
        let now = state.nowMs
        let due = state.sleepers.values.filter { $0.deadlineMs <= now }
            .sorted { ($0.deadlineMs, $0.id) < ($1.deadlineMs, $1.id) }
        for sleeper in due { state.sleepers.removeValue(forKey: sleeper.id) }
        return due
    }
}
