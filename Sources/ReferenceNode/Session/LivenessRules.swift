/// Event `seq` bookkeeping per connection (docs/protocol.md §2.5): reset on every connect; a
/// gap is noted and tolerated; events without `seq` are not checked.
struct SeqTracker: Sendable, Hashable {
    /// What an event's `seq` means.
    enum Observation: Sendable, Hashable {
        /// No `seq`, the first one, or the next one.
        case inOrder
        /// One or more numbers were skipped.
        case gap(expected: Int, received: Int)
        /// A number at or below the last one (a duplicate or reordering); tolerated.
        case stale(last: Int, received: Int)
    }

    private(set) var lastSeq: Int?

    /// Records `seq` and says how it relates to the previous one.
    mutating func observe(_ seq: Int?) -> Observation {
        guard let seq else { return .inOrder }
        defer { if seq > (lastSeq ?? Int.min) { lastSeq = seq } }
        guard let last = lastSeq else { return .inOrder }
        if seq == last + 1 { return .inOrder }
        if seq > last + 1 { return .gap(expected: last + 1, received: seq) }
        return .stale(last: last, received: seq)
    }
}

/// The tick watchdog rule (docs/protocol.md §11.1, Swift): only `tick` events (and the hello)
/// refresh liveness; when the last one is older than 2 × `tickIntervalMs`, drop and reconnect.
struct TickWatchdog: Sendable, Hashable {
    /// `policy.tickIntervalMs` from `hello-ok`.
    var tickIntervalMs: Int64
    /// When the last tick (or the hello) arrived.
    var lastTickMs: Int64

    /// The moment the session counts as dead if no tick arrives before.
    var deadlineMs: Int64 { lastTickMs + 2 * tickIntervalMs }

    /// Whether the session is dead at `nowMs`.
    func isExpired(nowMs: Int64) -> Bool { nowMs - lastTickMs >= 2 * tickIntervalMs }
}
