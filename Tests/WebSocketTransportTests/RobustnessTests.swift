#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Simulation
import Testing
@testable import WebSocketTransport

/// A seedable generator so that a failing input can be reproduced.
struct RobustnessTests {
    @Test func theParserSurvivesRandomAndMutatedInput() {
        var random = SeededRandom(seed: 6455)
        let valid = maskedFrame(.text, Array("hello €".utf8), fin: false) + maskedFrame(.ping, [1])
            + maskedFrame(.continuation, Array("world".utf8)) + maskedFrame(.binary, pattern(300))
            + maskedFrame(.close, [0x03, 0xE8, 0x6F, 0x6B])
        for round in 0..<3000 {
            var input: [UInt8]
            if round % 2 == 0 {
                input = (0..<Int.random(in: 0..<400, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            } else {
                input = valid
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    input[Int.random(in: 0..<input.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            for role in [WebSocketInboundParser.Role.server, .client] {
                var parser = WebSocketInboundParser(role: role, maxMessageSize: 1 << 16)
                var events: [WebSocketInboundEvent] = []
                var start = 0
                while start < input.count {
                    let end = min(input.count, start + Int.random(in: 1...64, using: &random))
                    events += parser.parse(Array(input[start..<end]))
                    start = end
                }
                // After a close or a violation nothing else may follow.
                if let stop = events.firstIndex(where: {
                    if case .close = $0 { return true }
                    if case .protocolViolation = $0 { return true }
                    return false
                }) {
                    #expect(stop == events.count - 1, "round \(round)")
                }
            }
        }
    }

    @Test func theHandshakeParserSurvivesRandomInput() {
        var random = SeededRandom(seed: 1337)
        let valid = Array(("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
        for _ in 0..<2000 {
            var input = valid
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                input[Int.random(in: 0..<input.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            var server = ServerHandshakeParser(maxBytes: 4096)
            _ = server.consume(input)
            var client = ClientHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==", maxBytes: 4096)
            _ = client.consume(input)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func concurrentSendersNeverInterleaveFrames(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let senders = 8
            let perSender = 50
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sender in 0..<senders {
                    group.addTask {
                        for index in 0..<perSender {
                            try await client.send(.text("s\(sender)-\(index)"), fault: .fragmented(into: 3, interleavingPings: true))
                        }
                    }
                }
                try await group.waitForAll()
            }
            var received: [String: [Int]] = [:]
            var iterator = client.messages.makeAsyncIterator()
            for _ in 0..<(senders * perSender) {
                guard case .text(let text)? = await iterator.next() else {
                    Issue.record("connection ended early")
                    return
                }
                let parts = text.dropFirst().split(separator: "-").compactMap { Int($0) }
                received[String(parts[0]), default: []].append(parts[1])
            }
            // Each sender's messages arrive whole and in its order.
            for sender in 0..<senders { #expect(received[String(sender)] == Array(0..<perSender)) }
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func aSilentClientIsDroppedAfterTheHandshakeTimeout(poller: PollerKind) async throws {
        var configuration = WebSocketConfiguration()
        configuration.handshakeTimeout = .milliseconds(200)
        try await withEchoServer(poller: poller, configuration: configuration) { server in
            let port = server.server.port
            let received = try await onOwnThread {
                let raw = try RawTCPClient(port: port)
                defer { raw.close() }
                return raw.readAll()  // returns at EOF (the server closed), or after 10 s
            }
            #expect(received.isEmpty)
            #expect(server.server.loop.registrationCount == 1)  // only the listener is left
        }
    }

    @Test(arguments: PollerKind.allCases)
    func theClientTimesOutOnAServerThatNeverAnswers(poller: PollerKind) async throws {
        // A listening socket that nobody accepts from: TCP connects, the upgrade gets no answer.
        let (fd, port) = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.closeDescriptor(fd) }
        var configuration = WebSocketConfiguration().with(poller)
        configuration.handshakeTimeout = .milliseconds(200)
        await #expect(throws: WebSocketError.handshakeTimedOut) {
            try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", configuration: configuration)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func theClientRejectsAServerThatDoesNotUpgrade(poller: PollerKind) async throws {
        let (fd, port) = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.closeDescriptor(fd) }
        // Answer the first connection with a plain HTTP 200 (blocking I/O off the test's task).
        let responder = Thread {
            var pollDescriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pollDescriptor, 1, 10_000) == 1, case .success(let accepted?) = Socket.accept(fd) else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var request: [UInt8] = []
            while WebSocketHandshake.endOfHead(in: request, searchingFrom: 0) == nil {
                var readable = pollfd(fd: accepted.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&readable, 1, 10_000) == 1 else { break }
                let count = buffer.withUnsafeMutableBytes { Socket.receive(accepted.fd, $0) }
                if count <= 0 { break }
                request += buffer[..<count]
            }
            let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
            _ = response.withUnsafeBytes { Socket.send(accepted.fd, $0) }
            Socket.closeDescriptor(accepted.fd)
        }
        responder.start()
        await #expect(throws: WebSocketError.handshakeFailed) {
            try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", configuration: WebSocketConfiguration().with(poller))
        }
    }

    @Test(arguments: PollerKind.allCases)
    func cancellingAConnectAttemptEndsIt(poller: PollerKind) async throws {
        let (fd, port) = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.closeDescriptor(fd) }
        let attempt = Task { try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", configuration: WebSocketConfiguration().with(poller)) }
        attempt.cancel()
        await #expect(throws: CancellationError.self) { try await attempt.value }
    }

    /// A refused connect fails its continuation while the caller's cancellation handler may be
    /// running: the connector resumes only after releasing its lock, so the two never deadlock.
    @Test(arguments: PollerKind.allCases)
    func cancellationRacingARefusedConnectNeverHangs(poller: PollerKind) async throws {
        let (fd, port) = try boundButNotListening()  // every connect is refused
        defer { Socket.closeDescriptor(fd) }
        try await withDeadline(60, "300 cancelled connect attempts") {
            for round in 0..<300 {
                let attempt = Task {
                    try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", configuration: WebSocketConfiguration().with(poller))
                }
                if round % 3 != 0 { await Task.yield() }
                attempt.cancel()
                _ = try? await attempt.value
            }
        }
    }

    @Test(arguments: PollerKind.allCases)
    func cancellingAWaitingConsumerEndsItsIteration(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let consumer = Task { await drain(client) }
            consumer.cancel()
            #expect(await consumer.value.isEmpty)
            // The connection itself is unaffected.
            try await client.send(text: "after cancel")
            #expect(try await nextMessage(client) == .text("after cancel"))
            await client.close()
        }
    }
}
