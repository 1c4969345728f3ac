import Foundation
import Locking
import Spawning

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a child process ended.
enum ChildExit: Sendable, Hashable, CustomStringConvertible {
    /// It exited with a status.
    case exited(Int32)
    /// A signal killed it.
    case signaled(Int32)

    var description: String {
        switch self {
        case .exited(let status) where status > 128 && status < 128 + 65:
            // What a shell (`/bin/sh -c`) reports when its child dies by a signal.
            "exit status \(status): signal \(status - 128)\(ChildExit.signalName(status - 128).map { " (\($0))" } ?? "")"
        case .exited(let status): "exit status \(status)"
        case .signaled(let signal): "killed by signal \(signal)\(ChildExit.signalName(signal).map { " (\($0))" } ?? "")"
        }
    }

    static func signalName(_ signal: Int32) -> String? {
        switch signal {
        case SIGKILL: "SIGKILL"
        case SIGTERM: "SIGTERM"
        case SIGSEGV: "SIGSEGV"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGILL: "SIGILL"
        case SIGINT: "SIGINT"
        case SIGPIPE: "SIGPIPE"
        default: nil
        }
    }
}

/// A process the harness had to end, for the run's log.
struct EndedProcess: Sendable, Hashable, CustomStringConvertible {
    /// Why it was still there.
    enum Reason: Sendable, Hashable {
        /// It was in the client's process group and still ran when the grace period ended.
        case ignoredSIGTERM
        /// It had left the client's process group (`setsid`, its own group).
        case leftProcessGroup
    }

    /// The process id.
    var pid: Int32
    /// Its command line, as read before it was signalled.
    var command: String
    /// The signal that ended it (SIGTERM or SIGKILL).
    var signal: Int32
    /// How long after the harness's SIGTERM it ended (for SIGKILL: when it was sent).
    var afterMs: Int64
    /// Why it was still there.
    var reason: Reason
    /// Whether it is the client process itself (the `/bin/sh -c` the harness started).
    var isClient: Bool

    var description: String {
        let who = isClient ? "the client process \(pid) (\(command))" : "pid \(pid) (\(command))"
        let signalName = ChildExit.signalName(signal) ?? "signal \(signal)"
        switch (reason, signal) {
        case (.leftProcessGroup, SIGTERM):
            return "\(who) had left the client's process group (setsid); ended it with SIGTERM after \(afterMs) ms"
        case (.leftProcessGroup, _):
            return "\(who) had left the client's process group (setsid) and ignored SIGTERM; killed it with \(signalName) after \(afterMs) ms"
        case (.ignoredSIGTERM, _):
            return "\(who) ignored SIGTERM; killed it with \(signalName) after \(afterMs) ms"
        }
    }
}

/// How ending a client went: the client's own exit and every process the harness had to end
/// besides the ordinary SIGTERM to the process group.
struct ChildTermination: Sendable, Hashable {
    /// How the client process (the shell) ended.
    var exit: ChildExit
    /// Its command line, as read before it was signalled.
    var command: String
    /// The processes named in the log.
    var ended: [EndedProcess]
}

/// A child process started with `/bin/sh -c COMMAND` in its own process group, with its
/// stdin, stdout and stderr connected to pipes.
///
/// Output is read by two dedicated threads and handed over line by line. The exit is observed by
/// a third thread with `waitid(WNOWAIT)`, which leaves the child unreaped: its pid, and so its
/// process group id, cannot be reused until `terminate` has killed the whole group and reaped it.
///
/// Each child's environment carries a tag (``tagVariable``) that its descendants inherit, so that
/// `terminate` finds those that left the process group (Linux, ``ProcessTree``).
final class ChildProcess: Sendable {
    /// The environment variable holding a child's tag.
    static let tagVariable = "OPENCLAW_HARNESS_PROCESS"

    /// Whether zombies adopted as a subreaper are reaped after each client: only when every
    /// child of this process is a client or one of its descendants (`harness run`), never in a
    /// process that also runs children of its own (a test runner).
    static let reapsAdoptedOrphans = Locked(false)

    private struct State: Sendable {
        var stdin: Int32
        var exit: ChildExit?
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
        var reaped = false
    }

    /// The process id, which is also its process group id.
    let pid: pid_t
    /// `OPENCLAW_HARNESS_PROCESS=<tag>`, as found in the environment of its descendants.
    let tagMarker: [UInt8]
    // The lock guards the stdin descriptor, the exit status and the waiters.
    private let state: Locked<State>

    /// Serialises pipe creation and spawning. Pipes are close-on-exec from the start and children
    /// inherit nothing but their three streams (``ProcessSpawn``); the lock matters where `pipe2`
    /// is missing, so that no concurrently spawned client inherits another client's pipe ends
    /// between `pipe()` and `fcntl(FD_CLOEXEC)`.
    private static let spawnLock = Locked(())

    private init(pid: pid_t, stdin: Int32, tagMarker: [UInt8]) {
        self.pid = pid
        self.tagMarker = tagMarker
        self.state = Locked(State(stdin: stdin))
    }

    /// Starts `/bin/sh -c command`.
    /// - Parameters:
    ///   - command: the shell command line.
    ///   - environment: the complete environment.
    ///   - onStdoutLine: called for each line on stdout, in order, from a reader thread.
    ///   - onStderrLine: called for each line on stderr, in order, from a reader thread.
    ///   - onExit: called once when the process exits (before it is reaped).
    /// - Throws: `HarnessError` when the process cannot be started.
    static func spawn(
        command: String, environment: [String: String],
        onStdoutLine: @escaping @Sendable (String) -> Void,
        onStderrLine: @escaping @Sendable (String) -> Void,
        onExit: @escaping @Sendable (ChildExit) -> Void
    ) throws -> ChildProcess {
        ignoreSIGPIPE
        var environment = environment
        let tag = UUID().uuidString
        environment[tagVariable] = tag
        let (pid, stdinWrite, stdoutRead, stderrRead) = try spawnLock.withLock { _ in
            try spawnLocked(command: command, environment: environment)
        }
        let marker = Array("\(tagVariable)=\(tag)".utf8)
        let child = ChildProcess(pid: pid, stdin: stdinWrite, tagMarker: marker)
        LiveProcessGroups.shared.insert(pid, tag: marker)
        let stdoutDrained = DispatchSemaphore(value: 0)
        startReader(fd: stdoutRead, name: "stdout", onLine: onStdoutLine, onEnd: { stdoutDrained.signal() })
        startReader(fd: stderrRead, name: "stderr", onLine: onStderrLine, onEnd: {})
        let waiter = Thread { [child] in
            let exit = child.waitForExitWithoutReaping()
            // Hand over what the process wrote before it exited (a last reply) before reporting
            // the exit. A grandchild may keep stdout open, so the wait is bounded.
            _ = stdoutDrained.wait(timeout: .now() + .milliseconds(500))
            child.markExited(exit)
            onExit(exit)
        }
        waiter.name = "openclaw-child-wait-\(pid)"
        waiter.start()
        return child
    }

    /// Writing to a pipe whose reader died must fail with EPIPE, not kill the harness.
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    private static func spawnLocked(command: String, environment: [String: String]) throws
        -> (pid_t, Int32, Int32, Int32)
    {
        let made: [(read: Int32, write: Int32)]
        do { made = try ProcessSpawn.pipes(3) } catch { throw HarnessError(error.description) }
        let (input, output, errors) = (made[0], made[1], made[2])
        // Own process group (pgid = pid), no blocked signals, the default action for the signals
        // the harness may ignore or handle itself, and no descriptor but the three pipes: a
        // descriptor of the host process (a test runner's Foundation `Process` bookkeeping, a
        // socket) kept open by a client would outlive what it belongs to (`ProcessSpawn`).
        let environmentLines = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let pid: pid_t
        do {
            pid = try ProcessSpawn.spawn(
                path: "/bin/sh", arguments: ["-c", command], environment: environmentLines,
                stdin: .descriptor(input.read), stdout: .descriptor(output.write), stderr: .descriptor(errors.write),
                newProcessGroup: true)
        } catch {
            ProcessSpawn.closeAll(made)
            throw HarnessError(error.description)
        }
        close(input.read)
        close(output.write)
        close(errors.write)
        // A client that stops reading stdin must not block the harness.
        let flags = fcntl(input.write, F_GETFL)
        _ = fcntl(input.write, F_SETFL, flags | O_NONBLOCK)
        return (pid, input.write, output.read, errors.read)
    }

    private static func startReader(fd: Int32, name: String, onLine: @escaping @Sendable (String) -> Void,
                                    onEnd: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: 0x0A) {
                    var line = pending[..<newline]
                    if line.last == 0x0D { line = line.dropLast() }
                    onLine(String(decoding: line, as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
                // Bound memory for a client that never writes a newline.
                if pending.count > 1 << 20 {
                    onLine(String(decoding: pending, as: UTF8.self))
                    pending.removeAll()
                }
            }
            if !pending.isEmpty { onLine(String(decoding: pending, as: UTF8.self)) }
            close(fd)
            onEnd()
        }
        thread.name = "openclaw-child-\(name)"
        thread.start()
    }

    private func waitForExitWithoutReaping() -> ChildExit {
        var info = siginfo_t()
        while true {
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
            if result == 0 { break }
            if errno == EINTR { continue }
            // ECHILD: somebody else reaped it; the status is unknown.
            return .exited(-1)
        }
        #if canImport(Glibc)
        let status = info._sifields._sigchld.si_status
        #else
        let status = info.si_status
        #endif
        // si_code: CLD_EXITED (1) carries the exit status; CLD_KILLED (2) and CLD_DUMPED (3) a signal.
        return info.si_code == 1 ? .exited(status) : .signaled(status)
    }

    private func markExited(_ exit: ChildExit) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.exit = exit
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How it ended, once it has.
    var exit: ChildExit? { state.withLock { $0.exit } }

    /// Waits until the process exits, or until `timeout` passes.
    /// - Returns: whether it exited.
    func waitForExit(timeout: Duration) async -> Bool {
        let exited: Void? = try? await withDeadline(timeout, CancellationError()) { [self] in
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.exit != nil { return true }
                    state.exitWaiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
        return exited != nil
    }

    /// Writes `line` and a newline to the child's stdin.
    /// - Throws: `HarnessError` when the pipe is closed or full.
    func writeLine(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        try state.withLock { state in
            guard state.stdin >= 0 else { throw HarnessError("the client's stdin is closed") }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(state.stdin, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN { throw HarnessError("the client does not read its stdin (pipe full)") }
                    throw HarnessError("cannot write to the client's stdin: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// Closes the child's stdin (it sees end of file).
    func closeStdin() {
        state.withLock { state in
            if state.stdin >= 0 {
                close(state.stdin)
                state.stdin = -1
            }
        }
    }

    /// Ends the child and every process that belongs to it: closes stdin, sends SIGTERM to its
    /// process group and to each of its processes that left the group, waits up to `grace` for
    /// all of them to end, then sends SIGKILL to whatever is left, and reaps the child (and,
    /// as a subreaper, the killed descendants it adopted).
    /// - Returns: how the child ended and which processes had to be ended besides the group's
    ///   SIGTERM (those that left the group, those that ignored SIGTERM).
    @discardableResult
    func terminate(grace: Duration) async -> ChildTermination {
        closeStdin()
        let start = ContinuousClock.now
        let command = ProcessTree.commandLine(pid)
        func members() -> [ProcessEntry] {
            ProcessTree.members(of: pid, group: pid, tag: tagMarker, in: ProcessTree.snapshot()).filter { !$0.isZombie }
        }
        var known: [pid_t: (entry: ProcessEntry, command: String)] = [:]
        func remember(_ entries: [ProcessEntry]) {
            for entry in entries where known[entry.pid] == nil { known[entry.pid] = (entry, ProcessTree.commandLine(entry.pid)) }
        }
        func stillSame(_ entry: ProcessEntry) -> Bool {
            guard let now = ProcessTree.entry(entry.pid) else { return false }
            return now.startTime == entry.startTime && !now.isZombie
        }
        var ended: [EndedProcess] = []
        var goneEscapees: Set<pid_t> = []
        var clientIgnoredSIGTERM = false

        remember(members())
        if exit == nil || !known.isEmpty {
            kill(-pid, SIGTERM)
            for (escapee, _) in known.values where escapee.group != pid { kill(escapee.pid, SIGTERM) }
            let deadline = start + grace
            if exit == nil { _ = await waitForExit(timeout: grace) }
            // Descendants are not children, so there is no SIGCHLD for them: each pass waits on
            // their pidfds until one exits (or the grace period ends), then looks again, because
            // one that exits may have started others.
            while true {
                let alive = members()
                remember(alive)
                for (entry, command) in known.values where entry.group != pid && !goneEscapees.contains(entry.pid)
                    && !alive.contains(where: { $0.pid == entry.pid }) {
                    goneEscapees.insert(entry.pid)
                    ended.append(EndedProcess(pid: entry.pid, command: command, signal: SIGTERM,
                                              afterMs: (ContinuousClock.now - start).milliseconds, reason: .leftProcessGroup,
                                              isClient: false))
                }
                if alive.isEmpty || ContinuousClock.now >= deadline { break }
                // Without pidfds (kernel before 5.3) nothing can be waited on: the remaining
                // processes are killed below, as at the end of the grace period.
                guard await ProcessTree.waitForAnyExit(of: alive, until: deadline) else { break }
            }
            let elapsed = (ContinuousClock.now - start).milliseconds
            if exit == nil {
                clientIgnoredSIGTERM = true
                ended.append(EndedProcess(pid: pid, command: command, signal: SIGKILL, afterMs: elapsed, reason: .ignoredSIGTERM,
                                          isClient: true))
            }
            for entry in members() {
                remember([entry])
                guard stillSame(entry) else { continue }
                kill(entry.pid, SIGKILL)
                ended.append(EndedProcess(pid: entry.pid, command: known[entry.pid]?.command ?? ProcessTree.commandLine(entry.pid),
                                          signal: SIGKILL, afterMs: elapsed,
                                          reason: entry.group == pid ? .ignoredSIGTERM : .leftProcessGroup, isClient: false))
            }
            if clientIgnoredSIGTERM {
                kill(-pid, SIGKILL)
                _ = await waitForExit(timeout: .seconds(10))
            }
        }
        // The child is exited but unreaped, so the group id is still ours to signal.
        kill(-pid, SIGKILL)
        let exit = reap()
        LiveProcessGroups.shared.remove(pid)
        for pid in known.keys { ProcessTree.reapIfExited(pid) }
        if Self.reapsAdoptedOrphans.withLock({ $0 }) { LiveProcessGroups.shared.reapAdoptedZombies() }
        return ChildTermination(exit: exit, command: command, ended: ended.sorted { ($0.afterMs, $0.pid) < ($1.afterMs, $1.pid) })
    }

    private func reap() -> ChildExit {
        let alreadyReaped = state.withLock { state in
            defer { state.reaped = true }
            return state.reaped
        }
        let fallback = exit ?? .exited(-1)
        guard !alreadyReaped else { return fallback }
        // A child that survived SIGKILL (stuck in the kernel) is not waited for forever.
        let options: Int32 = exit == nil ? WNOHANG : 0
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, options)
            if result > 0 { break }
            if result == 0 || errno != EINTR { return fallback }
        }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }
}

/// The process groups of clients that are running, so that an interrupted harness can kill them
/// (they are in their own groups, so a terminal's Ctrl-C does not reach them).
final class LiveProcessGroups: Sendable {
    static let shared = LiveProcessGroups()

    // The lock guards the map of group ids to tags.
    private let groups = Locked<[pid_t: [UInt8]]>([:])

    func insert(_ pgid: pid_t, tag: [UInt8]) { groups.withLock { $0[pgid] = tag } }
    func remove(_ pgid: pid_t) { _ = groups.withLock { $0.removeValue(forKey: pgid) } }

    /// Sends SIGKILL to every live group and to every process that left one of them.
    func killAll() {
        let live = groups.withLock { $0 }
        let processes = ProcessTree.snapshot()
        for (pgid, tag) in live {
            kill(-pgid, SIGKILL)
            for member in ProcessTree.members(of: pgid, group: pgid, tag: tag, in: processes) where !member.isZombie {
                kill(member.pid, SIGKILL)
            }
        }
    }

    /// Reaps every exited child of this process that is not a running client: as a subreaper,
    /// the harness adopts the orphans of its clients.
    func reapAdoptedZombies() {
        let live = groups.withLock { Set($0.keys) }
        let me = getpid()
        for entry in ProcessTree.snapshot().values where entry.parent == me && entry.isZombie && !live.contains(entry.pid) {
            ProcessTree.reapIfExited(entry.pid)
        }
    }
}

/// Orphans of client processes, for a program that owns every one of its child processes.
public enum OrphanReaping {
    /// Makes this process adopt the orphans of its clients (Linux: a child subreaper) and reap
    /// every exited child that is not a running client after each client ends, so that a client
    /// that daemonizes leaves neither a process nor a zombie behind.
    ///
    /// Call it only from a program whose every child process is a client the harness started,
    /// as the `harness` executable does through `Harness.main`. A test process or an app that
    /// also starts children of its own (with `Process`, say) must not call it: their exit
    /// statuses would be reaped away from them. `harness run` through ``ConformanceCommands`` or
    /// `Harness.run` does not enable it by itself.
    /// - Returns: whether orphans are adopted now (always `false` off Linux).
    @discardableResult
    public static func enableForThisProcess() -> Bool {
        guard ProcessTree.becomeSubreaper() else { return false }
        ChildProcess.reapsAdoptedOrphans.withLock { $0 = true }
        return true
    }

    /// Whether ``enableForThisProcess()`` took effect.
    public static var isEnabled: Bool { ChildProcess.reapsAdoptedOrphans.withLock { $0 } }
}

/// What the harness does when it is interrupted.
public enum InterruptHandling {
    /// Dispatch sources are thread-safe (libdispatch objects may be used from any thread); the box
    /// only keeps them alive, and it is written once, under the lock.
    private struct SignalSources: @unchecked Sendable {
        var sources: [any DispatchSourceSignal] = []
        var started = false
    }

    private static let installed = Locked(SignalSources())

    /// On SIGINT, SIGTERM or SIGHUP: kills every client process group the harness started,
    /// prints a note on stderr and exits with 130. Call early, from a command-line tool; later
    /// calls do nothing (setting SIG_IGN again after libdispatch installed its handler would
    /// silence the sources).
    public static func install() {
        let first = installed.withLock { box -> Bool in
            defer { box.started = true }
            return !box.started
        }
        guard first else { return }
        var created: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                LiveProcessGroups.shared.killAll()
                FileHandle.standardError.write(Data("\ninterrupted: client processes killed\n".utf8))
                exit(130)
            }
            source.resume()
            created.append(source)
        }
        let box = SignalSources(sources: created)
        installed.withLock { $0.sources += box.sources }
    }
}
