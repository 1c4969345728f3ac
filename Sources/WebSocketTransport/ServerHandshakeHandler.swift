#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Serves one accepted socket (after the TLS handshake of a `wss://` server) until it becomes a
/// WebSocket: reads HTTP requests, hands an upgrade request to a ``WebSocketConnection``, and,
/// when the server has an ``HTTPResponder``, answers plain requests with it (keep-alive,
/// pipelined requests one at a time in order, a request may wait as long as its handler does).
/// Without a responder every plain request gets 426. A bad request gets its error status and
/// the connection closes.
final class ServerHandshakeHandler: EventLoopHandler {
    private struct State: Sendable {
        var fd: Int32
        var registration: RegistrationID?
        /// Upgrade-only servers: the opening handshake parser.
        var handshake: ServerHandshakeParser
        /// Servers with a responder: the HTTP request parser.
        var http: HTTPRequestParser
        /// Bytes to write: plaintext, or ciphertext over TLS.
        var pending = OutboundQueue()
        var tls: TLSSession?
        /// After the last response: the write side closes once `pending` is written.
        var rejecting = false
        /// The idle (or handshake) timer.
        var timer: TimerID?
        /// The handler task of the request being answered.
        var inFlight: Task<Void, Never>?
        /// Whether reading paused because too much arrived while a request was answered.
        var readPaused = false
    }

    private let loop: EventLoop
    private let configuration: WebSocketConfiguration
    private let connections: AsyncStream<WebSocketConnection>.Continuation
    private let responder: (any HTTPResponder)?
    private let remoteHost: String
    private let remotePort: Int
    private let state: Locked<State>

    private init(fd: Int32, remoteHost: String, remotePort: Int, loop: EventLoop, configuration: WebSocketConfiguration,
                 tls: TLSSession?, responder: (any HTTPResponder)?, connections: AsyncStream<WebSocketConnection>.Continuation) {
        self.loop = loop
        self.configuration = configuration
        self.connections = connections
        self.responder = responder
        self.remoteHost = remoteHost
        self.remotePort = remotePort
        let limits = HTTPLimits(maxHeadBytes: configuration.maxHandshakeBytes, maxBodyBytes: configuration.maxHTTPBodyBytes)
        self.state = Locked(State(fd: fd, handshake: ServerHandshakeParser(maxBytes: configuration.maxHandshakeBytes),
                                  http: HTTPRequestParser(limits: limits), tls: tls))
    }

    static func start(fd: Int32, remoteHost: String, remotePort: Int, loop: EventLoop, configuration: WebSocketConfiguration,
                      tls: TLSContext?, responder: (any HTTPResponder)?, connections: AsyncStream<WebSocketConnection>.Continuation) {
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
            configuration: configuration, tls: session, responder: responder, connections: connections)
        handler.state.withLock { state in
            guard let id = try? loop.register(fd: fd, interest: .read, handler: handler) else {
                Socket.closeDescriptor(fd)
                state.fd = -1
                return
            }
            state.registration = id
            handler.armTimer(&state)
        }
    }

    private enum Outcome {
        case none
        case upgrade(fd: Int32, registration: RegistrationID, request: WebSocketUpgradeRequest, response: [UInt8], leftover: [UInt8],
                     tls: TLSSession?, pendingCiphertext: [UInt8])
        case respond(HTTPRequest, keepAlive: Bool, http10: Bool)
    }

    func handleIO(_ readiness: IOReadiness, scratch: UnsafeMutableRawBufferPointer) {
        let outcome = state.withLock { state -> Outcome in
            guard state.fd >= 0, state.registration != nil else { return .none }
            if readiness.writable { flushPending(&state) }
            guard readiness.readable || readiness.hangup, state.fd >= 0, !state.readPaused else { return .none }
            let count = Socket.receive(state.fd, scratch)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                closeLocked(&state)
                return .none
            }
            guard count > 0, !state.rejecting else { return .none }  // a rejected peer's bytes are discarded
            let received = UnsafeRawBufferPointer(rebasing: scratch[..<count])
            var plaintext: [UInt8]?
            if let tls = state.tls {
                guard let decrypted = decrypt(&state, tls, received, scratch: scratch) else { return .none }
                if decrypted.isEmpty { return .none }
                plaintext = decrypted
            }
            guard responder != nil else {
                let action = plaintext.map { bytes in bytes.withUnsafeBytes { state.handshake.consume($0) } }
                    ?? state.handshake.consume(received)
                return decideUpgrade(&state, action)
            }
            if let plaintext { state.http.append(plaintext) } else { state.http.append(received) }
            return advance(&state)
        }
        perform(outcome)
    }

    /// Takes the next step of an HTTP connection that is not answering a request: the next
    /// complete request, an upgrade, or an error response.
    private func advance(_ state: inout State) -> Outcome {
        guard state.inFlight == nil, state.fd >= 0, !state.rejecting else {
            // While a request is answered, its successors wait in the parser, up to the limits.
            if state.http.bufferedCount > configuration.maxHandshakeBytes + configuration.maxHTTPBodyBytes,
               let registration = state.registration {
                state.readPaused = true
                loop.setInterest(registration, [])
            }
            return .none
        }
        switch state.http.next(remoteAddress: remoteHost, remotePort: remotePort, isSecure: state.tls != nil) {
        case .needMoreData:
            return .none
        case .invalid(let status, let message):
            reject(&state, HTTPResponse.text(status, message).serialized(keepAlive: false))
            return .none
        case .upgrade(let head, let leftover):
            return decideUpgrade(&state, ServerHandshakeParser.decide(head: head[...], leftover: leftover))
        case .request(let request, let keepAlive, let http10):
            if let timer = state.timer {
                loop.cancel(timer)
                state.timer = nil
            }
            return .respond(request, keepAlive: keepAlive, http10: http10)
        }
    }

    private func decideUpgrade(_ state: inout State, _ action: ServerHandshakeParser.Action) -> Outcome {
        switch action {
        case .needMoreData:
            return .none
        case .reject(_, let response):
            reject(&state, response)
            return .none
        case .accept(let request, let response, let leftover):
            guard let registration = state.registration else { return .none }
            if let timer = state.timer { loop.cancel(timer) }
            state.timer = nil
            let fd = state.fd
            state.fd = -1
            state.registration = nil
            let pending = state.pending.takeAll().flatMap { $0 }
            return .upgrade(fd: fd, registration: registration, request: request, response: response, leftover: leftover,
                            tls: state.tls, pendingCiphertext: pending)
        }
    }

    private func perform(_ outcome: Outcome) {
        switch outcome {
        case .none:
            return
        case .upgrade(let fd, let registration, let request, let response, let leftover, let tls, let pending):
            let connection = WebSocketConnection(
                fd: fd, registration: registration, loop: loop, isClient: false, configuration: configuration,
                remoteAddress: remoteHost, remotePort: remotePort, requestPath: request.target, requestHeaders: request.headers,
                tls: tls)
            connection.start(initialOutput: response, leftover: leftover, pendingCiphertext: pending)
            connections.yield(connection)
        case .respond(let request, let keepAlive, let http10):
            guard let responder else { return }
            // The handler runs in a task of its own; its response goes back through the loop.
            state.withLock { state in
                state.inFlight = Task { [weak self, loop] in
                    let response = await responder.respond(to: request)
                    _ = loop.execute { [weak self] in
                        self?.deliver(response, keepAlive: keepAlive, http10: http10, head: request.method == "HEAD")
                    }
                }
            }
        }
    }

    /// Writes a handler's response (on the loop thread) and goes on with the next request.
    private func deliver(_ response: HTTPResponse, keepAlive: Bool, http10: Bool, head: Bool) {
        let outcome = state.withLock { state -> Outcome in
            state.inFlight = nil
            guard state.fd >= 0 else { return .none }
            let keep = keepAlive && !response.closesConnection
            let bytes = response.serialized(keepAlive: keep, http10: http10, headRequest: head)
            guard keep else {
                reject(&state, bytes)
                return .none
            }
            queue(&state, bytes, closing: false)
            flushPending(&state)
            if state.readPaused, let registration = state.registration {
                state.readPaused = false
                loop.setInterest(registration, .read)
            }
            armTimer(&state)
            return advance(&state)
        }
        perform(outcome)
    }

    /// Starts the timer that closes a connection that stays idle (no complete request, no
    /// upgrade) for ``WebSocketConfiguration/handshakeTimeout``.
    private func armTimer(_ state: inout State) {
        if let timer = state.timer { loop.cancel(timer) }
        state.timer = loop.schedule(after: configuration.handshakeTimeout) { [weak self] in self?.idleTimeout() }
    }

    private func idleTimeout() {
        state.withLock { state in
            guard state.inFlight == nil else { return }
            closeLocked(&state)
        }
    }

    /// Sends a last response, then closes.
    private func reject(_ state: inout State, _ response: [UInt8]) {
        state.rejecting = true
        queue(&state, response, closing: true)
        flushPending(&state)
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

    /// Queues an HTTP response (encrypted over TLS; a closing one ends TLS after it).
    private func queue(_ state: inout State, _ bytes: [UInt8], closing: Bool) {
        guard let tls = state.tls else {
            state.pending.append(bytes, separateWrite: false)
            return
        }
        _ = bytes.withUnsafeBytes { tls.write($0) }
        if closing { tls.shutdown() }
        state.pending.append(tls.takeCiphertext(), separateWrite: false)
    }

    /// Writes what is pending. Once a closing response is written, half-closes and waits for
    /// the peer's EOF (closing with unread input would reset the connection and could lose the
    /// response).
    private func flushPending(_ state: inout State) {
        guard state.fd >= 0, let registration = state.registration else { return }
        let reading: IOInterest = state.readPaused ? [] : .read
        switch state.pending.write(to: state.fd) {
        case .drained:
            if state.rejecting { Socket.shutdownWrite(state.fd) }
            loop.setInterest(registration, state.rejecting ? .read : reading)
        case .wouldBlock:
            loop.setInterest(registration, reading.union(.write))
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
        state.inFlight?.cancel()
        state.inFlight = nil
        Socket.closeDescriptor(state.fd)
        state.fd = -1
        state.registration = nil
    }

    func handleLoopStop() { close() }
}
