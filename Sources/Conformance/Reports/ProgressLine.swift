import Locking

/// Where a run stands, as one line for a terminal: done/total, verdicts so far, the runs in
/// progress, elapsed and estimated time left.
///
/// Pure: events in, text out; the caller supplies the elapsed time, so rendering never reads a
/// clock.
public struct ProgressLine: Sendable, Hashable {
    /// Runs planned.
    public var total: Int
    /// Runs finished.
    public private(set) var done = 0
    /// Verdicts of the finished runs.
    public private(set) var counts: [Verdict: Int] = [:]
    /// Runs in progress (`ID [profile]`), in the order they started.
    public private(set) var running: [String] = []

    /// Creates the line for `total` runs.
    public init(total: Int) {
        self.total = total
    }

    /// Takes a runner event.
    public mutating func apply(_ event: RunnerEvent) {
        switch event {
        case .started(let key):
            running.append(Self.name(key))
        case .finished(let result):
            done += 1
            counts[result.verdict, default: 0] += 1
            if let index = running.firstIndex(of: Self.name(result.key)) { running.remove(at: index) }
        }
    }

    /// The line, at most `width` characters (the running list is cut first).
    /// - Parameter elapsedMs: time since the run began.
    public func render(elapsedMs: Int64, width: Int = 100) -> String {
        let failed = (counts[.fail] ?? 0) + (counts[.error] ?? 0) + (counts[.timeout] ?? 0)
        var verdicts = ["\(counts[.pass] ?? 0) pass", "\(failed) fail"]
        if let warned = counts[.warn], warned > 0 { verdicts.append("\(warned) warn") }
        if let unsupported = counts[.unsupported], unsupported > 0 { verdicts.append("\(unsupported) unsupported") }
        let head = "[\(done)/\(total)] " + verdicts.joined(separator: ", ")
        var time = "\(Self.clock(elapsedMs)) elapsed"
        if done > 0, done < total {
            let left = elapsedMs * Int64(total - done) / Int64(done)
            time += ", ~\(Self.clock(left)) left"
        }
        let fixed = head + " · " + time
        guard !running.isEmpty else { return String(fixed.prefix(max(0, width))) }
        let room = width - fixed.count - " · running ".count
        var shown: [String] = []
        for (index, name) in running.enumerated() {
            let rest = running.count - index - 1
            let more = rest > 0 ? " +\(rest) more" : ""
            let candidate = (shown + [name]).joined(separator: ", ") + more
            if candidate.count > room { break }
            shown.append(name)
        }
        let more = running.count - shown.count
        let list = shown.isEmpty
            ? "\(running.count) running"
            : "running " + shown.joined(separator: ", ") + (more > 0 ? " +\(more) more" : "")
        let line = head + " · " + list + " · " + time
        return String(line.prefix(max(0, width)))
    }

    static func name(_ key: String) -> String {
        guard let at = key.lastIndex(of: "@") else { return key }
        return "\(key[..<at]) [\(key[key.index(after: at)...])]"
    }

    /// `0:07`, `12:45`, `1:02:03`.
    static func clock(_ milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds) / 1000
        let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }
}

/// A `ProgressLine` redrawn in place on a terminal: each update rewrites the line (`\r`, erase
/// line), `finish()` erases it so the report starts on a clean line.
public final class LiveProgress: Sendable {
    private struct State: Sendable {
        var line: ProgressLine
        var finished = false
    }

    private let state: Locked<State>
    private let write: @Sendable (String) -> Void
    private let elapsedMs: @Sendable () -> Int64
    private let width: Int

    /// Creates a live line.
    /// - Parameters:
    ///   - total: runs planned.
    ///   - width: the terminal's width; the line stays one character shorter.
    ///   - elapsedMs: time since the run began.
    ///   - write: writes to the terminal.
    public init(total: Int, width: Int, elapsedMs: @escaping @Sendable () -> Int64, write: @escaping @Sendable (String) -> Void) {
        self.state = Locked(State(line: ProgressLine(total: total)))
        self.width = max(20, width - 1)
        self.elapsedMs = elapsedMs
        self.write = write
    }

    /// Takes a runner event and redraws.
    public func apply(_ event: RunnerEvent) {
        state.withLock { $0.line.apply(event) }
        redraw()
    }

    /// Redraws (for the elapsed time).
    public func redraw() {
        let elapsed = elapsedMs()
        // Written under the lock so that lines reach the terminal in the order they were made.
        state.withLock { state in
            guard !state.finished else { return }
            write("\r\u{1B}[2K" + state.line.render(elapsedMs: elapsed, width: width))
        }
    }

    /// Erases the line; later updates draw nothing.
    public func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            write("\r\u{1B}[2K")
        }
    }
}
