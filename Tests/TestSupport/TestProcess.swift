#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Locking
import Spawning

/// A child process of a test: `harness serve`, a Python peer, `harness run`.
///
/// The tests do not use Foundation's `Process`. On Linux it learns that a child exited when a
/// socket the child inherited is closed, and two children started at the same moment could each
/// inherit the other's: a `harness serve` that stayed up then hid the exit of a short check
/// process from `waitUntilExit()`, which blocked one of the cooperative pool's two threads (and,
/// inside a `static let`, the other one too) until every deadline of every test running had
/// passed. Here a child inherits nothing but its three streams (``ProcessSpawn``), its output is
/// read by two threads of its own, and its exit is awaited by a third, with `waitid`.
///
/// The exit is reported once both output streams have ended (or 5 s after the exit, when a
/// descendant keeps them open), so whoever waits for the exit has already been handed every line.
public final class TestProcess: Sendable {
    /// What the child reads on its standard input.
    public enum Input: Sendable {
        /// A pipe that ``write(_:)`` writes to and ``closeInput()`` closes.
        case pipe
        /// `/dev/null`.
        case null
    }

    private struct State: Sendable {
        var stdin: Int32
        var status: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }

    /// The process id.
    public let pid: pid_t
    /// The executable's path.
    public let executable: String
    // The lock guards the stdin descriptor, the exit status (set once the child is reaped, so a
    // signal is never sent to a pid that may have been reused) and the exit waiters.
    private let state: Locked<State>

    /// A write to a child that already exited must fail (EPIPE), not kill the test runner.
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - environment: the child's environment; `nil` passes the test process's.
    ///   - input: a pipe to write to, or `/dev/null`.
    ///   - stdout: called with each chunk the child writes to standard output, in order, on a
    ///     thread of its own; with an empty chunk at the end.
    ///   - stderr: the same for standard error.
    /// - Throws: `SpawnError` when it cannot be started.
    public init(executable: String, arguments: [String], environment: [String: String]? = nil, input: Input = .pipe,
                stdout: @escaping @Sendable (Data) -> Void, stderr: @escaping @Sendable (Data) -> Void) throws {
        Self.ignoreSIGPIPE
        self.executable = executable
        // stdout, stderr, and stdin when it is a pipe.
        let made = try ProcessSpawn.pipes(input == .pipe ? 3 : 2)
        let (stdoutPipe, stderrPipe) = (made[0], made[1])
        let stdinPipe = made.count > 2 ? made[2] : nil
        let environmentLines = environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        let pid: pid_t
        do {
            pid = try ProcessSpawn.spawn(
                path: executable, arguments: arguments, environment: environmentLines,
                stdin: stdinPipe.map { .descriptor($0.read) } ?? .null,
                stdout: .descriptor(stdoutPipe.write), stderr: .descriptor(stderrPipe.write))
        } catch {
            ProcessSpawn.closeAll(made)
            throw error
        }
        if let stdinPipe { close(stdinPipe.read) }
        close(stdoutPipe.write)
        close(stderrPipe.write)
        self.pid = pid
        self.state = Locked(State(stdin: stdinPipe?.write ?? -1))

        let drained = DispatchGroup()
        for (fd, deliver, name) in [(stdoutPipe.read, stdout, "stdout"), (stderrPipe.read, stderr, "stderr")] {
            drained.enter()
            let reader = Thread {
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    deliver(Data(buffer[0..<count]))
                }
                close(fd)
                deliver(Data())
                drained.leave()
            }
            reader.name = "test-process-\(name)-\(pid)"
            reader.start()
        }
        let waiter = Thread { [self] in
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
            _ = drained.wait(timeout: .now() + 5)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            let signalNumber = raw & 0x7F
            let status = signalNumber == 0 ? (raw >> 8) & 0xFF : signalNumber
            let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
                state.status = status
                if state.stdin >= 0 {
                    close(state.stdin)
                    state.stdin = -1
                }
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: status) }
        }
        waiter.name = "test-process-exit-\(pid)"
        waiter.start()
    }

    /// Whether it has not exited yet (or its output has not all been handed over).
    public var isRunning: Bool { state.withLock { $0.status == nil } }

    /// The exit status (the signal's number for a child a signal ended), once it exited.
    public var status: Int32? { state.withLock { $0.status } }

    /// Waits until it exited and its output was handed over.
    /// - Returns: the exit status (the signal's number for a child a signal ended).
    public func waitForExit() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = state.withLock { state -> Int32? in
                if let status = state.status { return status }
                state.waiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// Waits until it exited, at most `timeout`.
    /// - Returns: the exit status, or `nil` if it is still running.
    public func waitForExit(timeout: Duration) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await self.waitForExit() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? status
        }
    }

    /// Sends signal `number` unless it has exited and been reaped.
    public func sendSignal(_ number: Int32) {
        state.withLock { state in
            if state.status == nil { _ = kill(pid, number) }
        }
    }

    /// Writes `data` to its standard input.
    /// - Throws: `POSIXError` when the input is closed or the child stopped reading (EPIPE).
    public func write(_ data: Data) throws {
        try state.withLock { state in
            guard state.stdin >= 0 else { throw POSIXError(.EBADF) }
            try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                guard let base = bytes.baseAddress else { return }
                var offset = 0
                while offset < bytes.count {
                    let count = Self.systemWrite(state.stdin, base + offset, bytes.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    }
                    offset += count
                }
            }
        }
    }

    private static func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, bytes, count)
        #else
        Darwin.write(fd, bytes, count)
        #endif
    }

    /// Closes its standard input (the child reads end of file).
    public func closeInput() {
        state.withLock { state in
            if state.stdin >= 0 {
                close(state.stdin)
                state.stdin = -1
            }
        }
    }
}

/// Cuts a byte stream into lines (without the `\n`); what is left at the end is a last line.
public final class LineCutter: Sendable {
    private let buffer = Locked(Data())
    private let deliver: @Sendable (String) -> Void

    /// Creates a cutter that hands each line to `deliver`.
    public init(_ deliver: @escaping @Sendable (String) -> Void) { self.deliver = deliver }

    /// Takes a chunk; an empty chunk is the end of the stream.
    public func take(_ chunk: Data) {
        let lines = buffer.withLock { buffer -> [String] in
            if chunk.isEmpty {
                defer { buffer = Data() }
                return buffer.isEmpty ? [] : [String(decoding: buffer, as: UTF8.self)]
            }
            buffer.append(chunk)
            var lines: [String] = []
            var start = buffer.startIndex
            while let newline = buffer[start...].firstIndex(of: 0x0A) {
                lines.append(String(decoding: buffer[start..<newline], as: UTF8.self))
                start = newline + 1
            }
            buffer = Data(buffer[start...])
            return lines
        }
        for line in lines { deliver(line) }
    }
}
