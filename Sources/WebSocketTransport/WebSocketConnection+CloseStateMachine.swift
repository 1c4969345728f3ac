/// The closing handshake of one WebSocket connection (RFC 6455 sections 5.5.1, 7 and 8) as a
/// value: inputs in, actions out, no sockets, no clock.
///
/// ``WebSocketConnection`` feeds it what happens (a local close, a close frame from the peer,
/// the outbound queue running empty, the end of the byte stream, the close timer, a protocol
/// violation, an abort) and performs the actions it returns (queue a close frame, half-close,
/// start or cancel the close timer, close the connection and report how it ended). Socket and
/// in-memory connections run the same machine; an in-memory one is made with
/// `usesCloseTimer: false`.
///
/// States:
/// - `open`: no close frame in either direction.
/// - `closeSent`: this side's close frame is queued or written; the peer's has not come.
/// - `closeReceived`: the peer's close frame came and this side's close frame is queued (the
///   echo, or the frame it sent first); waiting for the outbound queue to run empty.
/// - `awaitingEOF`: nothing more is exchanged on the WebSocket level; the connection ends on
///   the end of the byte stream, the close timer or an I/O error. A server has half-closed
///   (or does so once its queue is empty); so does either side after a protocol violation.
/// - `closed`: ended; every input is ignored.
struct WebSocketCloseStateMachine: Sendable {
    /// What the connection must do.
    enum Action: Sendable, Hashable {
        /// Queue a close frame with this body (a `nil` code sends an empty body).
        case sendCloseFrame(WebSocketCloseFrame)
        /// Start the close timer (the closing handshake must end within the close timeout).
        case startCloseTimer
        /// Cancel the running close timer.
        case cancelCloseTimer
        /// Shut down the sending direction (TLS close_notify, then a TCP half-close; in memory,
        /// the peer sees the end of the stream): everything queued has been written.
        case shutDownWriteSide
        /// Close the connection (with a TCP reset when `reset`) and report `info` to everyone
        /// waiting for the end.
        case closeConnection(WebSocketCloseInfo, reset: Bool)
    }

    /// A close frame body the peer must not send: the connection fails with this code.
    struct Violation: Error, Sendable, Hashable {
        /// 1002 for a malformed body or an invalid code, 1007 for a reason that is not UTF-8.
        var code: WebSocketCloseCode
        /// The reason sent back.
        var reason: String
    }

    /// The longest close reason in UTF-8 bytes: a control frame carries at most 125 bytes, two
    /// of which are the status code (RFC 6455 section 5.5).
    static let maxReasonBytes = 123

    /// The close frames exchanged so far.
    private struct Exchange: Sendable, Hashable {
        var sent: WebSocketCloseFrame?
        var received: WebSocketCloseFrame?
        var initiatedLocally = false
        /// The sending direction is shut down once the outbound queue is empty.
        var shutdownDue = false
        /// The sending direction is shut down.
        var writeShut = false

        var info: WebSocketCloseInfo {
            WebSocketCloseInfo(sent: sent, received: received, initiatedLocally: initiatedLocally)
        }
    }

    private enum State: Sendable, Hashable {
        case open
        case closeSent(Exchange)
        case closeReceived(Exchange)
        case awaitingEOF(Exchange)
        case closed(WebSocketCloseInfo)
    }

    /// Whether this is the client end (it waits for the server to close TCP first).
    let isClient: Bool
    /// Whether a close timer bounds the closing handshake (socket connections).
    let usesCloseTimer: Bool
    private var state = State.open
    private var timerRunning = false

    /// Creates the machine of a connection that is open.
    init(isClient: Bool, usesCloseTimer: Bool) {
        self.isClient = isClient
        self.usesCloseTimer = usesCloseTimer
    }

    // MARK: - Queries

    /// Whether data messages, pings and automatic pongs may be sent (no close frame sent yet).
    var canSendMessages: Bool {
        if case .open = state { true } else { false }
    }

    /// Whether raw bytes may still be written (the sending direction is not shut down).
    var canSendRaw: Bool {
        switch state {
        case .open: true
        case .closeSent(let exchange), .closeReceived(let exchange), .awaitingEOF(let exchange): !exchange.writeShut
        case .closed: false
        }
    }

    /// Whether a received data message is delivered: until the peer's close frame (or a
    /// violation) ends the inbound direction.
    var deliversMessages: Bool {
        switch state {
        case .open, .closeSent: true
        case .closeReceived, .awaitingEOF, .closed: false
        }
    }

    /// Whether the sending direction is to be shut down once what is queued is written (TLS
    /// encrypts its close_notify behind the queued bytes).
    var isWriteShutdownDue: Bool {
        guard let exchange else { return false }
        return exchange.shutdownDue && !exchange.writeShut
    }

    /// How the connection ended; `nil` until it is closed.
    var closeInfo: WebSocketCloseInfo? {
        if case .closed(let info) = state { info } else { nil }
    }

    /// The state's name, for tests and logs.
    var stateName: String {
        switch state {
        case .open: "open"
        case .closeSent: "closeSent"
        case .closeReceived: "closeReceived"
        case .awaitingEOF: "awaitingEOF"
        case .closed: "closed"
        }
    }

    private var exchange: Exchange? {
        switch state {
        case .open, .closed: nil
        case .closeSent(let exchange), .closeReceived(let exchange), .awaitingEOF(let exchange): exchange
        }
    }

    // MARK: - Inputs

    /// This side starts the closing handshake (``WebSocketConnection/close(code:reason:)``, a
    /// full outbound queue). Only the first close counts; later ones change nothing.
    /// - Parameters:
    ///   - code: the status code; `nil` or 1005 ``WebSocketCloseCode/noStatus`` sends an empty body.
    ///   - reason: cut to ``maxReasonBytes`` on a character boundary.
    mutating func closeRequested(code: WebSocketCloseCode?, reason: String) -> [Action] {
        guard case .open = state else { return [] }
        let frame = Self.outgoingFrame(code: code, reason: reason)
        state = .closeSent(Exchange(sent: frame, initiatedLocally: true))
        return [.sendCloseFrame(frame)] + startTimer()
    }

    /// A close frame came from the peer, with its (unmasked) body.
    ///
    /// In `open` the frame is echoed with the same code and reason (an empty body with an empty
    /// one); in `closeSent` it completes the handshake. A server then half-closes once its queue
    /// is empty, a client waits for that. An invalid body fails the connection (see
    /// ``decodeClosePayload(_:)``).
    mutating func closeFrameReceived(payload: [UInt8]) -> [Action] {
        let frame: WebSocketCloseFrame
        switch Self.decodeClosePayload(payload) {
        case .success(let decoded): frame = decoded
        case .failure(let violation): return protocolViolation(code: violation.code, reason: violation.reason)
        }
        switch state {
        case .open:
            let echo = WebSocketCloseFrame(code: frame.code, reason: frame.reason)
            state = .closeReceived(Exchange(sent: echo, received: frame, shutdownDue: !isClient))
            return [.sendCloseFrame(echo)] + startTimer()
        case .closeSent(var exchange):
            exchange.received = frame
            exchange.shutdownDue = !isClient
            state = .closeReceived(exchange)
            return startTimer()
        case .closeReceived, .awaitingEOF, .closed:
            // Nothing follows a close frame; a second one is ignored.
            return []
        }
    }

    /// The peer broke the protocol: send a close frame with `code` unless one was sent, then
    /// half-close once it is written (either role) and wait for the end of the stream.
    mutating func protocolViolation(code: WebSocketCloseCode, reason: String) -> [Action] {
        switch state {
        case .open:
            let frame = Self.outgoingFrame(code: code, reason: reason)
            state = .awaitingEOF(Exchange(sent: frame, initiatedLocally: true, shutdownDue: true))
            return [.sendCloseFrame(frame)] + startTimer()
        case .closeSent(var exchange), .closeReceived(var exchange), .awaitingEOF(var exchange):
            exchange.shutdownDue = true
            state = .awaitingEOF(exchange)
            return []
        case .closed:
            return []
        }
    }

    /// Everything queued has been written (to the socket, or handed to the in-memory peer).
    mutating func outboundDrained() -> [Action] {
        switch state {
        case .closeReceived(var exchange), .awaitingEOF(var exchange):
            var actions: [Action] = []
            if exchange.shutdownDue, !exchange.writeShut {
                exchange.writeShut = true
                actions.append(.shutDownWriteSide)
            }
            state = .awaitingEOF(exchange)
            return actions
        case .open, .closeSent, .closed:
            return []
        }
    }

    /// The byte stream ended: EOF (also before any close frame), a reset, a read or write
    /// error, the end of TLS.
    mutating func streamEnded() -> [Action] { finish(reset: false, initiatedLocally: false) }

    /// The close timer fired: the handshake took too long, the connection is dropped.
    mutating func closeTimerFired() -> [Action] {
        timerRunning = false
        return finish(reset: false, initiatedLocally: false)
    }

    /// ``WebSocketConnection/abort()``: a TCP reset now. Before any close frame was sent this
    /// side counts as the initiator.
    mutating func abortRequested() -> [Action] { finish(reset: true, initiatedLocally: true) }

    /// The event loop stops: an open connection gets 1001 "server shutting down" (written best
    /// effort), then every connection is closed.
    mutating func eventLoopStopping() -> [Action] {
        guard case .open = state else { return finish(reset: false, initiatedLocally: false) }
        let frame = Self.outgoingFrame(code: .goingAway, reason: "server shutting down")
        state = .closeSent(Exchange(sent: frame, initiatedLocally: true))
        return [.sendCloseFrame(frame)] + finish(reset: false, initiatedLocally: false)
    }

    // MARK: - Helpers

    private mutating func startTimer() -> [Action] {
        guard usesCloseTimer, !timerRunning else { return [] }
        timerRunning = true
        return [.startCloseTimer]
    }

    /// Ends the connection. `initiatedLocally` marks this side as the initiator when no close
    /// frame was sent before.
    private mutating func finish(reset: Bool, initiatedLocally: Bool) -> [Action] {
        var exchange: Exchange
        switch state {
        case .closed: return []
        case .open: exchange = Exchange()
        case .closeSent(let current), .closeReceived(let current), .awaitingEOF(let current): exchange = current
        }
        if exchange.sent == nil, initiatedLocally { exchange.initiatedLocally = true }
        let info = exchange.info
        state = .closed(info)
        var actions: [Action] = []
        if timerRunning {
            timerRunning = false
            actions.append(.cancelCloseTimer)
        }
        actions.append(.closeConnection(info, reset: reset))
        return actions
    }

    /// The frame this side sends: 1005 means an empty body, the reason is cut to fit.
    static func outgoingFrame(code: WebSocketCloseCode?, reason: String) -> WebSocketCloseFrame {
        guard let code, code != .noStatus else { return WebSocketCloseFrame(code: nil) }
        return WebSocketCloseFrame(code: code, reason: trimmedReason(reason))
    }

    /// Reads a close frame body (RFC 6455 section 5.5.1): empty (no code, reported as 1005),
    /// or a 2-byte code valid on the wire and a UTF-8 reason.
    /// - Returns: the frame, or the violation to fail the connection with: 1002 for a 1-byte
    ///   body or a code that may not be sent (1005, 1006, 999, 2000...), 1007 for a reason that
    ///   is not valid UTF-8.
    static func decodeClosePayload(_ payload: [UInt8]) -> Result<WebSocketCloseFrame, Violation> {
        if payload.isEmpty { return .success(WebSocketCloseFrame(code: nil)) }
        guard payload.count >= 2 else {
            return .failure(Violation(code: .protocolError, reason: "close frame with a 1-byte payload"))
        }
        let code = WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnTheWire else {
            return .failure(Violation(code: .protocolError, reason: "invalid close code \(code.rawValue)"))
        }
        let reason = Array(payload[2...])
        guard UTF8Validator.isValid(reason) else {
            return .failure(Violation(code: .invalidPayload, reason: "invalid UTF-8 in close reason"))
        }
        return .success(WebSocketCloseFrame(code: code, reason: String(decoding: reason, as: UTF8.self)))
    }

    /// `reason` cut to at most ``maxReasonBytes`` UTF-8 bytes on a code point boundary, so the
    /// reason stays valid UTF-8 (a peer answers a broken one with 1007).
    static func trimmedReason(_ reason: String) -> String {
        guard reason.utf8.count > maxReasonBytes else { return reason }
        var scalars = String.UnicodeScalarView()
        var used = 0
        for scalar in reason.unicodeScalars {
            let size = UTF8.width(scalar)
            if used + size > maxReasonBytes { break }
            scalars.append(scalar)
            used += size
        }
        return String(scalars)
    }
}
