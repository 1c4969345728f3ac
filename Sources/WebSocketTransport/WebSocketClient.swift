#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Opens client connections over TCP (`ws://`), or over TLS (`wss://`, where OpenSSL is
/// available): the server's certificate is checked as ``WebSocketConfiguration/tls`` says.
///
/// Client connections share one event loop thread, started with the first connection and
/// stopped when the last one has ended.
public enum WebSocketClient {
    /// Connects and performs the opening handshake.
    ///
    /// - Parameters:
    ///   - url: `ws://host[:port][/path][?query]` or `wss://…` (port 443 by default); an IPv6
    ///     host goes in brackets.
    ///   - headers: extra request header fields (e.g. `Authorization`, `Origin`).
    ///   - configuration: limits for the connection; ``WebSocketConfiguration/handshakeTimeout``
    ///     bounds connect plus handshake.
    /// - Returns: the open connection.
    /// - Throws: ``WebSocketError`` (`invalidURL`, `addressResolutionFailed`,
    ///   `connectionFailed`, `handshakeFailed`, `handshakeTimedOut`, `tlsFailed` for a TLS
    ///   failure or an untrusted certificate, `tlsUnavailable` for `wss://` without OpenSSL) or
    ///   `CancellationError`.
    public static func connect(
        to url: String, headers: WebSocketHTTPHeaders = [:], configuration: WebSocketConfiguration = .init()
    ) async throws -> WebSocketConnection {
        let parsed = try WebSocketURL(parsing: url)
        let tls = try parsed.secure
            ? TLSContext.client(configuration.tls ?? WebSocketTLSClientConfiguration()) : nil
        let addresses = try Socket.resolve(host: parsed.host, port: parsed.port, passive: false)
        let loop = try SharedClientLoop.acquire(kind: configuration.poller, name: configuration.clientLoopName)
        let connector = ClientConnector(url: parsed, headers: headers, addresses: addresses, loop: loop,
                                        configuration: configuration, tls: tls)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WebSocketConnection, any Error>) in
                connector.begin(continuation)
            }
        } onCancel: {
            connector.fail(CancellationError())
        }
    }

    /// Connects, runs `body` with the connection, and closes it (1000) afterwards, also when
    /// `body` throws.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `connect` or `body` throws.
    public static func withConnection<Result: Sendable>(
        to url: String, headers: WebSocketHTTPHeaders = [:], configuration: WebSocketConfiguration = .init(),
        _ body: (WebSocketConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await connect(to: url, headers: headers, configuration: configuration)
        return try await withCleanup { try await body(connection) } cleanup: { await connection.close() }
    }
}

/// The event loops shared by client connections, one per multiplexer and name: created on
/// demand, stopped when unused.
enum SharedClientLoop {
    private struct Key: Hashable {
        var kind: PollerKind
        var name: String
    }

    private struct Slot {
        var loop: EventLoop
        var users: Int
    }

    private static let slots = Locked<[Key: Slot]>([:])

    static func acquire(kind: PollerKind, name: String) throws(WebSocketError) -> EventLoop {
        let key = Key(kind: kind, name: name)
        return try slots.withLock { (slots: inout [Key: Slot]) throws(WebSocketError) -> EventLoop in
            if var slot = slots[key] {
                slot.users += 1
                slots[key] = slot
                return slot.loop
            }
            let loop = try EventLoop(kind: kind, name: name)
            slots[key] = Slot(loop: loop, users: 1)
            return loop
        }
    }

    static func release(_ loop: EventLoop) {
        let key = Key(kind: loop.kind, name: loop.name)
        let stop = slots.withLock { slots -> Bool in
            guard var slot = slots[key], slot.loop === loop else { return false }
            slot.users -= 1
            if slot.users > 0 {
                slots[key] = slot
                return false
            }
            slots[key] = nil
            return true
        }
        if stop { loop.requestStop() }
    }

    /// The client loops currently running (for tests).
    static var activeLoopCount: Int { slots.withLock { $0.count } }
}

/// Connects one socket (trying each resolved address), sends the upgrade request and
/// validates the response, then hands the socket to a ``WebSocketConnection``.
final class ClientConnector: EventLoopHandler {
    private enum Phase: Sendable {
        case idle, connecting, tlsHandshake, requesting, awaitingResponse, done
    }

    private struct State: Sendable {
        var phase = Phase.idle
        var fd: Int32 = -1
        var registration: RegistrationID?
        var addresses: [Socket.Address]
        var lastError = ""
        var handshake: ClientHandshake
        /// What to write: the request, or over TLS the handshake flights and the encrypted request.
        var request = OutboundQueue()
        var tls: TLSSession?
        var continuation: CheckedContinuation<WebSocketConnection, any Error>?
        var timer: TimerID?
        var remote = ("", 0)
        /// A failure to deliver once the lock is released (see `withState`).
        var deferredFailure: (CheckedContinuation<WebSocketConnection, any Error>, any Error)?
    }

    private let url: WebSocketURL
    private let headers: WebSocketHTTPHeaders
    private let loop: EventLoop
    private let configuration: WebSocketConfiguration
    private let tlsContext: TLSContext?
    private let state: Locked<State>

    init(url: WebSocketURL, headers: WebSocketHTTPHeaders, addresses: [Socket.Address], loop: EventLoop,
         configuration: WebSocketConfiguration, tls: TLSContext?) {
        self.url = url
        self.headers = headers
        self.loop = loop
        self.configuration = configuration
        self.tlsContext = tls
        self.state = Locked(State(addresses: addresses, handshake: ClientHandshake(maxBytes: configuration.maxHandshakeBytes)))
    }

    /// Runs `body` under the lock, then resumes a continuation it failed. Resuming under the
    /// lock can deadlock: the resumed task's cancellation handler (``fail(_:)``) may be running
    /// at that moment and waiting for this lock.
    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        let (result, failure) = state.withLock { state -> (Result, (CheckedContinuation<WebSocketConnection, any Error>, any Error)?) in
            let result = body(&state)
            defer { state.deferredFailure = nil }
            return (result, state.deferredFailure)
        }
        if let (continuation, error) = failure { continuation.resume(throwing: error) }
        return result
    }

    func begin(_ continuation: CheckedContinuation<WebSocketConnection, any Error>) {
        let failure = withState { state -> (any Error)? in
            // Cancelled before the continuation existed.
            guard state.phase == .idle else { return CancellationError() }
            state.continuation = continuation
            state.timer = loop.schedule(after: configuration.handshakeTimeout) { [weak self] in
                self?.fail(WebSocketError.handshakeTimedOut.with(detail: "\(self?.url.hostHeader ?? "")"))
            }
            connectNextAddress(&state)
            return nil
        }
        if let failure {
            SharedClientLoop.release(loop)
            continuation.resume(throwing: failure)
        }
    }

    /// Ends the attempt with `error` (timeout, cancellation); no effect once finished.
    func fail(_ error: any Error) {
        withState { failLocked(&$0, error) }
    }

    private func failLocked(_ state: inout State, _ error: any Error) {
        guard state.phase != .done else { return }
        let wasIdle = state.phase == .idle
        state.phase = .done
        closeSocket(&state)
        if let timer = state.timer { loop.cancel(timer) }
        if let continuation = state.continuation {
            state.continuation = nil
            state.deferredFailure = (continuation, error)
        }
        // An idle connector has not taken over the loop reference yet: `begin` releases it.
        if !wasIdle { SharedClientLoop.release(loop) }
    }

    private func closeSocket(_ state: inout State) {
        if let registration = state.registration { loop.deregister(registration) }
        if state.fd >= 0 { Socket.closeDescriptor(state.fd) }
        state.fd = -1
        state.registration = nil
    }

    private func connectNextAddress(_ state: inout State) {
        while !state.addresses.isEmpty {
            let address = state.addresses.removeFirst()
            closeSocket(&state)
            let fd: Int32
            do { fd = try Socket.makeStreamSocket(family: address.family) } catch {
                state.lastError = error.detail
                continue
            }
            state.fd = fd
            state.remote = Socket.describe(address.storage)
            switch Socket.startConnect(fd, to: address) {
            case .failure(let error):
                state.lastError = "connect(): \(error.text)"
                continue
            case .success:
                // Writability reports completion (also for an immediate connect).
                do {
                    state.registration = try loop.register(fd: fd, interest: .write, handler: self)
                } catch {
                    failLocked(&state, error)
                    return
                }
                state.phase = .connecting
                return
            }
        }
        state.phase = state.phase == .idle ? .connecting : state.phase  // so that failLocked releases the loop
        failLocked(&state, WebSocketError.connectionFailed.with(detail: "\(url.hostHeader): \(state.lastError)"))
    }

    private enum Outcome {
        case none
        case upgraded(fd: Int32, registration: RegistrationID, leftover: [UInt8], continuation: CheckedContinuation<WebSocketConnection, any Error>?,
                      remote: (String, Int), tls: TLSSession?, pendingCiphertext: [UInt8])
    }

    func handleIO(_ readiness: IOReadiness, scratch: UnsafeMutableRawBufferPointer) {
        let outcome = withState { state -> Outcome in
            guard state.fd >= 0, let registration = state.registration else { return .none }
            switch state.phase {
            case .connecting:
                let error = Socket.pendingError(state.fd)
                guard error == 0 else {
                    state.lastError = "connect(): \(SystemError(code: error).text)"
                    connectNextAddress(&state)
                    return .none
                }
                if let tlsContext {
                    do {
                        state.tls = try TLSSession(context: tlsContext, serverName: url.host)
                    } catch {
                        failLocked(&state, error)
                        return .none
                    }
                    state.phase = .tlsHandshake
                    continueTLSHandshake(&state, registration)
                    return .none
                }
                state.phase = .requesting
                state.request.append(state.handshake.request(for: url, headers: headers), separateWrite: false)
                writeRequest(&state, registration)
                return .none
            case .tlsHandshake:
                if readiness.writable { writeRequest(&state, registration) }
                guard readiness.readable || readiness.hangup, let tls = state.tls else { return .none }
                let count = Socket.receive(state.fd, scratch)
                if count == 0 {
                    failLocked(&state, WebSocketError.tlsFailed.with(detail: "the server closed the connection during the TLS handshake"))
                    return .none
                }
                if count < 0 {
                    let code = errno
                    if code != EAGAIN && code != EWOULDBLOCK && code != EINTR {
                        failLocked(&state, WebSocketError.tlsFailed.with(detail: "read(): \(SystemError(code: code).text)"))
                    }
                    return .none
                }
                tls.feed(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                continueTLSHandshake(&state, registration)
                return .none
            case .requesting:
                writeRequest(&state, registration)
                return .none
            case .awaitingResponse:
                var count = Socket.receive(state.fd, scratch)
                if count > 0, let tls = state.tls {
                    // Decrypt in place: the ciphertext is copied into OpenSSL first.
                    tls.feed(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                    var plaintext: [UInt8] = []
                    reading: while true {
                        switch tls.read(into: scratch) {
                        case .done(let read) where read > 0: plaintext.append(contentsOf: scratch[..<read])
                        case .done, .needsInput: break reading
                        case .closed:
                            failLocked(&state, WebSocketError.handshakeFailed.with(detail: "the server closed the connection"))
                            return .none
                        case .failed(let reason):
                            failLocked(&state, WebSocketError.tlsFailed.with(detail: reason))
                            return .none
                        }
                    }
                    state.request.append(tls.takeCiphertext(), separateWrite: false)
                    count = plaintext.count
                    plaintext.withUnsafeBytes { raw in
                        UnsafeMutableRawBufferPointer(rebasing: scratch[..<raw.count]).copyMemory(from: raw)
                    }
                    if count == 0 { return .none }
                }
                if count == 0 {
                    failLocked(&state, WebSocketError.handshakeFailed.with(detail: "the server closed the connection"))
                    return .none
                }
                if count < 0 {
                    let code = errno
                    if code != EAGAIN && code != EWOULDBLOCK && code != EINTR {
                        failLocked(&state, WebSocketError.handshakeFailed.with(detail: "read(): \(SystemError(code: code).text)"))
                    }
                    return .none
                }
                switch state.handshake.consume(UnsafeRawBufferPointer(rebasing: scratch[..<count])) {
                case .needMoreData:
                    return .none
                case .failed(let reason):
                    failLocked(&state, WebSocketError.handshakeFailed.with(detail: reason))
                    return .none
                case .upgraded(_, let leftover):
                    state.phase = .done
                    if let timer = state.timer { loop.cancel(timer) }
                    let fd = state.fd
                    state.fd = -1
                    state.registration = nil
                    let continuation = state.continuation
                    state.continuation = nil
                    let pending = state.request.takeAll().flatMap { $0 }
                    return .upgraded(fd: fd, registration: registration, leftover: leftover, continuation: continuation,
                                     remote: state.remote, tls: state.tls, pendingCiphertext: pending)
                }
            case .idle, .done:
                return .none
            }
        }
        guard case .upgraded(let fd, let registration, let leftover, let continuation, let remote, let tls, let pending) = outcome
        else { return }
        let sharedLoop = loop
        let connection = WebSocketConnection(
            fd: fd, registration: registration, loop: sharedLoop, isClient: true, configuration: configuration,
            remoteAddress: remote.0, remotePort: remote.1, requestPath: url.target, requestHeaders: headers,
            tls: tls, onEnd: { SharedClientLoop.release(sharedLoop) })
        connection.start(initialOutput: [], leftover: leftover, pendingCiphertext: pending)
        continuation?.resume(returning: connection)
    }

    /// Advances the TLS handshake; once it is done (and the certificate trusted), sends the
    /// encrypted upgrade request.
    private func continueTLSHandshake(_ state: inout State, _ registration: RegistrationID) {
        guard let tls = state.tls else { return }
        let progress = tls.handshake()
        state.request.append(tls.takeCiphertext(), separateWrite: false)
        switch progress {
        case .done:
            state.phase = .requesting
            let request = state.handshake.request(for: url, headers: headers)
            if case .failed(let reason) = request.withUnsafeBytes({ tls.write($0) }) {
                failLocked(&state, WebSocketError.tlsFailed.with(detail: reason))
                return
            }
            state.request.append(tls.takeCiphertext(), separateWrite: false)
            writeRequest(&state, registration)
        case .needsInput:
            writeRequest(&state, registration)
        case .closed:
            failLocked(&state, WebSocketError.tlsFailed.with(detail: "the server ended TLS during the handshake"))
        case .failed(let reason):
            failLocked(&state, WebSocketError.tlsFailed.with(detail: reason))
        }
    }

    private func writeRequest(_ state: inout State, _ registration: RegistrationID) {
        switch state.request.write(to: state.fd) {
        case .drained:
            if state.phase == .requesting { state.phase = .awaitingResponse }
            loop.setInterest(registration, .read)
        case .wouldBlock:
            // The handshake also waits for the server's flights.
            loop.setInterest(registration, state.phase == .tlsHandshake ? [.read, .write] : .write)
        case .failed(let code):
            failLocked(&state, WebSocketError.connectionFailed.with(detail: "send(): \(SystemError(code: code).text)"))
        }
    }

    func handleLoopStop() {
        fail(WebSocketError.eventLoopShutDown)
    }
}
