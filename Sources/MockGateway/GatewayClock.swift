import Foundation
import Simulation
import Locking

/// The fake Gateway's clock, in Unix milliseconds: the time line every protocol rule reads
/// (pairing and approval expiry, presence throttling, tokens, ticks).
///
/// A manual clock is virtual time (a ``VirtualTimeline``): it starts at a fixed instant and moves
/// only when told to, or, in a simulated conformance run, whenever the run is idle; a 15-minute
/// expiry takes microseconds. A system clock follows the wall clock; ``advance(by:)`` adds an
/// offset on top, which is how `harness serve`'s `advance` command skips time.
///
/// Clients have their own time line (``peerNowMs``): the run's virtual time for an in-process
/// client, the wall clock for a client process or a phone. The challenge `ts` and the freshness
/// of `signedAt` are judged on that time line, so skipping the Gateway's time never makes a
/// client that signs with its own clock look stale.
public final class GatewayClock: Sendable {
    private enum Base: Sendable {
        case virtual(VirtualTimeline)
        case system
    }

    private let base: Base
    // The offset added to the system clock by `advance(by:)`.
    private let offset = Locked<Int64>(0)

    /// A clock that stands still at `startMs` until it is moved.
    /// The default start is 2026-01-01T00:00:00Z, the instant used by the specification's examples.
    public static func manual(startMs: Int64 = 1_767_225_600_000) -> GatewayClock {
        GatewayClock(base: .virtual(VirtualTimeline(startMs: startMs)))
    }

    /// A manual clock on an existing virtual time line (for example a simulated run's).
    public static func manual(on timeline: VirtualTimeline) -> GatewayClock {
        GatewayClock(base: .virtual(timeline))
    }

    /// A clock that follows the system's wall clock.
    public static func system() -> GatewayClock {
        GatewayClock(base: .system)
    }

    private init(base: Base) {
        self.base = base
    }

    /// `true` for a manual (virtual) clock.
    public var isManual: Bool {
        if case .virtual = base { true } else { false }
    }

    /// The virtual time line of a manual clock.
    public var virtualTimeline: VirtualTimeline? {
        if case .virtual(let timeline) = base { timeline } else { nil }
    }

    /// The current Gateway time in Unix milliseconds.
    public var nowMs: Int64 {
        switch base {
        case .virtual(let timeline): timeline.nowMs
        case .system: WallTimeline().nowMs + offset.withLock { $0 }
        }
    }

    /// The time on the clients' time line: the virtual time for a manual clock, the wall clock
    /// (without the offset of ``advance(by:)``) for a system clock. The challenge `ts` carries it
    /// and `signedAt` is judged against it.
    public var peerNowMs: Int64 {
        switch base {
        case .virtual(let timeline): timeline.nowMs
        case .system: WallTimeline().nowMs
        }
    }

    /// The time line waits and timers run on: the virtual time line when a simulation drives it,
    /// the wall clock otherwise (a manual clock in a plain test does not move by itself, so a
    /// wait's deadline there is real time).
    public var waitTimeline: any Timeline {
        if case .virtual(let timeline) = base, timeline.isDriven { return timeline }
        return WallTimeline()
    }

    /// Moves the clock forward. Negative durations are ignored: gateway time never runs backwards.
    /// Everything that sleeps on a manual clock and became due wakes at the new time.
    /// - Returns: the new time in milliseconds.
    @discardableResult
    public func advance(by duration: Duration) -> Int64 {
        let delta = max(0, duration.milliseconds)
        switch base {
        case .virtual(let timeline): timeline.advance(byMs: delta)
        case .system: offset.withLock { $0 += delta }
        }
        return nowMs
    }

    /// Sets a manual clock to `nowMs` if that is later than its current time.
    public func set(_ nowMs: Int64) {
        if case .virtual(let timeline) = base { timeline.advance(toMs: nowMs) }
    }

    /// Suspends until the clock reaches `deadlineMs` (or the task is cancelled).
    ///
    /// On a manual clock the caller wakes when the clock is moved past the deadline, never by
    /// real time passing: a client that shares the Gateway's manual clock backs off and times out
    /// in virtual time. On a system clock this sleeps in real time.
    public func sleep(untilMs deadlineMs: Int64) async {
        switch base {
        case .virtual(let timeline):
            _ = await timeline.sleep(untilMs: deadlineMs, purpose: .activity)
        case .system:
            let remaining = deadlineMs - nowMs
            if remaining > 0 { try? await Task.sleep(for: .milliseconds(remaining)) }
        }
    }

    /// Suspends for `duration` of clock time (see ``sleep(untilMs:)``).
    public func sleep(for duration: Duration) async {
        await sleep(untilMs: nowMs + duration.milliseconds)
    }

    /// The earliest deadline a caller of ``sleep(untilMs:)`` waits for on a manual clock.
    public var nextSleeperDeadlineMs: Int64? {
        virtualTimeline?.nextDeadlineMs(purpose: .activity)
    }
}
