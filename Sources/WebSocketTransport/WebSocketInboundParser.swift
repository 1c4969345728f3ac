/// What the inbound parser found in the received bytes.
enum WebSocketInboundEvent: Sendable, Hashable {
    /// A complete data message and the number of WebSocket frames it arrived in (1 when it was
    /// not fragmented).
    case message(WebSocketMessage, frames: Int = 1)
    /// A ping with its payload (to be answered with a pong).
    case ping([UInt8])
    /// A pong with its payload.
    case pong([UInt8])
    /// A close frame with its unmasked body (not yet validated); the parser ignores all bytes
    /// after it.
    case close([UInt8])
    /// The peer broke the protocol; the connection must be failed with this code and reason.
    /// The parser ignores all bytes after it.
    case protocolViolation(WebSocketCloseCode, reason: String)
}

/// The receiving half of RFC 6455 as a pure state machine: bytes in, events out, no sockets.
///
/// It owns every inbound framing rule: header validation, masking direction, lengths,
/// reassembly of fragments with interleaved control frames, UTF-8 validation of text messages
/// (failing fast, also inside a code point split across fragments), and the
/// message size limit (checked against each frame header, before any payload is buffered).
struct WebSocketInboundParser: Sendable {
    /// Which side of the connection parses: a server requires masked frames, a client
    /// requires unmasked ones.
    enum Role: Sendable, Hashable {
        /// Parses frames sent by a client (must be masked).
        case server
        /// Parses frames sent by a server (must not be masked).
        case client
    }

    private enum Phase: Sendable, Hashable {
        case header
        case payload
        case done
    }

    let role: Role
    /// The largest message (sum of its fragments) accepted; larger fails with 1009.
    var maxMessageSize: Int
    /// The reason sent with 1009.
    var messageTooBigReason: String

    private var phase = Phase.header
    private var header: [UInt8] = []
    // The frame being received.
    private var fin = false
    private var opcode = WebSocketOpcode.continuation
    private var maskingKey: UInt32?
    private var maskOffset = 0
    private var remaining: UInt64 = 0
    // The data message being reassembled.
    private var messageOpcode: WebSocketOpcode?
    private var messageFrames = 0
    private var message: [UInt8] = []
    private var utf8 = UTF8Validator()
    // The control frame payload being received.
    private var control: [UInt8] = []

    /// Creates a parser.
    init(role: Role, maxMessageSize: Int, messageTooBigReason: String = "message too big") {
        self.role = role
        self.maxMessageSize = maxMessageSize
        self.messageTooBigReason = messageTooBigReason
        header.reserveCapacity(WebSocketFrame.maxHeaderSize)
    }

    /// Whether the parser has stopped (after a close frame or a protocol violation).
    var isDone: Bool { phase == .done }

    /// Parses `input`, appending what it completes to `events`.
    mutating func parse(_ input: UnsafeRawBufferPointer, into events: inout [WebSocketInboundEvent]) {
        var index = 0
        let count = input.count
        while index < count {
            switch phase {
            case .done:
                return
            case .header:
                index = parseHeader(input, from: index, into: &events)
            case .payload:
                let take = Int(min(remaining, UInt64(count - index)))
                consumePayload(UnsafeRawBufferPointer(rebasing: input[index..<(index + take)]), into: &events)
                index += take
                if remaining == 0, phase == .payload { completeFrame(into: &events) }
            }
        }
    }

    /// Parses `bytes` and returns the events (for tests and small inputs).
    mutating func parse(_ bytes: [UInt8]) -> [WebSocketInboundEvent] {
        var events: [WebSocketInboundEvent] = []
        bytes.withUnsafeBytes { parse($0, into: &events) }
        return events
    }

    // MARK: - Header

    /// Accumulates header bytes; returns the new input index.
    private mutating func parseHeader(
        _ input: UnsafeRawBufferPointer, from start: Int, into events: inout [WebSocketInboundEvent]
    ) -> Int {
        var index = start
        while header.count < 2, index < input.count {
            header.append(input[index])
            index += 1
        }
        guard header.count >= 2 else { return index }
        if let (code, reason) = violationInFirstBytes(header[0], header[1]) {
            fail(code, reason, into: &events)
            return index
        }
        let lengthCode = header[1] & 0x7F
        let extendedLength = lengthCode == 126 ? 2 : (lengthCode == 127 ? 8 : 0)
        let masked = header[1] & 0x80 != 0
        let needed = 2 + extendedLength + (masked ? 4 : 0)
        while header.count < needed, index < input.count {
            header.append(input[index])
            index += 1
        }
        guard header.count >= needed else { return index }

        var length = UInt64(lengthCode)
        if extendedLength > 0 {
            length = 0
            for position in 2..<(2 + extendedLength) { length = (length << 8) | UInt64(header[position]) }
            if extendedLength == 8, length & (1 << 63) != 0 {
                fail(.protocolError, "invalid payload length", into: &events)
                return index
            }
        }
        if masked {
            let keyStart = 2 + extendedLength
            maskingKey = WebSocketMasking.key(Array(header[keyStart..<(keyStart + 4)]))
        } else {
            maskingKey = nil
        }
        fin = header[0] & 0x80 != 0
        opcode = WebSocketOpcode(rawValue: header[0] & 0x0F)
        maskOffset = 0
        remaining = length
        header.removeAll(keepingCapacity: true)

        if opcode.isControl {
            control.removeAll(keepingCapacity: true)
        } else {
            if opcode != .continuation {
                messageOpcode = opcode
                message = []
                messageFrames = 0
                utf8 = UTF8Validator()
            }
            messageFrames += 1
            let limit = UInt64(max(0, maxMessageSize))
            if UInt64(message.count) > limit || length > limit - UInt64(message.count) {
                fail(.messageTooBig, messageTooBigReason, into: &events)
                return index
            }
            // Reserve for what is announced, capped: a header alone must not allocate much.
            message.reserveCapacity(message.count + Int(min(length, 1 << 20)))
        }
        phase = .payload
        if remaining == 0 { completeFrame(into: &events) }
        return index
    }

    /// The rules that the first two header bytes alone decide.
    private func violationInFirstBytes(_ first: UInt8, _ second: UInt8) -> (WebSocketCloseCode, String)? {
        if first & 0x70 != 0 { return (.protocolError, "reserved bits set") }
        let opcode = WebSocketOpcode(rawValue: first & 0x0F)
        guard opcode.isKnown else { return (.protocolError, "unknown opcode \(opcode.rawValue)") }
        let masked = second & 0x80 != 0
        switch role {
        case .server where !masked: return (.protocolError, "unmasked client frame")
        case .client where masked: return (.protocolError, "masked server frame")
        default: break
        }
        if opcode.isControl {
            if first & 0x80 == 0 { return (.protocolError, "fragmented control frame") }
            if second & 0x7F > 125 { return (.protocolError, "control frame payload too long") }
        } else if opcode == .continuation {
            if messageOpcode == nil { return (.protocolError, "unexpected continuation frame") }
        } else if messageOpcode != nil {
            return (.protocolError, "expected continuation frame")
        }
        return nil
    }

    // MARK: - Payload

    private mutating func consumePayload(_ chunk: UnsafeRawBufferPointer, into events: inout [WebSocketInboundEvent]) {
        remaining -= UInt64(chunk.count)
        if opcode.isControl {
            let start = control.count
            control.append(contentsOf: chunk)
            maskOffset = Self.unmask(&control, from: start, key: maskingKey, offset: maskOffset)
            return
        }
        let start = message.count
        message.append(contentsOf: chunk)
        maskOffset = Self.unmask(&message, from: start, key: maskingKey, offset: maskOffset)
        if messageOpcode == .text {
            var validator = utf8
            let valid = message.withUnsafeBytes { raw in
                validator.consume(UnsafeRawBufferPointer(rebasing: raw[start...]))
            }
            utf8 = validator
            if !valid { fail(.invalidPayload, "invalid UTF-8 in text message", into: &events) }
        }
    }

    /// Unmasks `bytes[start...]`; returns the key position after them.
    private static func unmask(_ bytes: inout [UInt8], from start: Int, key: UInt32?, offset: Int) -> Int {
        guard let key else { return offset }
        return bytes.withUnsafeMutableBytes { raw in
            WebSocketMasking.apply(key: key, offset: offset, to: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
        }
    }

    private mutating func completeFrame(into events: inout [WebSocketInboundEvent]) {
        phase = .header
        switch opcode {
        case .ping:
            events.append(.ping(control))
        case .pong:
            events.append(.pong(control))
        case .close:
            completeClose(into: &events)
        default:
            guard fin else { return }
            if messageOpcode == .text {
                guard utf8.isAtBoundary else {
                    fail(.invalidPayload, "invalid UTF-8 in text message", into: &events)
                    return
                }
                events.append(.message(.text(String(decoding: message, as: UTF8.self)), frames: messageFrames))
            } else {
                events.append(.message(.binary(message), frames: messageFrames))
            }
            message = []
            messageOpcode = nil
        }
    }

    /// A close frame ends the inbound stream; its body is judged by the close state machine
    /// (``WebSocketCloseStateMachine/decodeClosePayload(_:)``).
    private mutating func completeClose(into events: inout [WebSocketInboundEvent]) {
        events.append(.close(control))
        phase = .done
    }

    private mutating func fail(_ code: WebSocketCloseCode, _ reason: String, into events: inout [WebSocketInboundEvent]) {
        events.append(.protocolViolation(code, reason: reason))
        phase = .done
        message = []
        control = []
        header = []
    }
}
