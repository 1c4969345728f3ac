#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Sends single HTTP/1.1 requests over TCP (`http://`) or TLS (`https://`, trusted as
/// ``WebSocketConfiguration/tls`` says), on the same shared event loop as WebSocket clients:
/// one connection per request (`Connection: close`), a `Content-Length` or close-delimited body.
public enum HTTPClient {
    /// Sends `request` to `url` and returns the response.
    /// - Parameters:
    ///   - request: the method, header fields and body; its target is replaced by the URL's.
    ///   - url: `http://host[:port][/path][?query]` or `https://…`.
    ///   - configuration: the TLS trust, and ``WebSocketConfiguration/handshakeTimeout`` bounds
    ///     the whole exchange.
    /// - Returns: the response.
    /// - Throws: ``WebSocketError`` (`invalidURL`, `addressResolutionFailed`, `connectionFailed`,
    ///   `handshakeFailed` for a malformed response, `handshakeTimedOut`, `tlsFailed`) or
    ///   `CancellationError`.
    public static func send(_ request: HTTPRequest, to url: String, configuration: WebSocketConfiguration = .init()) async throws
        -> HTTPResponse {
        let parsed = try WebSocketURL(parsingHTTP: url)
        var request = request
        request.target = parsed.target
        var headers = WebSocketHTTPHeaders([("Host", parsed.hostHeader)])
        for field in request.headers where field.name.lowercased() != "host" && field.name.lowercased() != "connection" {
            headers.add(name: field.name, value: field.value)
        }
        headers.add(name: "Connection", value: "close")
        request.headers = headers
        let tls = try parsed.secure ? TLSContext.client(configuration.tls ?? WebSocketTLSClientConfiguration()) : nil
        let addresses = try Socket.resolve(host: parsed.host, port: parsed.port, passive: false)
        let loop = try SharedClientLoop.acquire(kind: configuration.poller, name: configuration.clientLoopName)
        let exchange = HTTPClientExchange(url: parsed, request: request.serialized(), headRequest: request.method == "HEAD",
                                          addresses: addresses, loop: loop, configuration: configuration, tls: tls)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                exchange.begin(continuation)
            }
        } onCancel: {
            exchange.finish(.failure(CancellationError()))
        }
    }
}

/// One request and its response on a socket of the shared client loop.
final class HTTPClientExchange: EventLoopHandler {
    private enum Phase: Sendable {
        case idle, connecting, tlsHandshake, exchanging, done
    }

    private struct State: Sendable {
        var phase = Phase.idle
        var fd: Int32 = -1
        var registration: RegistrationID?
        var addresses: [Socket.Address]
        var lastError = ""
        var output = OutboundQueue()
        var tls: TLSSession?
        var parser = HTTPResponseParser()
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var timer: TimerID?
        /// A result to deliver once the lock is released.
        var deferred: (CheckedContinuation<HTTPResponse, any Error>, Result<HTTPResponse, any Error>)?
    }

    private let url: WebSocketURL
    private let request: [UInt8]
    private let headRequest: Bool
    private let loop: EventLoop
    private let configuration: WebSocketConfiguration
    private let tlsContext: TLSContext?
    private let state: Locked<State>

    init(url: WebSocketURL, request: [UInt8], headRequest: Bool, addresses: [Socket.Address], loop: EventLoop,
         configuration: WebSocketConfiguration, tls: TLSContext?) {
        self.url = url
        self.request = request
        self.headRequest = headRequest
        self.loop = loop
        self.configuration = configuration
        self.tlsContext = tls
        self.state = Locked(State(addresses: addresses))
    }

    /// Runs `body` under the lock, then resumes the continuation it finished (never under the
    /// lock: the cancellation handler may be waiting for it).
    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        let (result, deferred) = state.withLock { state in
            let result = body(&state)
            defer { state.deferred = nil }
            return (result, state.deferred)
        }
        if let (continuation, outcome) = deferred { continuation.resume(with: outcome) }
        return result
    }

    func begin(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let cancelled = withState { state -> Bool in
            guard state.phase == .idle else { return true }
            state.continuation = continuation
            state.timer = loop.schedule(after: configuration.handshakeTimeout) { [weak self, url] in
                self?.finish(.failure(WebSocketError.handshakeTimedOut.with(detail: url.hostHeader)))
            }
            connectNextAddress(&state)
            return false
        }
        if cancelled {
            SharedClientLoop.release(loop)
            continuation.resume(throwing: CancellationError())
        }
    }

    /// Ends the exchange (response, timeout, cancellation); no effect once finished.
    func finish(_ outcome: Result<HTTPResponse, any Error>) {
        withState { finishLocked(&$0, outcome) }
    }

    private func finishLocked(_ state: inout State, _ outcome: Result<HTTPResponse, any Error>) {
        guard state.phase != .done else { return }
        let wasIdle = state.phase == .idle
        state.phase = .done
        if let registration = state.registration { loop.deregister(registration) }
        if state.fd >= 0 { Socket.closeDescriptor(state.fd) }
        state.fd = -1
        state.registration = nil
        if let timer = state.timer { loop.cancel(timer) }
        if let continuation = state.continuation {
            state.continuation = nil
            state.deferred = (continuation, outcome)
        }
        if !wasIdle { SharedClientLoop.release(loop) }
    }

    private func connectNextAddress(_ state: inout State) {
        while !state.addresses.isEmpty {
            let address = state.addresses.removeFirst()
            if let registration = state.registration { loop.deregister(registration) }
            if state.fd >= 0 { Socket.closeDescriptor(state.fd) }
            state.registration = nil
            state.fd = -1
            guard let fd = try? Socket.makeStreamSocket(family: address.family) else { continue }
            state.fd = fd
            switch Socket.startConnect(fd, to: address) {
            case .failure(let error):
                state.lastError = "connect(): \(error.text)"
                continue
            case .success:
                do {
                    state.registration = try loop.register(fd: fd, interest: .write, handler: self)
                } catch {
                    state.phase = .connecting
                    finishLocked(&state, .failure(error))
                    return
                }
                state.phase = .connecting
                return
            }
        }
        state.phase = state.phase == .idle ? .connecting : state.phase
        finishLocked(&state, .failure(WebSocketError.connectionFailed.with(detail: "\(url.hostHeader): \(state.lastError)")))
    }

    func handleIO(_ readiness: IOReadiness, scratch: UnsafeMutableRawBufferPointer) {
        withState { state in
            guard state.fd >= 0, let registration = state.registration else { return }
            switch state.phase {
            case .connecting:
                let error = Socket.pendingError(state.fd)
                guard error == 0 else {
                    state.lastError = "connect(): \(SystemError(code: error).text)"
                    connectNextAddress(&state)
                    return
                }
                state.phase = .exchanging
                if let tlsContext {
                    guard let session = try? TLSSession(context: tlsContext, serverName: url.host) else {
                        finishLocked(&state, .failure(WebSocketError.tlsFailed.with(detail: "cannot create a TLS session")))
                        return
                    }
                    state.tls = session
                    state.phase = .tlsHandshake
                    advanceTLS(&state)
                } else {
                    state.output.append(request, separateWrite: false)
                }
                flush(&state, registration)
            case .tlsHandshake, .exchanging:
                if readiness.writable { flush(&state, registration) }
                guard state.phase != .done, readiness.readable || readiness.hangup else { return }
                receive(&state, registration, scratch: scratch)
            case .idle, .done:
                return
            }
        }
    }

    /// Advances the TLS handshake; once done, queues the encrypted request.
    private func advanceTLS(_ state: inout State) {
        guard let tls = state.tls else { return }
        let progress = tls.handshake()
        state.output.append(tls.takeCiphertext(), separateWrite: false)
        switch progress {
        case .done:
            state.phase = .exchanging
            if case .failed(let reason) = request.withUnsafeBytes({ tls.write($0) }) {
                finishLocked(&state, .failure(WebSocketError.tlsFailed.with(detail: reason)))
                return
            }
            state.output.append(tls.takeCiphertext(), separateWrite: false)
        case .needsInput:
            break
        case .closed:
            finishLocked(&state, .failure(WebSocketError.tlsFailed.with(detail: "the server ended TLS during the handshake")))
        case .failed(let reason):
            finishLocked(&state, .failure(WebSocketError.tlsFailed.with(detail: reason)))
        }
    }

    private func receive(_ state: inout State, _ registration: RegistrationID, scratch: UnsafeMutableRawBufferPointer) {
        let count = Socket.receive(state.fd, scratch)
        if count < 0 {
            let code = errno
            if code != EAGAIN && code != EWOULDBLOCK && code != EINTR {
                finishLocked(&state, .failure(WebSocketError.connectionFailed.with(detail: "read(): \(SystemError(code: code).text)")))
            }
            return
        }
        var ended = count == 0
        if let tls = state.tls, count > 0 {
            tls.feed(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            if state.phase == .tlsHandshake {
                advanceTLS(&state)
                if state.phase == .done { return }
            }
            if state.phase == .exchanging {
                reading: while true {
                    switch tls.read(into: scratch) {
                    case .done(let read) where read > 0: state.parser.append(Array(scratch[..<read]))
                    case .done, .needsInput: break reading
                    case .closed: ended = true; break reading
                    case .failed(let reason):
                        finishLocked(&state, .failure(WebSocketError.tlsFailed.with(detail: reason)))
                        return
                    }
                }
            }
            state.output.append(tls.takeCiphertext(), separateWrite: false)
            flush(&state, registration)
        } else if count > 0 {
            state.parser.append(Array(scratch[..<count]))
        } else if state.phase == .tlsHandshake {
            finishLocked(&state, .failure(WebSocketError.tlsFailed.with(detail: "the server closed the connection during the TLS handshake")))
            return
        }
        guard state.phase == .exchanging else { return }
        switch state.parser.next(ended: ended, headRequest: headRequest) {
        case .needMoreData:
            return
        case .response(let response):
            finishLocked(&state, .success(response))
        case .invalid(let reason):
            finishLocked(&state, .failure(WebSocketError.handshakeFailed.with(detail: reason)))
        }
    }

    private func flush(_ state: inout State, _ registration: RegistrationID) {
        guard state.fd >= 0 else { return }
        switch state.output.write(to: state.fd) {
        case .drained:
            loop.setInterest(registration, .read)
        case .wouldBlock:
            loop.setInterest(registration, [.read, .write])
        case .failed(let code):
            finishLocked(&state, .failure(WebSocketError.connectionFailed.with(detail: "send(): \(SystemError(code: code).text)")))
        }
    }

    func handleLoopStop() {
        finish(.failure(WebSocketError.eventLoopShutDown))
    }
}
