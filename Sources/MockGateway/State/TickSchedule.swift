import GatewayProtocol

/// When the next `tick` is due (docs/protocol.md §11.1): a small state machine on the Gateway
/// clock.
struct TickSchedule: Sendable, Hashable {
    /// What moves the schedule.
    enum Input: Sendable, Hashable {
        /// The first session opened, or ticks resumed after a fault: the next tick is one
        /// interval from now.
        case restart(nowMs: Int64)
        /// The clock reached `nowMs`.
        case clock(nowMs: Int64)
    }

    /// The tick interval (`hello-ok.policy.tickIntervalMs`).
    let intervalMs: Int
    /// When the next tick is due.
    private(set) var nextTickMs: Int64

    /// A schedule whose first tick is one interval after `nowMs`.
    init(intervalMs: Int, nowMs: Int64) {
        self.intervalMs = intervalMs
        self.nextTickMs = nowMs + Int64(intervalMs)
    }

    /// Moves the schedule; a due tick is a `tick` broadcast. Several intervals may pass in one
    /// advance: a client needs one tick at the current time, not a burst of stale ones, and the
    /// next one stays on the grid of intervals.
    mutating func handle(_ input: Input) -> [GatewayEffect] {
        switch input {
        case .restart(let nowMs):
            nextTickMs = nowMs + Int64(intervalMs)
            return []
        case .clock(let nowMs):
            guard nextTickMs <= nowMs else { return [] }
            let tick = (try? JSONValue(encoding: TickEvent(ts: Int(nowMs)))) ?? .null
            let interval = Int64(max(1, intervalMs))
            nextTickMs = nowMs + interval - ((nowMs - nextTickMs) % interval)
            return [.broadcast(event: GatewayEventName.tick.rawValue, payload: tick, stateVersion: nil)]
        }
    }
}
