import Foundation
import Locking

/// A finished child process: its exit status and everything it wrote.
public struct ProcessOutput: Sendable {
    /// The exit status (or the terminating signal's number for a killed process).
    public var status: Int32
    /// Standard output.
    public var stdout: Data
    /// Standard error.
    public var stderr: Data

    /// Standard output as UTF-8 text.
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs child processes for tests without blocking a thread of Swift's cooperative pool.
///
/// `Process.waitUntilExit()` and `readDataToEndOfFile()` block their thread; on a machine with
/// two cores the pool has two threads, so one test blocking while a long child runs stalls every
/// other test and makes their deadlines expire. Here the output is read on threads of the
/// process's own, and the exit is awaited through `terminationHandler`.
public enum AsyncProcess {
    /// Runs `executable` with `arguments` to its end.
    /// - Parameters:
    ///   - environment: the child's environment (default: the test process's).
    ///   - timeout: real time after which the child is killed (SIGKILL), a hang guard.
    /// - Returns: the status and output.
    /// - Throws: when the executable cannot be started.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           timeout: Duration = .seconds(600)) async throws -> ProcessOutput {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let exited = ExitSignal()
        process.terminationHandler = { exited.fire($0.terminationStatus) }
        let stdout = DrainedPipe(output.fileHandleForReading)
        let stderr = DrainedPipe(errors.fileHandleForReading)
        try process.run()
        let pid = process.processIdentifier
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await exited.wait() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { kill(pid, SIGKILL) }
                return nil
            }
            var status: Int32 = -1
            for await result in group {
                if let result {
                    status = result
                    break
                }
            }
            group.cancelAll()
            return status
        }
        return ProcessOutput(status: status, stdout: await stdout.data(), stderr: await stderr.data())
    }
}

/// The exit status, handed from `terminationHandler` to an async waiter.
private final class ExitSignal: Sendable {
    private let state = Locked<(status: Int32?, waiter: CheckedContinuation<Int32?, Never>?)>((nil, nil))

    func fire(_ status: Int32) {
        let waiter = state.withLock { state -> CheckedContinuation<Int32?, Never>? in
            state.status = status
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: status)
    }

    func wait() async -> Int32? {
        await withCheckedContinuation { continuation in
            let status = state.withLock { state -> Int32? in
                if let status = state.status { return status }
                state.waiter = continuation
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }
}

/// A pipe read to its end on a thread of its own, so that a chatty child never blocks on a
/// full pipe and no pool thread waits for it.
private final class DrainedPipe: Sendable {
    private let state = Locked<(data: Data?, waiter: CheckedContinuation<Data, Never>?)>((nil, nil))

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            let data = handle.readDataToEndOfFile()
            let waiter = state.withLock { state -> CheckedContinuation<Data, Never>? in
                state.data = data
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: data)
        }
        thread.start()
    }

    func data() async -> Data {
        await withCheckedContinuation { continuation in
            let data = state.withLock { state -> Data? in
                if let data = state.data { return data }
                state.waiter = continuation
                return nil
            }
            if let data { continuation.resume(returning: data) }
        }
    }
}
