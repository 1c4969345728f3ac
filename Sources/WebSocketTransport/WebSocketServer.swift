#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// A WebSocket server on its own event loop thread.
///
/// ```swift
/// let server = try await WebSocketServer.start()          // 127.0.0.1, a free port
/// for await connection in server.connections {
///     Task { for await message in connection.messages { try await connection.send(message) } }
/// }
/// await server.shutdown()
/// ```
///
/// Any request path is accepted for an upgrade. A request with `Upgrade: websocket` that is not a
/// valid upgrade gets an HTTP error (426 for an unsupported version, 400 for other errors) and is
/// closed; a head over ``WebSocketConfiguration/maxHandshakeBytes`` gets 431.
///
/// A request without `Upgrade: websocket` goes to the server's ``HTTPResponder`` (an
/// ``HTTPRouter``) when it has one: HTTP/1.1 with keep-alive, pipelining and `Content-Length`
/// bodies (see ``HTTPRequestParser`` for what it refuses). Without one it gets 426.
public final class WebSocketServer: Sendable {
    /// The address the server listens on.
    public let host: String
    /// The bound TCP port (the chosen one when started with port 0).
    public let port: Int
    /// Whether connections are TLS (`wss://`).
    public let isSecure: Bool
    /// Upgraded connections, in accept order. Finishes after ``shutdown()``. One consumer.
    public let connections: AsyncStream<WebSocketConnection>

    let loop: EventLoop
    private let listener: Listener

    private init(host: String, port: Int, isSecure: Bool, loop: EventLoop, listener: Listener,
                 connections: AsyncStream<WebSocketConnection>) {
        self.host = host
        self.port = port
        self.isSecure = isSecure
        self.loop = loop
        self.listener = listener
        self.connections = connections
    }

    /// Binds, listens and starts the event loop.
    ///
    /// - Parameters:
    ///   - host: a numeric address or host name; loopback by default (`::1` for IPv6).
    ///   - port: the TCP port, 0 for any free port (see ``port``).
    ///   - configuration: limits applied to every connection.
    ///   - tls: when given, every connection starts with a TLS handshake with this certificate
    ///     (`wss://`); the fault hooks apply to the plaintext inside TLS.
    ///   - http: answers the plain HTTP requests (not upgrades); `nil` answers them 426.
    /// - Returns: the running server.
    /// - Throws: ``WebSocketError`` when the address cannot be resolved or bound,
    ///   ``WebSocketError/tlsFailed`` when the certificate or key cannot be used,
    ///   ``WebSocketError/tlsUnavailable`` for `tls` on a platform without OpenSSL.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, configuration: WebSocketConfiguration = .init(),
        tls: WebSocketTLSServerConfiguration? = nil, http: (any HTTPResponder)? = nil
    ) async throws -> WebSocketServer {
        let tlsContext = try tls.map { configuration throws(WebSocketError) in try TLSContext.server(configuration) }
        let (fd, boundPort) = try Socket.listen(host: host, port: port)
        let loop: EventLoop
        do {
            loop = try EventLoop(kind: configuration.poller, name: "WebSocketServer:\(boundPort)")
        } catch {
            Socket.closeDescriptor(fd)
            throw error
        }
        let (stream, continuation) = AsyncStream<WebSocketConnection>.makeStream()
        let listener = Listener(fd: fd, loop: loop, configuration: configuration, tls: tlsContext, responder: http,
                                connections: continuation)
        do {
            try listener.register()
        } catch {
            Socket.closeDescriptor(fd)
            await loop.stop()
            throw error
        }
        return WebSocketServer(host: host, port: boundPort, isSecure: tlsContext != nil, loop: loop, listener: listener,
                               connections: stream)
    }

    /// Runs `body` with a started server and shuts the server down afterwards, also when
    /// `body` throws.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `start` or `body` throws.
    public static func withServer<Result: Sendable>(
        host: String = "127.0.0.1", port: Int = 0, configuration: WebSocketConfiguration = .init(),
        tls: WebSocketTLSServerConfiguration? = nil, http: (any HTTPResponder)? = nil,
        _ body: (WebSocketServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(host: host, port: port, configuration: configuration, tls: tls, http: http)
        return try await withCleanup { try await body(server) } cleanup: { await server.shutdown() }
    }

    /// Stops listening, ends every connection (a best-effort close frame 1001 "server shutting
    /// down", then the socket is closed), finishes ``connections`` and waits until the event
    /// loop thread has released all its descriptors.
    public func shutdown() async {
        await loop.stop()
        listener.finishStream()
    }

    /// Whether the event loop thread has finished (after ``shutdown()``).
    public var isShutDown: Bool { loop.isTerminated }
}

/// Accepts TCP connections and hands each to a ``ServerHandshakeHandler``.
private final class Listener: EventLoopHandler {
    private struct State: Sendable {
        var fd: Int32
        var registration: RegistrationID?
    }

    let loop: EventLoop
    let configuration: WebSocketConfiguration
    let tls: TLSContext?
    let responder: (any HTTPResponder)?
    let connections: AsyncStream<WebSocketConnection>.Continuation
    private let state: Locked<State>

    init(fd: Int32, loop: EventLoop, configuration: WebSocketConfiguration, tls: TLSContext?, responder: (any HTTPResponder)?,
         connections: AsyncStream<WebSocketConnection>.Continuation) {
        self.loop = loop
        self.configuration = configuration
        self.tls = tls
        self.responder = responder
        self.connections = connections
        self.state = Locked(State(fd: fd))
    }

    func register() throws(WebSocketError) {
        let fd = state.withLock { $0.fd }
        let id = try loop.register(fd: fd, interest: .read, handler: self)
        state.withLock { $0.registration = id }
    }

    func finishStream() { connections.finish() }

    func handleIO(_ readiness: IOReadiness, scratch: UnsafeMutableRawBufferPointer) {
        guard let (fd, registration) = state.withLock({ state in state.registration.map { (state.fd, $0) } }) else { return }
        for _ in 0..<128 {
            switch Socket.accept(fd) {
            case .success(.none):
                return
            case .success(.some(let accepted)):
                ServerHandshakeHandler.start(
                    fd: accepted.fd, remoteHost: accepted.host, remotePort: accepted.port,
                    loop: loop, configuration: configuration, tls: tls, responder: responder,
                    connections: connections)
            case .failure(let error):
                if error.code == EMFILE || error.code == ENFILE || error.code == ENOBUFS || error.code == ENOMEM {
                    // Out of descriptors: stop accepting for a moment instead of spinning.
                    loop.setInterest(registration, [])
                    loop.schedule(after: .milliseconds(100)) { [loop] in loop.setInterest(registration, .read) }
                }
                return
            }
        }
    }

    func handleLoopStop() {
        state.withLock { state in
            guard let registration = state.registration else { return }
            loop.deregister(registration)
            Socket.closeDescriptor(state.fd)
            state.registration = nil
            state.fd = -1
        }
    }
}

