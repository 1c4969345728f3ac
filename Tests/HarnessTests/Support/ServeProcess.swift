#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayProtocol
import MockGateway
import Locking
import TestSupport
import Testing

/// The package root, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Why a test's environment is not usable (a missing executable or interpreter).
struct EnvironmentProblem: Error, CustomStringConvertible {
    var description: String
}

/// A child process whose stdout is read live, one line at a time, into an `EventLog` that
/// tests wait on with deadlines. Lines that are JSON objects are also parsed. It runs as a
/// ``TestProcess`` (not Foundation's `Process`, whose exit notification a concurrently started
/// child could hold up), and its exit is logged only after its last line.
final class LineProcess: Sendable {
    let name: String
    let process: TestProcess
    /// Every stdout line, in order.
    let lines = EventLog<String>()
    /// Every stdout line that is a JSON object, in order.
    let objects = EventLog<JSONValue>()
    /// Every stderr line.
    let errors = EventLog<String>()
    /// The exit status, once it exited.
    let exits = EventLog<Int32>()

    init(name: String, executable: URL, arguments: [String], environment: [String: String]? = nil) throws {
        self.name = name
        let (lines, objects, errors, exits) = (self.lines, self.objects, self.errors, self.exits)
        let stdout = LineCutter { line in
            lines.append(line)
            if let value = try? JSONValue(parsing: line), value.objectValue != nil { objects.append(value) }
        }
        let stderr = LineCutter { errors.append($0) }
        let process = try TestProcess(executable: executable.path, arguments: arguments, environment: environment,
                                      stdout: { stdout.take($0) }, stderr: { stderr.take($0) })
        self.process = process
        Task { exits.append(await process.waitForExit()) }
    }

    /// Writes one line to the child's stdin.
    func send(_ line: String) throws {
        try process.write(Data((line + "\n").utf8))
    }

    /// Closes the child's stdin.
    func closeInput() {
        process.closeInput()
    }

    /// The first JSON line at or after `cursor` that `predicate` accepts, or `nil` after `timeout`.
    func object(after cursor: Int = 0, timeout: Duration = .seconds(30),
                where predicate: @escaping @Sendable (JSONValue) -> Bool) async -> JSONValue? {
        await objects.first(from: cursor, timeout: timeout, where: predicate)?.element
    }

    /// The first JSON line at or after `cursor` whose `key` member is the string `value`.
    func object(after cursor: Int = 0, timeout: Duration = .seconds(30), _ key: String, _ value: String,
                and predicate: @escaping @Sendable (JSONValue) -> Bool = { _ in true }) async -> JSONValue? {
        await object(after: cursor, timeout: timeout) { $0[key]?.stringValue == value && predicate($0) }
    }

    /// The exit status, or `nil` if the child is still running after `timeout`.
    func waitForExit(timeout: Duration) async -> Int32? {
        await exits.first(from: 0, timeout: timeout) { _ in true }?.element
    }

    /// Sends SIGKILL if it is still running and waits for it to be reaped.
    func kill() async {
        process.sendSignal(SIGKILL)
        _ = await waitForExit(timeout: .seconds(10))
    }

    /// Sends `number` (SIGTERM, SIGINT) to the child unless it has exited.
    func sendSignal(_ number: Int32) {
        process.sendSignal(number)
    }

    /// Everything it wrote, for failure messages.
    var transcript: String {
        "\(name) stdout:\n" + lines.all.joined(separator: "\n") + "\n\(name) stderr:\n" + errors.all.joined(separator: "\n")
    }
}

/// `harness serve` as a child process.
enum ServeProcess {
    /// The built `harness` executable: `OPENCLAW_HARNESS_BIN`, else next to the test bundle (the
    /// build products directory), else `.build/debug/harness` in the package.
    static func executable() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment["OPENCLAW_HARNESS_BIN"] {
            guard FileManager.default.isExecutableFile(atPath: configured) else {
                throw EnvironmentProblem(description: "OPENCLAW_HARNESS_BIN=\(configured) is not an executable file")
            }
            return URL(fileURLWithPath: configured)
        }
        var directories: [URL] = []
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        if let executable = Bundle.main.executableURL {
            // Linux: the test executable itself lies in the products directory; macOS: inside
            // `<name>.xctest/Contents/MacOS/`.
            var directory = executable.deletingLastPathComponent()
            for _ in 0..<4 {
                directories.append(directory)
                directory = directory.deletingLastPathComponent()
            }
        }
        directories.append(URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent())
        directories.append(packageRoot.appendingPathComponent(".build/debug"))
        for directory in directories {
            let candidate = directory.appendingPathComponent("harness")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw EnvironmentProblem(description: """
            the harness executable was not found next to the test bundle (looked in \
            \(directories.map(\.path).joined(separator: ", "))); build it with `swift build` or set OPENCLAW_HARNESS_BIN
            """)
    }

    /// Starts `harness serve <arguments>`, with `environment` added to the test's environment.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> LineProcess {
        let merged = environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return try LineProcess(name: "harness serve", executable: try executable(), arguments: ["serve"] + arguments,
                               environment: merged)
    }

    /// Runs `body` with `harness serve --port 0 --json <extra>` started and its `listening` line
    /// read, with `environment` added to the test's; stops the server afterwards (`quit`, then
    /// SIGKILL if it does not exit).
    static func withServe<T: Sendable>(_ extra: [String] = [], environment: [String: String] = [:],
                                       _ body: (LineProcess, String) async throws -> T) async throws -> T {
        let serve = try start(["--port", "0", "--json"] + extra, environment: environment)
        do {
            let listening = try #require(await serve.object("event", "listening"), "no listening line\n\(serve.transcript)")
            let url = try #require(listening["url"]?.stringValue)
            let result = try await body(serve, url)
            try? serve.send("quit")
            if await serve.waitForExit(timeout: .seconds(15)) == nil {
                Issue.record("harness serve did not exit after quit\n\(serve.transcript)")
            }
            await serve.kill()
            return result
        } catch {
            await serve.kill()
            // The server's side of the story (closes with their codes, pairing events) is in its
            // output; an error alone does not say whether the server or the client ended things.
            Issue.record("harness serve output when the test failed with \(error):\n\(serve.transcript.suffix(6_000))")
            throw error
        }
    }
}

/// The Python interpreter of the interop tests.
enum InteropPython {
    /// CI sets `OPENCLAW_REQUIRE_INTEROP=1`: a missing interpreter is then a failure, not a skip.
    static let isRequired = InteropInterpreter.isRequired

    /// The interpreter when it can import `websockets` and `cryptography`; otherwise why not.
    static let interpreter = InteropInterpreter.find(importing: ["websockets", "cryptography"])

    /// Whether the interop tests run: the interpreter is usable, or CI requires them (they then
    /// fail with the reason).
    static var shouldRun: Bool {
        if isRequired { return true }
        if case .success = interpreter { return true }
        return false
    }

    /// Starts `Tests/Interop/<script> <arguments>`.
    static func start(_ script: String, _ arguments: [String]) throws -> LineProcess {
        let python = try interpreter.get()
        let path = packageRoot.appendingPathComponent("Tests/Interop/\(script)").path
        return try LineProcess(name: script, executable: URL(fileURLWithPath: python), arguments: ["-u", path] + arguments)
    }

    /// Runs `body` with `Tests/Interop/<script> <arguments>` started, and kills the peer
    /// afterwards, also when `body` throws.
    static func withPeer<T: Sendable>(_ script: String, _ arguments: [String],
                                      _ body: (LineProcess) async throws -> T) async throws -> T {
        // Throws (fails) with the reason when OPENCLAW_REQUIRE_INTEROP=1 and Python is missing.
        let peer = try start(script, arguments)
        return try await withCleanup { try await body(peer) } cleanup: { await peer.kill() }
    }
}

extension LineProcess {
    /// Expects a Python peer to report each of `checks` (`{"check": name, "ok": true}`), in order.
    func expectChecksPass(_ checks: [String], timeout: Duration = .seconds(30), context: () -> Comment,
                          sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for check in checks {
            let line = try #require(await object(timeout: timeout, "check", check), context(), sourceLocation: sourceLocation)
            #expect(line["ok"] == true, "\(check): \(line["detail"]?.jsonString ?? "")", sourceLocation: sourceLocation)
        }
    }

    /// Expects a Python peer's `done` step, then its exit with status 0.
    func expectDoneAndExit(timeout: Duration = .seconds(30), context: () -> Comment,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
        _ = try #require(await object(timeout: timeout, "step", "done"), context(), sourceLocation: sourceLocation)
        #expect(await waitForExit(timeout: .seconds(30)) == 0, context(), sourceLocation: sourceLocation)
    }
}
