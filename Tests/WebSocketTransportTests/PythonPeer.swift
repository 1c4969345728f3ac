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

    private let process: Process
    let lines: AsyncStream<PeerLine>

    /// Starts `ws_peer.py` with `arguments`.
    init(_ arguments: [String]) throws {
        let python = try Self.interpreter.get()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-u", Self.script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        let (lines, continuation) = AsyncStream<PeerLine>.makeStream()
        let splitter = LineSplitter(continuation)
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                splitter.finish()
            } else {
                splitter.append(data)
            }
        }
        try process.run()
        self.process = process
        self.lines = lines
    }

    /// Stops the subprocess.
    func stop() async {
        // SIGKILL: the child may have inherited an ignored SIGTERM from the test runner.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let process = self.process
        await onOwnThread { process.waitUntilExit() }
    }
}

/// Why the Python peer cannot run.
struct PeerUnavailable: Error, CustomStringConvertible {
    var reason: String
    var description: String { "Python interop peer unavailable: \(reason)" }
}

/// Cuts stdout data into JSON lines.
private final class LineSplitter: Sendable {
    private let buffer = Locked<Data>(Data())
    private let continuation: AsyncStream<PeerLine>.Continuation

    init(_ continuation: AsyncStream<PeerLine>.Continuation) { self.continuation = continuation }

    func append(_ data: Data) {
        let complete = buffer.withLock { buffer -> [Data] in
            buffer.append(data)
            var lines: [Data] = []
            while let newline = buffer.firstIndex(of: 0x0A) {
                lines.append(buffer[buffer.startIndex..<newline])
                buffer = Data(buffer[(newline + 1)...])
            }
            return lines
        }
        for line in complete {
            if let decoded = try? JSONDecoder().decode(PeerLine.self, from: line) { continuation.yield(decoded) }
        }
    }

    func finish() { continuation.finish() }
}
