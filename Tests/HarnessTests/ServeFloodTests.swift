#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayProtocol
import Locking
import Testing

/// `harness serve` under a flood, measured by its resident set size (Linux `/proc/PID/status`):
/// 2,000 connections refused before authentication (50 at a time), each sending a 60 KiB frame,
/// then 30 authenticated frames of 20 MiB (two sessions at once). Loopback only, bounded in
/// count and time. The flood comes from a separate process (`Tests/Interop/flood_peer.py`), so
/// that it does not starve the other tests' clients in this process; it pauses after each step
/// until the test has measured.
///
/// The budget (`Benchmarks/README.md`): the process grows by less than 112 MiB at its peak
/// (`VmHWM`: a 20 MiB frame in flight costs about twice its size while it is assembled and
/// parsed), and is within 32 MiB of where it started once the connections have closed (what
/// the transcript and event log keep is bounded at 8 MiB each). Before the memory budget existed
/// the same flood took it from 28 MB to 742 MB and kept it there.
///
/// `OPENCLAW_FLOOD_REFUSED` (default 2000) and `OPENCLAW_FLOOD_SESSIONS` (default 2) change the
/// flood for measurements; `OPENCLAW_FLOOD_CURVE=FILE` writes the measured curve.
@Suite("harness serve: flood", .serialized,
       .enabled(if: FloodRSS.isAvailable, "needs /proc/PID/status (Linux)"),
       .enabled(if: InteropPython.shouldRun, "Python with websockets not found (.venv or OPENCLAW_PYTHON)"))
struct ServeFloodTests {
    static let peakBudget = 112 * 1024 * 1024
    static let settledBudget = 32 * 1024 * 1024

    @Test func memoryStaysBoundedUnderAFloodAndFallsBackAfterwards() async throws {
        let secretFile = try FloodSecretFile()
        defer { secretFile.remove() }
        let serve = try ServeProcess.start(["--port", "0", "--json", "--auth-file", secretFile.path])
        defer { serve.sendSignal(SIGKILL) }
        let listening = try #require(await serve.object("event", "listening"), "\(serve.transcript)")
        let url = try #require(listening["url"]?.stringValue)
        let pid = serve.process.pid
        let environment = ProcessInfo.processInfo.environment
        let refused = max(50, Int(environment["OPENCLAW_FLOOD_REFUSED"] ?? "") ?? 2_000)
        let sessions = max(1, min(30, Int(environment["OPENCLAW_FLOOD_SESSIONS"] ?? "") ?? 2))
        let peer = try InteropPython.start("flood_peer.py", [url, "--token", secretFile.token, "--refused", String(refused),
                                                             "--sessions", String(sessions)])
        defer { peer.sendSignal(SIGKILL) }
        func context() -> Comment { Comment(rawValue: serve.transcript.suffix(2_000) + "\n" + peer.transcript) }
        let curve = FloodCurve()

        // Each step: wait for the peer's line (with a deadline), measure, let it go on.
        var cursor = 0
        func step() async throws -> JSONValue {
            let line = try #require(await peer.objects.first(from: cursor, timeout: .seconds(300)) { _ in true }, context())
            cursor = line.position + 1
            if line.element["step"] == "error" { Issue.record("the flood peer failed: \(line.element.jsonString)") }
            return line.element
        }

        #expect(try await step()["step"] == "warm", context())
        let baseline = try #require(FloodRSS.bytes(pid))
        curve.add("baseline", baseline)
        try peer.send("go")
        var peak = baseline
        var line = try await step()
        while line["step"] == "refused" {
            let rss = try #require(FloodRSS.bytes(pid))
            peak = max(peak, rss)
            curve.add("\(line["done"]?.int64Value ?? 0) refused", rss)
            if line["done"]?.int64Value == Int64(refused) {
                #expect(line["codes"] == ["1008": .int(Int64(refused))], "every connection was refused with 1008: \(line.jsonString)")
            }
            try peer.send("go")
            line = try await step()
        }
        while line["step"] == "large" {
            let rss = try #require(FloodRSS.bytes(pid))
            peak = max(peak, rss)
            curve.add("\(line["done"]?.int64Value ?? 0) x 20 MiB", rss)
            try peer.send("go")
            line = try await step()
        }
        #expect(line["step"] == "closed", context())
        // The high-water mark also catches the peaks between the samples.
        peak = max(peak, try #require(FloodRSS.bytes(pid, field: "VmHWM")))
        curve.add("peak (VmHWM)", peak)

        // Falls back once the connections are closed: the server has seen every close, and a
        // console command round trip shows it has handled everything before.
        var closes = 0
        var closedCursor = 0
        while closes < refused + sessions + 2 {
            let closed = try #require(
                await serve.objects.first(from: closedCursor, timeout: .seconds(60)) { $0["event"] == "connection.closed" },
                "\(closes) closes seen\n\(context())")
            closedCursor = closed.position + 1
            closes += 1
        }
        let barrier = serve.objects.count
        try serve.send("pending")
        _ = try #require(await serve.object(after: barrier, "event", "command.ok"), context())
        let settledLimit = baseline + Self.settledBudget
        let settled = try #require(FloodRSS.bytes(pid))
        curve.add("closed", settled)
        curve.report()
        try peer.send("go")
        #expect(try await step()["step"] == "done", context())

        #expect(peak - baseline < Self.peakBudget, "peak growth \(FloodRSS.mib(peak - baseline)) over the budget\n\(curve.text)")
        #expect(settled < settledLimit, "after closing \(FloodRSS.mib(settled - baseline)) above the baseline\n\(curve.text)")
        #expect(serve.process.isRunning, "\(serve.transcript.suffix(2_000))")
    }
}

/// The measured points, printed for `Benchmarks/README.md`.
final class FloodCurve: Sendable {
    private let start = ContinuousClock.now
    private let points = Locked<[(String, Int, Duration)]>([])

    func add(_ label: String, _ bytes: Int) {
        let elapsed = ContinuousClock.now - start
        points.withLock { $0.append((label, bytes, elapsed)) }
    }

    var text: String {
        points.withLock { points in
            let base = points.first?.1 ?? 0
            return points.map { label, bytes, elapsed in
                let seconds = String(format: "%5.1f s", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                return "\(seconds)  \(label): RSS \(FloodRSS.mib(bytes)) (\(FloodRSS.mib(bytes - base, signed: true)))"
            }.joined(separator: "\n")
        }
    }

    func report() {
        print("harness serve flood, resident set size:\n\(text)")
        if let path = ProcessInfo.processInfo.environment["OPENCLAW_FLOOD_CURVE"] {
            try? Data((text + "\n").utf8).write(to: URL(fileURLWithPath: path))
        }
    }
}

/// `VmRSS` of a process.
enum FloodRSS {
    static var isAvailable: Bool { FileManager.default.fileExists(atPath: "/proc/self/status") }

    /// `VmRSS` (or another `Vm…` field, such as the high-water mark `VmHWM`) in bytes.
    static func bytes(_ pid: Int32, field: String = "VmRSS") -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return nil
    }

    static func mib(_ bytes: Int, signed: Bool = false) -> String {
        let value = String(format: "%.1f MiB", Double(bytes) / 1_048_576)
        return signed && bytes >= 0 ? "+" + value : value
    }
}

/// A `--auth-file` with a random token, readable by the owner only.
struct FloodSecretFile {
    let path: String
    let token: String

    init() throws {
        token = "FLOODTOKEN-" + UUID().uuidString
        path = FileManager.default.temporaryDirectory.appendingPathComponent("openclaw-flood-\(UUID().uuidString).auth").path
        guard FileManager.default.createFile(atPath: path, contents: Data("token:\(token)\n".utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw EnvironmentProblem(description: "cannot write \(path)")
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
