#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
/// other test and makes their deadlines expire. Here the child is a ``TestProcess``: its output is
/// read on threads of its own, and its exit is awaited without blocking the pool.
public enum AsyncProcess {
    /// Runs `executable` with `arguments` to its end.
    /// - Parameters:
    ///   - environment: the child's environment (default: the test process's).
    ///   - timeout: real time after which the child is killed (SIGKILL), a hang guard.
    /// - Returns: the status and output.
    /// - Throws: when the executable cannot be started.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           timeout: Duration = .seconds(600)) async throws -> ProcessOutput {
        try await run(executable, arguments, input: nil, environment: environment, timeout: timeout)
    }

    /// Runs `executable` with `arguments` to its end, with `input` on its standard input.
    /// - Parameters:
    ///   - input: written to the child's standard input, which is then closed (`nil`: `/dev/null`).
    ///     The child's output is read meanwhile, so a child that answers as it reads does not
    ///     stall; a child that stops reading early makes the write fail, and its output is still
    ///     returned.
    ///   - environment: the child's environment (default: the test process's).
    ///   - timeout: real time after which the child is killed (SIGKILL), a hang guard.
    /// - Returns: the status and output.
    /// - Throws: when the executable cannot be started.
    public static func run(_ executable: URL, _ arguments: [String], input: Data?, environment: [String: String]? = nil,
                           timeout: Duration = .seconds(600)) async throws -> ProcessOutput {
        let stdout = Locked(Data()), stderr = Locked(Data())
        let process = try TestProcess(executable: executable.path, arguments: arguments, environment: environment,
                                      input: input == nil ? .null : .pipe,
                                      stdout: { chunk in stdout.withLock { $0.append(chunk) } },
                                      stderr: { chunk in stderr.withLock { $0.append(chunk) } })
        if let input {
            // EPIPE (the child stopped reading) shows in its status and output.
            try? process.write(input)
            process.closeInput()
        }
        let status: Int32
        if let finished = await process.waitForExit(timeout: timeout) {
            status = finished
        } else {
            process.sendSignal(SIGKILL)
            status = await process.waitForExit()
        }
        return ProcessOutput(status: status, stdout: stdout.withLock { $0 }, stderr: stderr.withLock { $0 })
    }
}
