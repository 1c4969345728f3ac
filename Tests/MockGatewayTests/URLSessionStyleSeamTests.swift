import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MockGateway
import Testing
import WebSocketTransport

// docs/in-process-clients.md quotes this file: a client whose WebSocket seam has the shape of
// OpenClawKit's `WebSocketTasking` / `WebSocketSessioning` (read for its shape from
// apps/shared/OpenClawKit/Sources/OpenClawKit/GatewayWebSocketTransport.swift@89f6946) runs over
// this project's transport instead of URLSession. The protocols are declared here only so the
// adapter compiles; in an app they are the app's own.

/// The seam's shape: one WebSocket task.
protocol SeamWebSocketTasking: AnyObject {
    var state: URLSessionTask.State { get }
    func resume()
    func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
    func send(_ message: URLSessionWebSocketTask.Message) async throws
    func sendPing(pongReceiveHandler: @escaping @Sendable (Error?) -> Void)
    func receive() async throws -> URLSessionWebSocketTask.Message
}

/// The seam's shape: makes tasks.
protocol SeamWebSocketSessioning: AnyObject {
    func makeWebSocketTask(url: URL) -> any SeamWebSocketTasking
}

/// A WebSocket task on this project's RFC 6455 client. `resume()` starts the opening handshake;
/// `send` and `receive` wait for it.
final class TransportWebSocketTask: SeamWebSocketTasking, @unchecked Sendable {
    // Safe to share: `opening` and `closed` are only read or written while `lock` is held, and
    // `url`/`connector` are immutable.
    private let lock = NSLock()
    private let url: URL
    private let connector: any WebSocketConnector
    private var opening: Task<WebSocketConnection, any Error>?
    private var closed = false

    init(url: URL, connector: any WebSocketConnector) {
        self.url = url
        self.connector = connector
    }

    var state: URLSessionTask.State {
        lock.withLock { closed ? .completed : (opening == nil ? .suspended : .running) }
    }

    func resume() {
        lock.withLock {
            guard opening == nil, !closed else { return }
            let url = url.absoluteString
            let connector = connector
            opening = Task { try await connector.connect(to: url) }
        }
    }

    private func connection() async throws -> WebSocketConnection {
        guard let opening = lock.withLock({ opening }) else { throw URLError(.badServerResponse) }
        return try await opening.value
    }

    func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        let opening = lock.withLock { () -> Task<WebSocketConnection, any Error>? in
            closed = true
            return self.opening
        }
        let code = WebSocketCloseCode(UInt16(clamping: closeCode.rawValue == 0 ? 1000 : closeCode.rawValue))
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        Task { _ = await (try? opening?.value)?.close(code: code, reason: text) }
    }

    func send(_ message: URLSessionWebSocketTask.Message) async throws {
        let connection = try await connection()
        switch message {
        case .string(let text): try await connection.send(text: text)
        case .data(let data): try await connection.send(binary: [UInt8](data))
        @unknown default: throw URLError(.unsupportedURL)
        }
    }

    func sendPing(pongReceiveHandler: @escaping @Sendable (Error?) -> Void) {
        Task {
            do {
                try await connection().ping()
                pongReceiveHandler(nil)
            } catch {
                pongReceiveHandler(error)
            }
        }
    }

    func receive() async throws -> URLSessionWebSocketTask.Message {
        var messages = try await connection().messages.makeAsyncIterator()
        switch await messages.next() {
        case .text(let text)?: return .string(text)
        case .binary(let bytes)?: return .data(Data(bytes))
        case nil: throw URLError(.networkConnectionLost)
        }
    }
}

/// Makes ``TransportWebSocketTask``s: what the app is given instead of `URLSession`.
final class TransportWebSocketSession: SeamWebSocketSessioning, Sendable {
    private let connector: any WebSocketConnector

    init(connector: any WebSocketConnector = SocketConnector()) {
        self.connector = connector
    }

    func makeWebSocketTask(url: URL) -> any SeamWebSocketTasking {
        TransportWebSocketTask(url: url, connector: connector)
    }
}

@Suite struct URLSessionStyleSeamTests {
    /// Through the seam: the challenge arrives as a string message, a ping is ponged, a request
    /// is answered (a request before connect is refused and the socket closed, which `receive`
    /// reports), and cancel closes a socket with the code given.
    @Test func aSeamShapedClientTalksToTheGatewayOverTheTransport() async throws {
        try await Gateway.withGateway { gateway in
            let session = TransportWebSocketSession()
            let url = try #require(URL(string: gateway.url))
            let task = session.makeWebSocketTask(url: url)
            #expect(task.state == .suspended)
            task.resume()
            #expect(task.state == .running)

            guard case .string(let challenge) = try await task.receive() else {
                Issue.record("the challenge is not a text message")
                return
            }
            #expect(challenge.contains("\"connect.challenge\""))

            let (pongs, pong) = AsyncStream<Bool>.makeStream()
            task.sendPing { error in
                pong.yield(error == nil)
                pong.finish()
            }
            var iterator = pongs.makeAsyncIterator()
            #expect(await iterator.next() == true)

            try await task.send(.string(#"{"type":"req","id":"1","method":"health","params":{}}"#))
            guard case .string(let reply) = try await task.receive() else {
                Issue.record("the reply is not a text message")
                return
            }
            #expect(reply.contains("\"id\":\"1\"") && reply.contains("\"ok\":false"), "\(reply)")
            await #expect(throws: URLError.self) { _ = try await task.receive() }

            let second = session.makeWebSocketTask(url: url)
            second.resume()
            _ = try await second.receive()
            let before = gateway.events.count
            second.cancel(with: .goingAway, reason: Data("bye".utf8))
            #expect(second.state == .completed)
            let closed = await gateway.events.first(from: before, timeout: .seconds(30)) { event in
                if case .connectionClosed(_, let code, _) = event { code == 1001 } else { false }
            }
            #expect(closed != nil, "the Gateway saw the second socket closed with 1001")
        }
    }
}
