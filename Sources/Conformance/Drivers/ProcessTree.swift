import Foundation
import Locking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One process as `/proc` shows it.
struct ProcessEntry: Sendable, Hashable {
    /// The process id.
    var pid: pid_t
    /// The parent's id.
    var parent: pid_t
    /// The process group id.
    var group: pid_t
    /// The session id.
    var session: pid_t
    /// The state letter (`R`, `S`, `Z`, ...).
    var state: Character
    /// The start time in clock ticks since boot: with the pid, it names the process even if the
    /// pid is reused later.
    var startTime: UInt64

    /// Whether it has exited and only waits to be reaped.
    var isZombie: Bool { state == "Z" || state == "X" }
}

/// Finding a client's processes, including those that left its process group.
///
/// On Linux the harness reads `/proc`: a process belongs to a client when it descends from the
/// client (parent links), is in the client's process group, or carries the client's tag in its
/// environment (``ChildProcess/tagVariable``), which survives `setsid` and a parent that exited.
/// With ``becomeSubreaper()`` (`prctl(PR_SET_CHILD_SUBREAPER)`), orphaned descendants are
/// re-parented to the harness instead of init, so the harness can also reap them.
///
/// Darwin has no `/proc` and no subreaper: there the harness can only signal the client's
/// process group, and a process that left it (`setsid`) is not found.
enum ProcessTree {
    /// Whether this platform can list processes (Linux).
    static var isSupported: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    /// Every process visible in `/proc`, by pid (empty where unsupported).
    static func snapshot() -> [pid_t: ProcessEntry] {
        #if os(Linux)
        var result: [pid_t: ProcessEntry] = [:]
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return result }
        for name in names {
            guard let pid = pid_t(name), let entry = entry(pid) else { continue }
            result[pid] = entry
        }
        return result
        #else
        return [:]
        #endif
    }

    /// One process, or `nil` when it is gone.
    static func entry(_ pid: pid_t) -> ProcessEntry? {
        #if os(Linux)
        guard let text = readText("/proc/\(pid)/stat") else { return nil }
        // `pid (comm) state ppid pgrp session ...`; comm may contain spaces and parentheses,
        // so the fields start after the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let state = fields[0].first, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
              let session = pid_t(fields[3]), let start = UInt64(fields[19]) else { return nil }
        return ProcessEntry(pid: pid, parent: parent, group: group, session: session, state: state, startTime: start)
        #else
        return nil
        #endif
    }

    /// The command line of `pid` (arguments joined by spaces, at most 120 characters), or its
    /// name when the command line is empty.
    static func commandLine(_ pid: pid_t) -> String {
        #if os(Linux)
        if let data = readBytes("/proc/\(pid)/cmdline"), !data.isEmpty {
            let text = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
            return text.count <= 120 ? text : String(text.prefix(117)) + "..."
        }
        if let name = readText("/proc/\(pid)/comm") { return name.trimmingCharacters(in: .whitespacesAndNewlines) }
        #endif
        return "?"
    }

    /// Whether the environment of `pid` holds `marker` (`NAME=value`). Only processes of the
    /// same user can be read; others never match.
    static func environment(of pid: pid_t, contains marker: [UInt8]) -> Bool {
        #if os(Linux)
        guard let data = readBytes("/proc/\(pid)/environ") else { return false }
        return data.split(separator: 0).contains { $0.elementsEqual(marker) }
        #else
        return false
        #endif
    }

    /// The processes of a client other than the client itself: its descendants, the members
    /// of its process group, and every process carrying its tag; zombies included.
    static func members(of root: pid_t, group: pid_t, tag: [UInt8], in processes: [pid_t: ProcessEntry]) -> [ProcessEntry] {
        var children: [pid_t: [pid_t]] = [:]
        for entry in processes.values { children[entry.parent, default: []].append(entry.pid) }
        var found: Set<pid_t> = []
        var queue: [pid_t] = [root]
        while let pid = queue.popLast() {
            for child in children[pid] ?? [] where found.insert(child).inserted { queue.append(child) }
        }
        let me = getpid()
        for entry in processes.values where entry.pid != root && entry.pid != me && !found.contains(entry.pid) {
            if entry.group == group || (!entry.isZombie && environment(of: entry.pid, contains: tag)) {
                found.insert(entry.pid)
                for child in children[entry.pid] ?? [] { queue.append(child) }
            }
        }
        while let pid = queue.popLast() {
            for child in children[pid] ?? [] where found.insert(child).inserted { queue.append(child) }
        }
        found.remove(root)
        found.remove(me)
        return found.compactMap { processes[$0] }.sorted { $0.pid < $1.pid }
    }

    /// Whether the harness is a child subreaper.
    static var isSubreaper: Bool { subreaper.withLock { $0 } }

    private static let subreaper = Locked(false)

    /// Makes this process the reaper of orphaned descendants (Linux
    /// `prctl(PR_SET_CHILD_SUBREAPER, 1)`), so that a client's processes whose parent exited
    /// stay the harness's to find and reap. Does nothing elsewhere.
    /// - Returns: whether it is a subreaper now.
    @discardableResult
    static func becomeSubreaper() -> Bool {
        #if os(Linux)
        return subreaper.withLock { enabled in
            if enabled { return true }
            // prctl is variadic in C, which Swift cannot call; it is looked up with a fixed
            // signature (the Linux calling conventions pass these integers the same way).
            typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
            let prSetChildSubreaper: Int32 = 36
            guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "prctl") else { return false }
            let prctl = unsafeBitCast(symbol, to: Prctl.self)
            enabled = prctl(prSetChildSubreaper, 1, 0, 0, 0) == 0
            return enabled
        }
        #else
        return false
        #endif
    }

    /// Waits until one of `processes` exits or `deadline` passes, whichever comes first, without
    /// polling: each process is watched through a pidfd (Linux 5.3+, `pidfd_open`), which becomes
    /// readable when it exits, also for a process that is not a child of the harness. The wait
    /// runs on a thread of its own, so no thread of the cooperative pool blocks.
    ///
    /// A process already gone counts as exited. Where pidfds are unavailable (Darwin, older
    /// kernels) it returns at once and the caller's deadline loop decides; on Darwin there are no
    /// descendants to wait for (no `/proc`).
    /// - Returns: whether it could watch the processes (`false`: nothing was waited for).
    @discardableResult
    static func waitForAnyExit(of processes: [ProcessEntry], until deadline: ContinuousClock.Instant) async -> Bool {
        #if os(Linux)
        guard let open = pidfdOpen else { return false }
        var descriptors: [Int32] = []
        for process in processes {
            let descriptor = open(process.pid, 0)
            // ESRCH: it is gone already, which is the event waited for.
            if descriptor < 0 {
                for fd in descriptors { close(fd) }
                return true
            }
            // The pid may have been reused since the snapshot: only the same process counts.
            guard entry(process.pid)?.startTime == process.startTime else {
                close(descriptor)
                for fd in descriptors { close(fd) }
                return true
            }
            descriptors.append(descriptor)
        }
        guard !descriptors.isEmpty else { return true }
        let remaining = deadline - ContinuousClock.now
        let timeoutMs = Int32(clamping: max(0, remaining.milliseconds))
        let watched = descriptors
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                var pending = watched.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                while poll(&pending, nfds_t(pending.count), timeoutMs) < 0 && errno == EINTR {}
                for fd in watched { close(fd) }
                continuation.resume()
            }.start()
        }
        return true
        #else
        return false
        #endif
    }

    #if os(Linux)
    /// glibc's `pidfd_open` (2.36+), looked up at run time so that an older glibc still links.
    private static let pidfdOpen: (@convention(c) (pid_t, UInt32) -> Int32)? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "pidfd_open") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pid_t, UInt32) -> Int32).self)
    }()
    #endif

    /// Reaps `pid` if it is a child of this process that has exited; never blocks.
    static func reapIfExited(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) < 0 && errno == EINTR {}
    }

    #if os(Linux)
    private static func readText(_ path: String) -> String? {
        readBytes(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The whole file, read until end of file (`/proc` files report a size of 0).
    private static func readBytes(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            result.append(contentsOf: buffer[0..<count])
            if result.count > 1 << 20 { break }
        }
        return result
    }
    #endif
}
