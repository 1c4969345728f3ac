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
/// Any request path is accepted. A request that is not a valid WebSocket upgrade gets an
/// HTTP error (426 without `Upgrade: websocket` or with an unsupported version, 400 for other
/// errors, 431 for a head over ``WebSocketConfiguration/maxHandshakeBytes``) and is closed.
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
    /// - Returns: the running server.
    /// - Throws: ``WebSocketError`` when the address cannot be resolved or bound,
    ///   ``WebSocketError/tlsFailed`` when the certificate or key cannot be used,
    ///   ``WebSocketError/tlsUnavailable`` for `tls` on a platform without OpenSSL.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, configuration: WebSocketConfiguration = .init(),
        tls: WebSocketTLSServerConfiguration? = nil
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
        let listener = Listener(fd: fd, loop: loop, configuration: configuration, tls: tlsContext, connections: continuation)
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
        tls: WebSocketTLSServerConfiguration? = nil,
        _ body: (WebSocketServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(host: host, port: port, configuration: configuration, tls: tls)
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
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
    let connections: AsyncStream<WebSocketConnection>.Continuation
    private let state: Locked<State>

    init(fd: Int32, loop: EventLoop, configuration: WebSocketConfiguration, tls: TLSContext?,
         connections: AsyncStream<WebSocketConnection>.Continuation) {
        self.loop = loop
        self.configuration = configuration
        self.tls = tls
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
                    loop: loop, configuration: configuration, tls: tls, connections: connections)
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

/// Reads and answers the HTTP upgrade request of one accepted socket (after the TLS handshake
/// of a `wss://` server), then hands the socket to a ``WebSocketConnection`` (or answers with
/// an HTTP error and closes).
final class ServerHandshakeHandler: EventLoopHandler {
    private struct State: Sendable {
        var fd: Int32
        var registration: RegistrationID?
        var parser: ServerHandshakeParser
        /// Bytes to write: plaintext, or ciphertext over TLS.
        var pending = OutboundQueue()
        var tls: TLSSession?
        var rejecting = false
        var timer: TimerID?
    }

    private let loop: EventLoop
    private let configuration: WebSocketConfiguration
    private let connections: AsyncStream<WebSocketConnection>.Continuation
    private let remoteHost: String
    private let remotePort: Int
    private let state: Locked<State>

    private init(fd: Int32, remoteHost: String, remotePort: Int, loop: EventLoop, configuration: WebSocketConfiguration,
                 tls: TLSSession?, connections: AsyncStream<WebSocketConnection>.Continuation) {
        self.loop = loop
        self.configuration = configuration
        self.connections = connections
        self.remoteHost = remoteHost
        self.remotePort = remotePort
        self.state = Locked(State(fd: fd, parser: ServerHandshakeParser(maxBytes: configuration.maxHandshakeBytes), tls: tls))
    }

    static func start(fd: Int32, remoteHost: String, remotePort: Int, loop: EventLoop, configuration: WebSocketConfiguration,
                      tls: TLSContext?, connections: AsyncStream<WebSocketConnection>.Continuation) {
        var session: TLSSession?
        if let tls {
            guard let created = try? TLSSession(context: tls, serverName: nil) else {
                Socket.closeDescriptor(fd)
                return
            }
            session = created
        }
        let handler = ServerHandshakeHandler(
            fd: fd, remoteHost: remoteHost, remotePort: remotePort, loop: loop,
            configuration: configuration, tls: session, connections: connections)
        handler.state.withLock { state in
            guard let id = try? loop.register(fd: fd, interest: .read, handler: handler) else {
                Socket.closeDescriptor(fd)
                state.fd = -1
                return
            }
            state.registration = id
            state.timer = loop.schedule(after: configuration.handshakeTimeout) { [weak handler] in handler?.close() }
        }
    }

    private enum Outcome {
        case none
        case upgrade(fd: Int32, registration: RegistrationID, request: WebSocketUpgradeRequest, response: [UInt8], leftover: [UInt8],
                     tls: TLSSession?, pendingCiphertext: [UInt8])
    }

    func handleIO(_ readiness: IOReadiness, scratch: UnsafeMutableRawBufferPointer) {
        let outcome = state.withLock { state -> Outcome in
            guard state.fd >= 0, let registration = state.registration else { return .none }
            if readiness.writable { flushPending(&state) }
            guard readiness.readable || readiness.hangup, state.fd >= 0 else { return .none }
            let count = Socket.receive(state.fd, scratch)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                closeLocked(&state)
                return .none
            }
            guard count > 0, !state.rejecting else { return .none }  // a rejected peer's bytes are discarded
            let received = UnsafeRawBufferPointer(rebasing: scratch[..<count])
            let action: ServerHandshakeParser.Action
            if let tls = state.tls {
                guard let plaintext = decrypt(&state, tls, received, scratch: scratch) else { return .none }
                if plaintext.isEmpty { return .none }
                action = plaintext.withUnsafeBytes { state.parser.consume($0) }
            } else {
                action = state.parser.consume(received)
            }
            switch action {
            case .needMoreData:
                return .none
            case .reject(_, let response):
                state.rejecting = true
                queue(&state, response)
                flushPending(&state)
                return .none
            case .accept(let request, let response, let leftover):
                if let timer = state.timer { loop.cancel(timer) }
                let fd = state.fd
                state.fd = -1
                state.registration = nil
                let pending = state.pending.takeAll().flatMap { $0 }
                return .upgrade(fd: fd, registration: registration, request: request, response: response, leftover: leftover,
                                tls: state.tls, pendingCiphertext: pending)
            }
        }
        guard case .upgrade(let fd, let registration, let request, let response, let leftover, let tls, let pending) = outcome else { return }
        let connection = WebSocketConnection(
            fd: fd, registration: registration, loop: loop, isClient: false, configuration: configuration,
            remoteAddress: remoteHost, remotePort: remotePort, requestPath: request.target, requestHeaders: request.headers,
            tls: tls)
        connection.start(initialOutput: response, leftover: leftover, pendingCiphertext: pending)
        connections.yield(connection)
    }

    /// Feeds received ciphertext to TLS: advances the handshake (queueing its replies) and
    /// returns the plaintext that followed it, or `nil` when the connection was closed.
    private func decrypt(_ state: inout State, _ tls: TLSSession, _ bytes: UnsafeRawBufferPointer,
                         scratch: UnsafeMutableRawBufferPointer) -> [UInt8]? {
        tls.feed(bytes)
        var plaintext: [UInt8] = []
        var ended = false
        if !tls.isHandshakeComplete {
            switch tls.handshake() {
            case .done, .needsInput: break
            case .closed, .failed: ended = true
            }
        }
        reading: while !ended, tls.isHandshakeComplete {
            switch tls.read(into: scratch) {
            case .done(let count) where count > 0: plaintext.append(contentsOf: scratch[..<count])
            case .done, .needsInput: break reading
            case .closed, .failed: ended = true
            }
        }
        state.pending.append(tls.takeCiphertext(), separateWrite: false)
        flushPending(&state)
        if ended {
            closeLocked(&state)
            return nil
        }
        return plaintext
    }

    /// Queues an HTTP response (encrypted over TLS).
    private func queue(_ state: inout State, _ bytes: [UInt8]) {
        guard let tls = state.tls else {
            state.pending.append(bytes, separateWrite: false)
            return
        }
        _ = bytes.withUnsafeBytes { tls.write($0) }
        tls.shutdown()
        state.pending.append(tls.takeCiphertext(), separateWrite: false)
    }

    /// Writes what is pending. Once an HTTP error response is written, half-closes and waits
    /// for the peer's EOF (closing with unread input would reset the connection and could lose
    /// the response).
    private func flushPending(_ state: inout State) {
        guard state.fd >= 0, let registration = state.registration else { return }
        switch state.pending.write(to: state.fd) {
        case .drained:
            if state.rejecting { Socket.shutdownWrite(state.fd) }
            loop.setInterest(registration, .read)
        case .wouldBlock:
            loop.setInterest(registration, [.read, .write])
        case .failed:
            closeLocked(&state)
        }
    }

    private func close() {
        state.withLock { closeLocked(&$0) }
    }

    private func closeLocked(_ state: inout State) {
        guard state.fd >= 0 else { return }
        if let registration = state.registration { loop.deregister(registration) }
        if let timer = state.timer { loop.cancel(timer) }
        Socket.closeDescriptor(state.fd)
        state.fd = -1
        state.registration = nil
    }

    func handleLoopStop() { close() }
}
