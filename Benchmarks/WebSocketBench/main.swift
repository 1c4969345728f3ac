// Echo benchmark: the same load generator (this program's WebSocket client) drives our
// server and the Python `websockets` server, each in its own process, and prints messages per
// second for both and their ratio (median of several runs). See Benchmarks/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import WebSocketTransport

struct Options {
    var clients = 50
    var runs = 5
    var seconds = 3.0
    var python: String?

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--clients": clients = iterator.next().flatMap { Int($0) } ?? clients
            case "--runs": runs = iterator.next().flatMap { Int($0) } ?? runs
            case "--seconds": seconds = iterator.next().flatMap { Double($0) } ?? seconds
            case "--python": python = iterator.next()
            default: break
            }
        }
    }
}

/// Runs our echo server until killed; prints `{"port": N}` first.
func serveEcho() async throws -> Never {
    let server = try await WebSocketServer.start(configuration: WebSocketConfiguration(maxMessageSize: 64 << 20))
    // Unbuffered: the parent waits for this line.
    FileHandle.standardOutput.write(Data("{\"port\": \(server.port)}\n".utf8))
    await withDiscardingTaskGroup { group in
        for await connection in server.connections {
            group.addTask {
                for await message in connection.messages { try? await connection.send(message) }
            }
        }
    }
    exit(0)
}

/// A server in a child process; its first stdout line is `{"port": N}`.
final class ChildServer: Sendable {
    let process: Process
    let port: Int

    init(executable: String, arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        struct PortLine: Decodable { var port: Int }
        guard let port = try? JSONDecoder().decode(PortLine.self, from: line).port else {
            process.terminate()
            throw BenchError(message: "\(executable) did not print its port: \(String(decoding: line, as: UTF8.self))")
        }
        self.process = process
        self.port = port
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

struct BenchError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// `clients` connections each send a message and wait for its echo, repeatedly, for `seconds`.
/// Returns echoed messages per second.
func measure(port: Int, clients: Int, payload: WebSocketMessage, seconds: Double) async throws -> Double {
    let connections = try await withThrowingTaskGroup(of: WebSocketConnection.self) { group in
        for _ in 0..<clients { group.addTask { try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/bench") } }
        var connections: [WebSocketConnection] = []
        for try await connection in group { connections.append(connection) }
        return connections
    }
    // Warm-up round trip on every connection.
    for connection in connections {
        try await connection.send(payload)
        var iterator = connection.messages.makeAsyncIterator()
        _ = await iterator.next()
    }
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
    let start = clock.now
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for connection in connections {
            group.addTask {
                var count = 0
                var iterator = connection.messages.makeAsyncIterator()
                while clock.now < deadline {
                    try await connection.send(payload)
                    guard await iterator.next() != nil else { break }
                    count += 1
                }
                return count
            }
        }
        var total = 0
        for try await count in group { total += count }
        return total
    }
    let elapsed = clock.now - start
    let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    await withTaskGroup(of: Void.self) { group in
        for connection in connections { group.addTask { await connection.close() } }
    }
    return Double(total) / elapsedSeconds
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func findPython(_ explicit: String?) -> String? {
    if let explicit { return explicit }
    if let fromEnvironment = ProcessInfo.processInfo.environment["OPENCLAW_PYTHON"] { return fromEnvironment }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let venv = root.appendingPathComponent(".venv/bin/python3").path
    return FileManager.default.isExecutableFile(atPath: venv) ? venv : nil
}

func runBenchmark(_ options: Options) async throws {
    guard let python = findPython(options.python) else {
        throw BenchError(message: "no Python with websockets: create .venv (see Benchmarks/README.md) or pass --python")
    }
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("python_echo_server.py").path
    let ours = try ChildServer(executable: CommandLine.arguments[0], arguments: ["serve"])
    defer { ours.stop() }
    let theirs = try ChildServer(executable: python, arguments: ["-u", script])
    defer { theirs.stop() }

    print("Echo benchmark: \(options.clients) clients, closed loop (send, await echo), \(options.seconds) s per run, \(options.runs) runs, median")
    print("Load generator: WebSocketTransport client (same for both servers); each server in its own process")
    let cases: [(String, WebSocketMessage)] = [
        ("32 B text", .text(String(repeating: "x", count: 32))),
        ("64 KiB binary", .binary([UInt8](repeating: 0xAB, count: 64 * 1024))),
    ]
    print("")
    print("case            | WebSocketTransport msg/s | Python websockets msg/s | ratio")
    print("----------------|--------------------------|-------------------------|------")
    for (name, payload) in cases {
        var ourRates: [Double] = []
        var theirRates: [Double] = []
        for _ in 0..<options.runs {
            // Alternate so that drift on a shared machine affects both alike.
            ourRates.append(try await measure(port: ours.port, clients: options.clients, payload: payload, seconds: options.seconds))
            theirRates.append(try await measure(port: theirs.port, clients: options.clients, payload: payload, seconds: options.seconds))
        }
        let ourMedian = median(ourRates)
        let theirMedian = median(theirRates)
        let ratio = theirMedian > 0 ? ourMedian / theirMedian : 0
        print(name.padding(toLength: 16, withPad: " ", startingAt: 0)
              + "| " + String(format: "%24.0f", ourMedian) + " | " + String(format: "%23.0f", theirMedian)
              + " | " + String(format: "%.2fx", ratio))
        print("  runs: ours " + ourRates.map { String(format: "%.0f", $0) }.joined(separator: ", ")
              + "; python " + theirRates.map { String(format: "%.0f", $0) }.joined(separator: ", "))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "serve" {
    try await serveEcho()
} else {
    do {
        try await runBenchmark(Options(arguments))
    } catch {
        FileHandle.standardError.write(Data("WebSocketBench: \(error)\n".utf8))
        exit(1)
    }
}
