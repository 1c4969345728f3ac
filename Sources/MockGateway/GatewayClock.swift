import Foundation
import Synchronization

/// The fake Gateway's clock, in Unix milliseconds: the time every protocol rule reads
/// (challenge `ts`, signature freshness, pairing and approval expiry, presence throttling, ticks).
///
/// A manual clock starts at a fixed instant and moves only when told to, so a 15-minute expiry
/// takes microseconds in a scenario. A system clock follows the wall clock; `advance(by:)` adds
/// an offset on top, which is how `harness serve`'s `advance` command skips time.
public final class GatewayClock: Sendable {
    private enum Base: Sendable {
        case manual
        case system
    }

    private struct Sleeper: Sendable {
        let id: UInt64
        let deadlineMs: Int64
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State: Sendable {
        var base: Base
        var manualNowMs: Int64
        var offsetMs: Int64
        var sleepers: [Sleeper] = []
        var nextSleeperID: UInt64 = 0
    }

    // Mutex makes the class safe to share: every read and write of the state goes through it.
    private let state: Mutex<State>

    /// A clock that stands still at `startMs` until `advance(by:)` or `set(_:)` moves it.
    /// The default start is 2026-01-01T00:00:00Z, the instant used by the specification's examples.
    public static func manual(startMs: Int64 = 1_767_225_600_000) -> GatewayClock {
        GatewayClock(State(base: .manual, manualNowMs: startMs, offsetMs: 0))
    }

    /// A clock that follows the system's wall clock.
    public static func system() -> GatewayClock {
        GatewayClock(State(base: .system, manualNowMs: 0, offsetMs: 0))
    }

    private init(_ state: State) {
        self.state = Mutex(state)
    }

    /// `true` for a manual clock.
    public var isManual: Bool {
        state.withLock { if case .manual = $0.base { true } else { false } }
    }

    /// The current time in Unix milliseconds.
    public var nowMs: Int64 {
        state.withLock { state in
            switch state.base {
            case .manual: return state.manualNowMs + state.offsetMs
            case .system: return Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) + state.offsetMs
            }
        }
    }

    /// Moves the clock forward. Negative durations are ignored: gateway time never runs backwards.
    /// - Returns: the new time in milliseconds.
    @discardableResult
    public func advance(by duration: Duration) -> Int64 {
        let delta = max(0, duration.milliseconds)
        state.withLock { $0.offsetMs += delta }
        wakeDueSleepers()
        return nowMs
    }

    /// Sets a manual clock to `nowMs` if that is later than its current time.
    public func set(_ nowMs: Int64) {
        state.withLock { state in
            guard case .manual = state.base else { return }
            let current = state.manualNowMs + state.offsetMs
            if nowMs > current { state.manualNowMs += nowMs - current }
        }
        wakeDueSleepers()
    }

    /// Suspends until the clock reaches `deadlineMs`.
    ///
    /// On a manual clock the caller wakes when `advance(by:)` or `set(_:)` moves the clock past
    /// the deadline, never by real time passing: a client that shares the Gateway's manual clock
    /// backs off and times out in virtual time. On a system clock this sleeps in real time.
    /// Cancellation wakes the caller early.
    public func sleep(untilMs deadlineMs: Int64) async {
        if !isManual {
            let remaining = deadlineMs - nowMs
            if remaining > 0 { try? await Task.sleep(for: .milliseconds(remaining)) }
            return
        }
        let id = state.withLock { state -> UInt64 in
            state.nextSleeperID += 1
            return state.nextSleeperID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.manualNowMs + state.offsetMs >= deadlineMs || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadlineMs: deadlineMs, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume()
        }
    }

    /// Suspends for `duration` of clock time (see `sleep(untilMs:)`).
    public func sleep(for duration: Duration) async {
        await sleep(untilMs: nowMs + duration.milliseconds)
    }

    /// The earliest deadline a caller of `sleep` waits for on a manual clock.
    public var nextSleeperDeadlineMs: Int64? {
        state.withLock { $0.sleepers.map(\.deadlineMs).min() }
    }

    private func wakeDueSleepers() {
        let due = state.withLock { state -> [Sleeper] in
            let now = state.manualNowMs + state.offsetMs
            let due = state.sleepers.filter { $0.deadlineMs <= now }
            state.sleepers.removeAll { $0.deadlineMs <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    public var milliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
