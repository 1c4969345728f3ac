#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// One open WebSocket connection (after the opening handshake), on either side.
///
/// - Receive with ``messages`` (an `AsyncSequence` that finishes when the connection ends).
/// - Send with ``send(_:fault:)``; sends are queued and written by non-blocking I/O, so
///   `send` returns once the frame is queued, not when the peer has it.
/// - End with ``close(code:reason:)`` (close handshake) or ``abort()`` (TCP reset).
/// - ``closeInfo`` / ``waitUntilClosed()`` tell how the connection ended.
///
/// Closing rules (RFC 6455 section 7): a received close frame is echoed with the same code and
/// reason; once both close frames have passed, the server half-closes TCP first and the client
/// waits for it; a peer that breaks the protocol gets a close frame with 1002, 1007 or 1009
/// and the TCP connection is then shut down. A closing handshake that does not finish within
/// ``WebSocketConfiguration/closeTimeout`` drops the TCP connection. These rules live in one
/// value, `WebSocketCloseStateMachine`; the connection feeds it events and performs its actions.
///
/// All socket I/O runs on an event loop thread; the methods may be called from any task.
///
/// A connection can also be one end of an in-memory pair (``InMemoryWebSocket``): the same
/// framing, parser, close handshake and fault hooks, with the bytes handed to the peer directly
/// instead of through a socket. In-memory connections have no close timeout (both ends answer a
/// close frame at once) and no backpressure (a send is delivered to the peer's parser before it
/// returns).
public final class WebSocketConnection: Sendable {
    /// A process-wide unique number, for logs and transcripts.
    public let id: UInt64
    /// Whether this is the client side of the connection.
    public let isClient: Bool
    /// Whether the connection runs over TLS (`wss://`); stays true after it ended.
    public let isSecure: Bool
    /// The peer's numeric IP address (`127.0.0.1`, `::1`).
    public let remoteAddress: String
    /// The peer's TCP port.
    public let remotePort: Int
    /// The request target of the opening handshake (path and query, e.g. `/ws?x=1`).
    public let requestPath: String
    /// Server side: the header fields the client sent. Client side: the extra header fields
    /// this client added to its request.
    public let requestHeaders: WebSocketHTTPHeaders

    /// The event loop and registration of a socket connection; `nil` for an in-memory one.
    let loop: EventLoop?
    let registration: RegistrationID?
    private let closeTimeout: Duration
    private let inboundHighWaterMark: Int
    private let onEnd: (@Sendable () -> Void)?
    private let state: Locked<State>

    private struct PingWaiter: Sendable {
        var id: UInt64
        var payload: [UInt8]
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// Where the bytes go.
    private enum Link: Sendable {
        /// A socket on the event loop.
        case socket(fd: Int32)
        /// The peer of an in-memory pair.
        case memory(MemoryPeer)
        /// Ended.
        case closed
    }

    private struct State: Sendable {
        var link: Link
        /// The TLS session of a `wss://` socket connection: plaintext in ``outbound`` is
        /// encrypted into ``ciphertext``, which is what the socket writes.
        var tls: TLSSession?
        var parser: WebSocketInboundParser
        var outbound = OutboundQueue()
        var ciphertext = OutboundQueue()
        var interest: IOInterest = []
        var readPaused = false
        var inbound = InboundQueue()
        /// The closing handshake; ``WebSocketConnection/perform(_:_:)`` carries out its actions.
        var close: WebSocketCloseStateMachine
        /// The running close timer of a socket connection.
        var closeTimer: TimerID?
        var closeWaiters: [CheckedContinuation<WebSocketCloseInfo, Never>] = []
        var pingWaiters: [PingWaiter] = []
        var nextWaiterID: UInt64 = 0
        var messagesToDrop = 0
        var automaticPongs: Bool
        var maxOutboundBytes: Int
        /// Continuations to resume once the lock is released (see `withState`).
        var deferred: [DeferredResume] = []

        /// Whether the connection has not ended yet.
        var isOpen: Bool {
            if case .closed = link { false } else { true }
        }
    }

    /// A continuation to resume, or bytes to hand to an in-memory peer, outside the lock.
    private enum DeferredResume: Sendable {
        case message(CheckedContinuation<WebSocketReceivedMessage?, Never>, WebSocketReceivedMessage?)
        case closed(CheckedContinuation<WebSocketCloseInfo, Never>, WebSocketCloseInfo)
        case ping(CheckedContinuation<Void, any Error>, failure: WebSocketError?)
        /// Writes for an in-memory peer, each delivered on its own as a socket read would.
        case deliver(WebSocketConnection, [[UInt8]])
        /// The in-memory peer sees the end of the byte stream (a half-close or a reset).
        case endOfStream(WebSocketConnection)

        func resume() {
            switch self {
            case .message(let continuation, let message): continuation.resume(returning: message)
            case .closed(let continuation, let info): continuation.resume(returning: info)
            case .ping(let continuation, let failure):
                if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
            case .deliver(let peer, let writes):
                for write in writes { peer.receiveFromPeer(write) }
            case .endOfStream(let peer):
                peer.peerEndedStream()
            }
        }
    }

    /// Runs `body` under the lock, then resumes the continuations it queued. Resuming a
    /// continuation while holding the lock can deadlock: the resumed task's cancellation handler
    /// may be running at that moment (holding the task's lock) and waiting for this lock.
    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        let (result, deferred) = state.withLock { state -> (Result, [DeferredResume]) in
            let result = body(&state)
            let deferred = state.deferred
            state.deferred.removeAll()
            return (result, deferred)
        }
        for item in deferred { item.resume() }
        return result
    }

    /// `withState` for a body that throws a `WebSocketError`.
    private func withState<Result>(_ body: (inout State) throws(WebSocketError) -> Result) throws(WebSocketError) -> Result {
        let (outcome, deferred) = state.withLock { state -> (Swift.Result<Result, WebSocketError>, [DeferredResume]) in
            let outcome: Swift.Result<Result, WebSocketError>
            do throws(WebSocketError) {
                outcome = .success(try body(&state))
            } catch {
                outcome = .failure(error)
            }
            let deferred = state.deferred
            state.deferred.removeAll()
            return (outcome, deferred)
        }
        for item in deferred { item.resume() }
        return try outcome.get()
    }

    private static let idCounter = Locked<UInt64>(0)

    convenience init(
        fd: Int32, registration: RegistrationID, loop: EventLoop, isClient: Bool,
        configuration: WebSocketConfiguration, remoteAddress: String, remotePort: Int,
        requestPath: String, requestHeaders: WebSocketHTTPHeaders, tls: TLSSession? = nil,
        onEnd: (@Sendable () -> Void)? = nil
    ) {
        self.init(link: .socket(fd: fd), registration: registration, loop: loop, isClient: isClient,
                  configuration: configuration, remoteAddress: remoteAddress, remotePort: remotePort,
                  requestPath: requestPath, requestHeaders: requestHeaders, tls: tls, onEnd: onEnd)
    }

    /// One end of an in-memory pair; ``InMemoryWebSocket/pair(path:headers:client:server:)`` joins two.
    convenience init(
        memoryPeer: MemoryPeer, isClient: Bool, configuration: WebSocketConfiguration, remoteAddress: String,
        remotePort: Int, requestPath: String, requestHeaders: WebSocketHTTPHeaders
    ) {
        self.init(link: .memory(memoryPeer), registration: nil, loop: nil, isClient: isClient,
                  configuration: configuration, remoteAddress: remoteAddress, remotePort: remotePort,
                  requestPath: requestPath, requestHeaders: requestHeaders, tls: nil, onEnd: nil)
    }

    private init(
        link: Link, registration: RegistrationID?, loop: EventLoop?, isClient: Bool,
        configuration: WebSocketConfiguration, remoteAddress: String, remotePort: Int,
        requestPath: String, requestHeaders: WebSocketHTTPHeaders, tls: TLSSession?, onEnd: (@Sendable () -> Void)?
    ) {
        self.isSecure = tls != nil
        self.id = Self.idCounter.withLock { counter in
            counter &+= 1
            return counter
        }
        self.isClient = isClient
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.requestPath = requestPath
        self.requestHeaders = requestHeaders
        self.loop = loop
        self.registration = registration
        self.closeTimeout = configuration.closeTimeout
        self.inboundHighWaterMark = max(1, configuration.inboundBufferHighWaterMark)
        self.onEnd = onEnd
        let parser = WebSocketInboundParser(
            role: isClient ? .client : .server, maxMessageSize: configuration.maxMessageSize,
            messageTooBigReason: configuration.messageTooBigReason)
        // In memory both ends answer a close frame at once: no close timer is needed.
        let usesCloseTimer = if case .socket = link { true } else { false }
        self.state = Locked(State(
            link: link, tls: tls, parser: parser,
            close: WebSocketCloseStateMachine(isClient: isClient, usesCloseTimer: usesCloseTimer),
            automaticPongs: configuration.automaticPongs, maxOutboundBytes: configuration.maxOutboundBufferBytes))
    }

    /// Takes over the registration, sends `initialOutput` (the server's 101 response) and
    /// parses bytes that arrived together with the handshake. Called on the loop thread.
    /// - Parameter pendingCiphertext: TLS bytes the handshake produced and has not written yet;
    ///   they go out before anything else.
    func start(initialOutput: [UInt8], leftover: [UInt8], pendingCiphertext: [UInt8] = []) {
        guard let loop, let registration else { return }
        loop.replaceHandler(registration, with: self)
        withState { state in
            state.ciphertext.append(pendingCiphertext, separateWrite: false)
            state.outbound.append(initialOutput, separateWrite: false)
            if !leftover.isEmpty {
                leftover.withUnsafeBytes { consume(&state, $0) }
            }
            flush(&state)
            if state.isOpen {
                let interest = desiredInterest(state)
                state.interest = interest
                loop.setInterest(registration, interest)
            }
        }
    }

    // MARK: - In-memory peer side

    /// Bytes written by the in-memory peer: parsed as if read from a socket.
    fileprivate func receiveFromPeer(_ bytes: [UInt8]) {
        withState { state in
            guard state.isOpen else { return }
            bytes.withUnsafeBytes { consume(&state, $0) }
            flush(&state)
        }
    }

    /// The in-memory peer half-closed or dropped the connection: the end of the byte stream.
    fileprivate func peerEndedStream() {
        withState { state in perform(state.close.streamEnded(), &state) }
    }

    // MARK: - Public API

    /// The received messages, in order. The sequence finishes (returns `nil`) after the
    /// connection has ended and every received message was consumed. Meant for one consumer;
    /// several concurrent consumers each get different messages.
    public var messages: WebSocketInboundMessages { WebSocketInboundMessages(connection: self, transform: { $0.message }) }

    /// The received messages with how they arrived (how many frames), in order; the same
    /// queue as ``messages``, so use one or the other.
    public var receivedMessages: WebSocketReceivedMessages { WebSocketReceivedMessages(connection: self, transform: { $0 }) }

    /// Sends a message, optionally with a fault.
    ///
    /// - Parameters:
    ///   - message: the text or binary message.
    ///   - fault: misbehaviour for this send (fragmentation, split writes, delay, drop).
    /// - Throws: ``WebSocketError/connectionClosed`` once a close frame was sent or the
    ///   connection ended; ``WebSocketError/outboundBufferFull`` when the queue limit is
    ///   exceeded (the connection is then closed with 1008 "slow consumer");
    ///   `CancellationError` when cancelled during a delay.
    public func send(_ message: WebSocketMessage, fault: SendFault? = nil) async throws {
        let fault = fault ?? SendFault()
        if let delay = fault.delay { try await Task.sleep(for: delay) }
        if fault.drop { return }
        let frames = encode(message, fragments: fault.fragmentCount, interleavingPings: fault.interleavedPings)
        try enqueue(fault.writes(of: frames.count == 1 ? frames[0] : Array(frames.joined())),
                    split: fault.writeSplit != .none, isMessage: true, raw: false)
    }

    /// Sends a text message.
    /// - Throws: see ``send(_:fault:)``.
    public func send(text: String) async throws { try await send(.text(text)) }

    /// Sends a binary message.
    /// - Throws: see ``send(_:fault:)``.
    public func send(binary: [UInt8]) async throws { try await send(.binary(binary)) }

    /// Writes bytes to the socket exactly as given (no framing, no masking): for malformed
    /// frames built with ``WebSocketFrame/encoded(maskingKey:)`` or by hand. Works until the
    /// sending direction is shut down, even after a close frame.
    ///
    /// - Parameters:
    ///   - bytes: the raw bytes.
    ///   - fault: only ``SendFault/writeSplit`` and ``SendFault/delay`` apply.
    /// - Throws: ``WebSocketError/connectionClosed`` when the socket can no longer send.
    public func sendRaw(_ bytes: [UInt8], fault: SendFault? = nil) async throws {
        let fault = fault ?? SendFault()
        if let delay = fault.delay { try await Task.sleep(for: delay) }
        try enqueue(fault.writes(of: bytes), split: fault.writeSplit != .none, isMessage: false, raw: true)
    }

    /// Sends a ping and waits for the matching pong (same payload).
    ///
    /// - Parameter payload: at most 125 bytes.
    /// - Throws: ``WebSocketError/invalidArgument`` for a long payload,
    ///   ``WebSocketError/connectionClosed`` when the connection ends first, or
    ///   `CancellationError`.
    public func ping(_ payload: [UInt8] = []) async throws {
        guard payload.count <= 125 else { throw WebSocketError.invalidArgument.with(detail: "ping payload over 125 bytes") }
        let frame = encodeFrame(fin: true, opcode: .ping, payload: payload)
        let waiterID = withState { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let failure = withState { state -> (any Error)? in
                    if Task.isCancelled { return CancellationError() }
                    guard state.isOpen, state.close.canSendMessages else { return WebSocketError.connectionClosed }
                    state.pingWaiters.append(PingWaiter(id: waiterID, payload: payload, continuation: continuation))
                    state.outbound.append(frame, separateWrite: false)
                    flush(&state)
                    return nil
                }
                if let failure { continuation.resume(throwing: failure) }
            }
        } onCancel: {
            let waiter = withState { state -> PingWaiter? in
                guard let index = state.pingWaiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
                return state.pingWaiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Starts the closing handshake and waits until the connection has ended.
    ///
    /// - Parameters:
    ///   - code: the status code; ``WebSocketCloseCode/noStatus`` sends an empty close frame.
    ///   - reason: the reason, cut at a code point boundary to at most 123 UTF-8 bytes.
    /// - Returns: how the connection ended (also when it had already ended before).
    @discardableResult
    public func close(code: WebSocketCloseCode = .normal, reason: String = "") async -> WebSocketCloseInfo {
        withState { state in
            let actions = state.close.closeRequested(code: code, reason: reason)
            guard !actions.isEmpty else { return }
            perform(actions, &state)
            flush(&state)
        }
        return await waitUntilClosed()
    }

    /// Ends the connection at once with a TCP reset (`SO_LINGER` 0, then `close`), without a
    /// close frame. The peer sees an abnormal end (1006); so does ``closeInfo`` here unless a
    /// close frame had already been sent.
    public func abort() {
        withState { state in perform(state.close.abortRequested(), &state) }
    }

    /// How the connection ended; `nil` while it is open or closing.
    public var closeInfo: WebSocketCloseInfo? { withState { $0.close.closeInfo } }

    /// Waits until the connection has ended and tells how.
    public func waitUntilClosed() async -> WebSocketCloseInfo {
        await withCheckedContinuation { (continuation: CheckedContinuation<WebSocketCloseInfo, Never>) in
            let info = withState { state -> WebSocketCloseInfo? in
                if let info = state.close.closeInfo { return info }
                state.closeWaiters.append(continuation)
                return nil
            }
            if let info { continuation.resume(returning: info) }
        }
    }

    /// Changes the inbound message size limit from the next frame on (the Gateway allows
    /// 64 KiB before its own handshake completes and 25 MiB after).
    ///
    /// - Parameters:
    ///   - bytes: the largest accepted message.
    ///   - closeReason: the reason sent with 1009 when exceeded; `nil` keeps the current one.
    public func setMaxMessageSize(_ bytes: Int, closeReason: String? = nil) {
        withState { state in
            state.parser.maxMessageSize = bytes
            if let closeReason { state.parser.messageTooBigReason = WebSocketCloseStateMachine.trimmedReason(closeReason) }
        }
    }

    /// The current inbound message size limit.
    public var maxMessageSize: Int { withState { $0.parser.maxMessageSize } }

    /// Changes the outbound queue limit of this connection.
    public func setMaxOutboundBufferBytes(_ bytes: Int) {
        withState { $0.maxOutboundBytes = bytes }
    }

    /// Bytes queued for sending and not yet accepted by the kernel (after TLS: ciphertext).
    public var outboundBufferedBytes: Int { withState { $0.outbound.byteCount + $0.ciphertext.byteCount } }


    /// The SHA-256 fingerprint (`AB:CD:…`) of the peer's TLS certificate: on a `wss://` client,
    /// the server's; `nil` without TLS or without a peer certificate.
    public var peerCertificateFingerprint: String? { withState { $0.tls?.peerFingerprint } }

    /// Turns automatic pong replies off (a fault) or back on.
    public func setAutomaticPongs(_ enabled: Bool) {
        withState { $0.automaticPongs = enabled }
    }

    /// Silently discards the next `count` messages passed to ``send(_:fault:)`` (they report
    /// success but never reach the wire), e.g. to lose an acknowledgement.
    public func dropNextOutboundMessages(_ count: Int = 1) {
        withState { $0.messagesToDrop += max(0, count) }
    }

    // MARK: - Consumer side

    func nextReceivedMessage() async -> WebSocketReceivedMessage? {
        enum Immediate { case message(WebSocketReceivedMessage), end, wait(UInt64) }
        let immediate = withState { state -> Immediate in
            if let message = state.inbound.pop() {
                resumeReadingIfDrained(&state)
                return .message(message)
            }
            if state.inbound.isFinished { return .end }
            state.nextWaiterID += 1
            return .wait(state.nextWaiterID)
        }
        let waiterID: UInt64
        switch immediate {
        case .message(let message): return message
        case .end: return nil
        case .wait(let id): waiterID = id
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WebSocketReceivedMessage?, Never>) in
                let ready = withState { state -> WebSocketReceivedMessage?? in
                    if let message = state.inbound.pop() {
                        resumeReadingIfDrained(&state)
                        return .some(message)
                    }
                    if state.inbound.isFinished || Task.isCancelled { return .some(nil) }
                    state.inbound.addWaiter(id: waiterID, continuation)
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = withState { $0.inbound.removeWaiter(id: waiterID) }
            waiter?.resume(returning: nil)
        }
    }

    private func resumeReadingIfDrained(_ state: inout State) {
        guard state.readPaused, state.inbound.byteCount < inboundHighWaterMark else { return }
        state.readPaused = false
        updateInterest(&state)
    }

    // MARK: - Encoding and queueing

    private func encode(_ message: WebSocketMessage, fragments: Int, interleavingPings: Bool) -> [[UInt8]] {
        switch message {
        case .text(var string):
            return string.withUTF8 { encodeMessage(opcode: .text, payload: UnsafeRawBufferPointer($0), fragments: fragments, interleavingPings: interleavingPings) }
        case .binary(let bytes):
            return bytes.withUnsafeBytes { encodeMessage(opcode: .binary, payload: $0, fragments: fragments, interleavingPings: interleavingPings) }
        }
    }

    private func encodeMessage(opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fragments: Int, interleavingPings: Bool) -> [[UInt8]] {
        let count = max(1, fragments)
        if count == 1 { return [encodeFrame(fin: true, opcode: opcode, payload: payload)] }
        var frames: [[UInt8]] = []
        let base = payload.count / count
        let extra = payload.count % count
        var start = 0
        for index in 0..<count {
            let length = base + (index < extra ? 1 : 0)
            let piece = UnsafeRawBufferPointer(rebasing: payload[start..<(start + length)])
            start += length
            frames.append(encodeFrame(fin: index == count - 1, opcode: index == 0 ? opcode : .continuation, payload: piece))
            if interleavingPings, index < count - 1 {
                frames.append(encodeFrame(fin: true, opcode: .ping, payload: Array("interleaved".utf8)))
            }
        }
        return frames
    }

    private func encodeFrame(fin: Bool, opcode: WebSocketOpcode, payload: [UInt8]) -> [UInt8] {
        payload.withUnsafeBytes { encodeFrame(fin: fin, opcode: opcode, payload: $0) }
    }

    /// One frame; clients mask with a fresh random key (RFC 6455 section 5.3).
    private func encodeFrame(fin: Bool, opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer) -> [UInt8] {
        let key: [UInt8]? = isClient ? WebSocketRandom.bytes(4) : nil
        var bytes: [UInt8] = []
        bytes.reserveCapacity(WebSocketFrame.maxHeaderSize + payload.count)
        WebSocketFrame.appendHeader(to: &bytes, fin: fin, reservedBits: 0, opcode: opcode, payloadLength: payload.count, maskingKey: key)
        let start = bytes.count
        bytes.append(contentsOf: payload)
        if let key {
            bytes.withUnsafeMutableBytes { raw in
                _ = WebSocketMasking.apply(key: WebSocketMasking.key(key), offset: 0, to: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
            }
        }
        return bytes
    }

    private func enqueue(_ writes: [[UInt8]], split: Bool, isMessage: Bool, raw: Bool) throws(WebSocketError) {
        try withState { (state: inout State) throws(WebSocketError) in
            guard state.isOpen, raw ? state.close.canSendRaw : state.close.canSendMessages else {
                throw WebSocketError.connectionClosed
            }
            if isMessage, state.messagesToDrop > 0 {
                state.messagesToDrop -= 1
                return
            }
            let size = writes.reduce(0) { $0 + $1.count }
            if state.outbound.byteCount + state.ciphertext.byteCount + size > state.maxOutboundBytes {
                let actions = state.close.closeRequested(code: .policyViolation, reason: "slow consumer")
                if !actions.isEmpty {
                    perform(actions, &state)
                    flush(&state)
                }
                throw WebSocketError.outboundBufferFull.with(
                    detail: "\(state.outbound.byteCount) bytes queued, limit \(state.maxOutboundBytes)")
            }
            for write in writes { state.outbound.append(write, separateWrite: split) }
            flush(&state)
        }
    }

    // MARK: - Loop side (all called with the state locked)

    /// Carries out what the close state machine asks for.
    private func perform(_ actions: [WebSocketCloseStateMachine.Action], _ state: inout State) {
        for action in actions {
            switch action {
            case .sendCloseFrame(let frame):
                state.outbound.append(
                    encodeFrame(fin: true, opcode: .close, payload: WebSocketFrame.closePayload(code: frame.code, reason: frame.reason)),
                    separateWrite: false)
            case .startCloseTimer:
                guard state.closeTimer == nil, let loop else { break }
                state.closeTimer = loop.schedule(after: closeTimeout) { [weak self] in
                    guard let self else { return }
                    self.withState { state in
                        state.closeTimer = nil
                        self.perform(state.close.closeTimerFired(), &state)
                    }
                }
            case .cancelCloseTimer:
                if let timer = state.closeTimer {
                    loop?.cancel(timer)
                    state.closeTimer = nil
                }
            case .shutDownWriteSide:
                switch state.link {
                case .socket(let fd): Socket.shutdownWrite(fd)
                case .memory(let peer): if let connection = peer.connection { state.deferred.append(.endOfStream(connection)) }
                case .closed: break
                }
            case .closeConnection(let info, let reset):
                finish(&state, info, reset: reset)
            }
        }
    }

    private func consume(_ state: inout State, _ bytes: UnsafeRawBufferPointer) {
        guard !state.parser.isDone else { return }  // after a close frame or a violation
        var events: [WebSocketInboundEvent] = []
        state.parser.parse(bytes, into: &events)
        for event in events {
            switch event {
            case .message(let message, let frames):
                guard state.close.deliversMessages else { continue }
                let received = WebSocketReceivedMessage(message, frameCount: frames)
                if let consumer = state.inbound.deliver(received) { state.deferred.append(.message(consumer, received)) }
                if state.inbound.byteCount >= inboundHighWaterMark { state.readPaused = true }
            case .ping(let payload):
                if state.automaticPongs, state.close.canSendMessages {
                    state.outbound.append(encodeFrame(fin: true, opcode: .pong, payload: payload), separateWrite: false)
                }
            case .pong(let payload):
                resolvePings(&state, payload)
            case .close(let payload):
                perform(state.close.closeFrameReceived(payload: payload), &state)
            case .protocolViolation(let code, let reason):
                perform(state.close.protocolViolation(code: code, reason: reason), &state)
            }
        }
    }

    /// A pong answers the oldest ping with the same payload and every ping sent before it.
    private func resolvePings(_ state: inout State, _ payload: [UInt8]) {
        guard let index = state.pingWaiters.firstIndex(where: { $0.payload == payload }) else { return }
        let resolved = state.pingWaiters[...index]
        state.pingWaiters.removeFirst(index + 1)
        for waiter in resolved { state.deferred.append(.ping(waiter.continuation, failure: nil)) }
    }

    private func flush(_ state: inout State) {
        switch state.link {
        case .closed:
            return
        case .memory(let peer):
            let writes = state.outbound.takeAll()
            if let connection = peer.connection {
                if !writes.isEmpty { state.deferred.append(.deliver(connection, writes)) }
                perform(state.close.outboundDrained(), &state)
            }
        case .socket(let fd):
            switch writeOut(&state, fd) {
            case .drained:
                perform(state.close.outboundDrained(), &state)
            case .wouldBlock:
                break
            case .failed:
                perform(state.close.streamEnded(), &state)
                return
            }
            updateInterest(&state)
        }
    }

    /// Writes what is queued to the socket. Over TLS, every queued plaintext write is first
    /// encrypted into ciphertext segments of its own (so a split write stays split on the wire),
    /// and a close_notify precedes the half-close.
    private func writeOut(_ state: inout State, _ fd: Int32) -> OutboundQueue.WriteOutcome {
        guard let tls = state.tls else { return state.outbound.write(to: fd) }
        for segment in state.outbound.takeAllSegments() {
            let progress = segment.bytes.withUnsafeBytes { tls.write($0) }
            if case .failed = progress { return .failed(EPROTO) }
            state.ciphertext.append(tls.takeCiphertext(), separateWrite: segment.separate)
        }
        if state.close.isWriteShutdownDue {
            tls.shutdown()
            state.ciphertext.append(tls.takeCiphertext(), separateWrite: false)
        }
        return state.ciphertext.write(to: fd)
    }

    private func desiredInterest(_ state: State) -> IOInterest {
        var interest: IOInterest = []
        if !state.readPaused { interest.insert(.read) }
        if !state.outbound.isEmpty || !state.ciphertext.isEmpty { interest.insert(.write) }
        return interest
    }

    private func updateInterest(_ state: inout State) {
        guard case .socket = state.link, let loop, let registration else { return }
        let interest = desiredInterest(state)
        guard interest != state.interest else { return }
        state.interest = interest
        loop.setInterest(registration, interest)
    }

    private func readAvailable(_ state: inout State, scratch: UnsafeMutableRawBufferPointer, hangup: Bool) {
        var rounds = 0
        while case .socket(let fd) = state.link, !state.readPaused || hangup, rounds < 8 {
            let count = Socket.receive(fd, scratch)
            if count > 0 {
                if let tls = state.tls {
                    guard decrypt(&state, tls, UnsafeRawBufferPointer(rebasing: scratch[..<count]), scratch: scratch) else { return }
                } else {
                    consume(&state, UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                }
                flush(&state)
                rounds += 1
                if count < scratch.count { return }
            } else if count == 0 {
                perform(state.close.streamEnded(), &state)
                return
            } else {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return }
                perform(state.close.streamEnded(), &state)
                return
            }
        }
    }

    /// Feeds ciphertext to TLS and parses all the plaintext it yields. Everything is decrypted
    /// at once, even while reading is paused: plaintext left inside OpenSSL would never be
    /// announced by the poller. Returns `false` when the connection ended (TLS closed or failed).
    private func decrypt(_ state: inout State, _ tls: TLSSession, _ bytes: UnsafeRawBufferPointer,
                         scratch: UnsafeMutableRawBufferPointer) -> Bool {
        tls.feed(bytes)
        while state.isOpen {
            switch tls.read(into: scratch) {
            case .done(let count):
                if count == 0 { return true }
                consume(&state, UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            case .needsInput:
                // A read may have produced ciphertext of its own (a key update, a ticket).
                state.ciphertext.append(tls.takeCiphertext(), separateWrite: false)
                return true
            case .closed, .failed:
                // close_notify is the clean end of the byte stream, as a TCP FIN would be.
                perform(state.close.streamEnded(), &state)
                return false
            }
        }
        return false
    }

    /// Closes the socket (with a TCP reset when `reset`) and tells everyone waiting how the
    /// connection ended.
    private func finish(_ state: inout State, _ info: WebSocketCloseInfo, reset: Bool) {
        switch state.link {
        case .closed:
            return
        case .socket(let fd):
            if reset { Socket.setLingerZero(fd) }
            if let loop, let registration { loop.deregister(registration) }
            Socket.closeDescriptor(fd)
        case .memory(let peer):
            // The peer sees the end of the stream (EOF or reset), and the pair stops referencing
            // each other.
            if let connection = peer.take() { state.deferred.append(.endOfStream(connection)) }
        }
        state.link = .closed
        state.outbound.removeAll()
        state.ciphertext.removeAll()
        state.tls = nil
        for consumer in state.inbound.finish() { state.deferred.append(.message(consumer, nil)) }
        for waiter in state.closeWaiters { state.deferred.append(.closed(waiter, info)) }
        state.closeWaiters.removeAll()
        for waiter in state.pingWaiters { state.deferred.append(.ping(waiter.continuation, failure: .connectionClosed)) }
        state.pingWaiters.removeAll()
        onEnd?()
    }
}

extension WebSocketConnection: EventLoopHandler {
    func handleIO(_ readiness: IOReadiness, scratch: UnsafeMutableRawBufferPointer) {
        withState { state in
            guard state.isOpen else { return }
            if readiness.writable { flush(&state) }
            if readiness.readable || readiness.hangup { readAvailable(&state, scratch: scratch, hangup: readiness.hangup) }
        }
    }

    func handleLoopStop() {
        withState { state in
            guard case .socket(let fd) = state.link else { return }
            let actions = state.close.eventLoopStopping()
            var queuedClose = false
            for action in actions {
                // A close frame just queued is written best effort, once, before the socket closes.
                if case .closeConnection = action, queuedClose { _ = writeOut(&state, fd) }
                if case .sendCloseFrame = action { queuedClose = true }
                perform([action], &state)
            }
        }
    }
}

/// The received messages of a ``WebSocketConnection``, each turned into an `Element`; finishes
/// when the connection ends. See ``WebSocketInboundMessages`` and ``WebSocketReceivedMessages``.
public struct WebSocketMessageSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// The sequence never throws; it ends instead.
    public typealias Failure = Never

    let connection: WebSocketConnection
    let transform: @Sendable (WebSocketReceivedMessage) -> Element

    /// Iterates over the received messages.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let connection: WebSocketConnection
        let transform: @Sendable (WebSocketReceivedMessage) -> Element

        /// The next message, or `nil` when the connection has ended (or the task was cancelled).
        public mutating func next() async -> Element? { await connection.nextReceivedMessage().map(transform) }

        /// The next message, or `nil` when the connection has ended (or the task was cancelled).
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await connection.nextReceivedMessage().map(transform)
        }
    }

    /// Creates an iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(connection: connection, transform: transform) }
}

/// The received messages of a ``WebSocketConnection``; finishes when the connection ends.
public typealias WebSocketInboundMessages = WebSocketMessageSequence<WebSocketMessage>

/// The received messages of a ``WebSocketConnection`` with how they arrived; finishes when the
/// connection ends.
public typealias WebSocketReceivedMessages = WebSocketMessageSequence<WebSocketReceivedMessage>
