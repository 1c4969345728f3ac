#if canImport(Glibc)
import Glibc
import Conformance
import Foundation
import HarnessCLI
import Testing

/// `harness run` used as a library (here: inside the test process) must leave the exit statuses
/// of the host's own children alone. Only the `harness` executable adopts and reaps the orphans
/// of its clients (`OrphanReaping`, enabled by `Harness.main`).
@Suite struct OrphanReapingTests {
    /// Starts `/bin/sh -c "exit STATUS"` without Foundation (nobody else waits for it).
    private static func spawnExiting(with status: Int32) throws -> pid_t {
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", "exit \(status)"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return pid
    }

    @Test func aLibraryRunLeavesTheHostsExitedChildrenToTheHost() async throws {
        let child = try Self.spawnExiting(with: 7)
        // Wait until it has exited, without reaping it: it stays a zombie that only this test
        // may collect.
        var info = siginfo_t()
        #expect(waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) == 0)

        // A process run: each client that ends is terminated and reaped by the harness.
        let harness = try ServeProcess.executable()
        let output = HarnessLibraryTests.Output()
        let status = try await Harness.tool(scenarios: []).main(
            ["run", "--node-command", "\(harness.path) reference-node", "--filter", "HS-001", "--quiet"], io: output.io)
        // The verdict is not the point (a process run waits in real time, and a loaded machine may
        // fail it); the run must have ended its client, which is when the harness reaps.
        #expect(status == 0 || status == 1, "\(output.out)\n\(output.err)")
        #expect(!OrphanReaping.isEnabled)

        var exitStatus: Int32 = 0
        let reaped = waitpid(child, &exitStatus, WNOHANG)
        #expect(reaped == child, "the host's child was reaped by someone else (errno \(errno))")
        #expect((exitStatus >> 8) & 0xFF == 7)
    }
}
#endif
