#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Locking
import TestSupport
import Testing

/// One JSON line printed by `Tests/Interop/ws_peer.py`.
struct PeerLine: Decodable, Sendable {
    var scenario: String?
    var ok: Bool?
    var error: String?
    var done: Bool?
    var port: Int?
    var event: String?
    var path: String?
    var received: Int?
    var reason: String?
    var sent: Int?
    var reply: String?
}

/// The Python `websockets` peer, run as a subprocess with its stdout read line by line.
final class PythonPeer: Sendable {
    /// The package root, found from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let script = packageRoot.appendingPathComponent("Tests/Interop/ws_peer.py").path

    /// CI sets `OPENCLAW_REQUIRE_INTEROP=1`: a missing peer is then a failure, not a skip.
    static let isRequired = InteropInterpreter.isRequired

    /// The interpreter when it can import `websockets`; otherwise why not.
    static let interpreter = InteropInterpreter.find(importing: ["websockets"])

    /// Whether interop tests run: the peer exists, or CI requires it (and the test then fails
    /// with the reason).
    static var shouldRun: Bool {
        if isRequired { return true }
        if case .success = interpreter { return true }
        return false
    }

    private let process: TestProcess
    let lines: AsyncStream<PeerLine>

    /// Starts `ws_peer.py` with `arguments` (a ``TestProcess``, not Foundation's `Process`).
    init(_ arguments: [String]) throws {
        let python = try Self.interpreter.get()
        let (lines, continuation) = AsyncStream<PeerLine>.makeStream()
        let splitter = LineCutter { line in
            if let decoded = try? JSONDecoder().decode(PeerLine.self, from: Data(line.utf8)) { continuation.yield(decoded) }
        }
        process = try TestProcess(executable: python, arguments: ["-u", Self.script] + arguments, input: .null,
                                  stdout: { chunk in
                                      splitter.take(chunk)
                                      if chunk.isEmpty { continuation.finish() }
                                  },
                                  stderr: { chunk in FileHandle.standardError.write(chunk) })
        self.lines = lines
    }

    /// Stops the subprocess.
    func stop() async {
        // SIGKILL: the child may have inherited an ignored SIGTERM from the test runner.
        process.sendSignal(SIGKILL)
        _ = await process.waitForExit()
    }
}

/// Why the Python peer cannot run.
struct PeerUnavailable: Error, CustomStringConvertible {
    var reason: String
    var description: String { "Python interop peer unavailable: \(reason)" }
}
