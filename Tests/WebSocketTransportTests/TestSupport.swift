#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Locking
import Testing
@testable import WebSocketTransport

/// A test ran past its deadline (something it waited for never happened).
struct DeadlineExceeded: Error, CustomStringConvertible {
    var what: String
    var description: String { "deadline exceeded: \(what)" }
}

/// Shared by the racing tasks of ``withDeadline(_:_:_:)``: whoever takes the continuation first
/// resumes it.
private final class DeadlineRace<T: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<T, any Error>?>
    let timer = Locked<Task<Void, Never>?>(nil)

    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = Locked(continuation) }

    func take() -> CheckedContinuation<T, any Error>? {
        continuation.withLock { state in
            defer { state = nil }
            return state
        }
    }
}

/// Runs `body` and fails with ``DeadlineExceeded`` if it takes longer than `seconds`. The
/// deadline only bounds a hang; nothing is timed.
func withDeadline<T: Sendable>(
    _ seconds: Double = 30, _ what: String = "operation", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let race = DeadlineRace(continuation)
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            if let continuation = race.take() {
                continuation.resume(with: result)
                race.timer.withLock { $0?.cancel() }
            }
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            guard !Task.isCancelled, let continuation = race.take() else { return }
            continuation.resume(throwing: DeadlineExceeded(what: what))
            work.cancel()
        }
        race.timer.withLock { $0 = timer }
    }
}

/// The next message, failing the test when the connection ends first.
func nextMessage(_ connection: WebSocketConnection, _ what: String = "message") async throws -> WebSocketMessage {
    var iterator = connection.messages.makeAsyncIterator()
    guard let message = await iterator.next() else {
        throw DeadlineExceeded(what: "\(what): connection ended (\(connection.closeInfo?.description ?? "open"))")
    }
    return message
}

/// Reads messages until the connection ends; returns them.
func drain(_ connection: WebSocketConnection) async -> [WebSocketMessage] {
    var messages: [WebSocketMessage] = []
    for await message in connection.messages { messages.append(message) }
    return messages
}

/// A server whose every connection echoes each message back; `onConnection` runs first.
final class EchoServer: Sendable {
    let server: WebSocketServer
    let accepted: AsyncStream<WebSocketConnection>
    private let acceptedContinuation: AsyncStream<WebSocketConnection>.Continuation
    private let task: Locked<Task<Void, Never>?> = Locked(nil)

    init(configuration: WebSocketConfiguration = .init(), host: String = "127.0.0.1", tls: WebSocketTLSServerConfiguration? = nil,
         onConnection: @escaping @Sendable (WebSocketConnection) async -> Void = { _ in }) async throws {
        poller = configuration.poller
        server = try await WebSocketServer.start(host: host, configuration: configuration, tls: tls)
        (accepted, acceptedContinuation) = AsyncStream<WebSocketConnection>.makeStream()
        let server = self.server
        let continuation = acceptedContinuation
        let task = Task {
            await withDiscardingTaskGroup { group in
                for await connection in server.connections {
                    continuation.yield(connection)
                    group.addTask {
                        await onConnection(connection)
                        for await message in connection.messages {
                            try? await connection.send(message)
                        }
                    }
                }
            }
            continuation.finish()
        }
        self.task.withLock { $0 = task }
    }

    var url: String { "\(server.isSecure ? "wss" : "ws")://127.0.0.1:\(server.port)/echo" }

    /// The server's multiplexer; ``connect(_:headers:configuration:)`` gives clients the same.
    let poller: PollerKind

    /// A client connection to this server (``url`` unless given) on the server's multiplexer.
    func connect(_ url: String? = nil, headers: WebSocketHTTPHeaders = [:],
                 configuration: WebSocketConfiguration = .init()) async throws -> WebSocketConnection {
        try await WebSocketClient.connect(to: url ?? self.url, headers: headers, configuration: configuration.with(poller))
    }

    /// The next accepted server-side connection.
    func nextAccepted() async throws -> WebSocketConnection {
        var iterator = accepted.makeAsyncIterator()
        guard let connection = await iterator.next() else { throw DeadlineExceeded(what: "accepted connection") }
        return connection
    }

    func shutdown() async {
        await server.shutdown()
        let task = self.task.withLock { $0 }
        await task?.value
    }
}

/// Runs `body` with an echo server on `poller` and shuts it down afterwards.
func withEchoServer<T: Sendable>(
    poller: PollerKind = .platformDefault, configuration: WebSocketConfiguration = .init(), deadline: Double = 60,
    tls: WebSocketTLSServerConfiguration? = nil,
    onConnection: @escaping @Sendable (WebSocketConnection) async -> Void = { _ in },
    _ body: @escaping @Sendable (EchoServer) async throws -> T
) async throws -> T {
    let server = try await EchoServer(configuration: configuration.with(poller), tls: tls, onConnection: onConnection)
    do {
        let result = try await withDeadline(deadline, "echo server test") { try await body(server) }
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

extension WebSocketConfiguration {
    /// A copy that uses `poller`. The transport tests run with every multiplexer of the
    /// platform (`PollerKind.allCases`): on Linux `epoll` and `poll`, the latter being the only
    /// one on Apple platforms, so that its code path runs here too.
    func with(_ poller: PollerKind) -> WebSocketConfiguration {
        var copy = self
        copy.poller = poller
        return copy
    }
}

/// A blocking TCP client for byte-level tests (no WebSocket logic at all). Blocking calls
/// have a receive timeout so that a missing answer fails instead of hanging.
final class RawTCPClient: Sendable {
    let fd: Int32

    init(port: Int, host: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Socket.streamType, 0)
        guard fd >= 0 else { throw WebSocketError.socketFailed }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            _ = systemClose(fd)
            throw WebSocketError.connectionFailed
        }
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Socket.send(fd, $0) }
            if written <= 0 { return }
            offset += written
        }
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    /// Reads until EOF, an error, the timeout, or `limit` bytes.
    func readAll(limit: Int = 1 << 20) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while result.count < limit {
            let count = buffer.withUnsafeMutableBytes { Socket.receive(fd, $0) }
            if count <= 0 { break }
            result.append(contentsOf: buffer[..<count])
        }
        return result
    }

    /// Reads until `terminator` appears (or EOF / timeout).
    func read(until terminator: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var byte: UInt8 = 0
        while withUnsafeMutableBytes(of: &byte, { Socket.receive(fd, $0) }) == 1 {
            result.append(byte)
            if result.count >= terminator.count, Array(result.suffix(terminator.count)) == terminator { break }
        }
        return result
    }

    /// Performs a valid client handshake and returns whatever else arrived with the response.
    func upgrade(path: String = "/") -> String {
        write("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        return String(decoding: read(until: Array("\r\n\r\n".utf8)), as: UTF8.self)
    }

    func closeAbruptly() {
        Socket.setLingerZero(fd)
        _ = systemClose(fd)
    }

    func close() { _ = systemClose(fd) }
}

/// Runs blocking work (raw sockets, waiting for a process) on a thread of its own. A blocked
/// cooperative-pool thread (there are as many as cores: two on the development machine) stalls
/// every other test's tasks meanwhile, the servers the work waits for included: two blocking
/// raw reads at once used to hold up the whole test process for their 10 s receive timeout.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// ``onOwnThread(_:)`` for work that cannot throw.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

/// A TCP socket bound to a free loopback port without `listen()`, and that port. Connects to it
/// are refused, and no other test's server can take the port while the socket is open (a port that
/// was merely freed can be handed to a server another test starts in parallel).
func boundButNotListening() throws -> (fd: Int32, port: Int) {
    let address = try #require(try Socket.resolve(host: "127.0.0.1", port: 0, passive: true).first)
    let fd = try Socket.makeStreamSocket(family: address.family)
    var storage = address.storage
    let bound = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
    }
    guard bound == 0, let port = Socket.localPort(fd) else {
        _ = systemClose(fd)
        throw WebSocketError.socketFailed
    }
    return (fd, port)
}

/// `close(2)` under a name that does not clash with the `close()` methods of test types.
#if canImport(Glibc)
func systemClose(_ fd: Int32) -> Int32 { Glibc.close(fd) }
#else
func systemClose(_ fd: Int32) -> Int32 { Darwin.close(fd) }
#endif

/// A masked client frame (as a client must send it).
func maskedFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, reservedBits: UInt8 = 0) -> [UInt8] {
    WebSocketFrame(fin: fin, reservedBits: reservedBits, opcode: opcode, payload: payload).encoded(maskingKey: [0x11, 0x22, 0x33, 0x44])
}

/// A deterministic byte pattern.
func pattern(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
    // Byte i is (31 i + seed) mod 256, so the bytes repeat every 256: one cycle is computed and
    // copied. A per-byte closure took seconds for the megabytes some tests send in a debug build,
    // on a thread of the cooperative pool that every other test was waiting for.
    let cycle = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    return [UInt8](unsafeUninitializedCapacity: max(0, count)) { buffer, initialized in
        var offset = 0
        cycle.withUnsafeBufferPointer { source in
            while offset < buffer.count {
                let length = min(source.count, buffer.count - offset)
                _ = UnsafeMutableBufferPointer(rebasing: buffer[offset..<(offset + length)]).initialize(from: source[..<length])
                offset += length
            }
        }
        initialized = buffer.count
    }
}
