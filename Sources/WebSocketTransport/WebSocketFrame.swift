/// A WebSocket frame opcode (RFC 6455 section 5.2). Any 4-bit value can be represented so that
/// malformed frames can be built on purpose.
public struct WebSocketOpcode: RawRepresentable, Sendable, Hashable {
    /// The 4-bit opcode value.
    public var rawValue: UInt8
    /// Creates an opcode; only the low 4 bits are used on the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    /// 0x0: continuation of a fragmented message.
    public static let continuation = WebSocketOpcode(rawValue: 0x0)
    /// 0x1: text message (first fragment).
    public static let text = WebSocketOpcode(rawValue: 0x1)
    /// 0x2: binary message (first fragment).
    public static let binary = WebSocketOpcode(rawValue: 0x2)
    /// 0x8: close.
    public static let close = WebSocketOpcode(rawValue: 0x8)
    /// 0x9: ping.
    public static let ping = WebSocketOpcode(rawValue: 0x9)
    /// 0xA: pong.
    public static let pong = WebSocketOpcode(rawValue: 0xA)

    /// Whether this is a control opcode (0x8-0xF).
    public var isControl: Bool { rawValue & 0x08 != 0 }
    /// Whether RFC 6455 defines this opcode.
    public var isKnown: Bool { [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(rawValue) }
}

/// One WebSocket frame, as a value. ``encoded(maskingKey:)`` turns it into wire bytes; use it
/// with ``WebSocketConnection/sendRaw(_:fault:)`` to put any frame (valid or not) on the wire.
public struct WebSocketFrame: Sendable, Hashable {
    /// The FIN bit: the last fragment of a message.
    public var fin: Bool
    /// The three reserved bits RSV1-RSV3 as a value 0...7 (RSV1 = 4). Non-zero is a protocol
    /// error without a negotiated extension.
    public var reservedBits: UInt8
    /// The opcode.
    public var opcode: WebSocketOpcode
    /// The unmasked payload.
    public var payload: [UInt8]

    /// Creates a frame.
    public init(fin: Bool = true, reservedBits: UInt8 = 0, opcode: WebSocketOpcode, payload: [UInt8] = []) {
        self.fin = fin
        self.reservedBits = reservedBits & 0x07
        self.opcode = opcode
        self.payload = payload
    }

    /// A close frame with a status code and a reason (the reason is sent as given, even when
    /// longer than the 123 bytes RFC 6455 allows).
    public static func close(code: WebSocketCloseCode?, reason: String = "") -> WebSocketFrame {
        WebSocketFrame(opcode: .close, payload: closePayload(code: code, reason: reason))
    }

    /// The body of a close frame: the big-endian code, then the reason; empty without a code.
    static func closePayload(code: WebSocketCloseCode?, reason: String) -> [UInt8] {
        guard let code else { return [] }
        return [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)] + Array(reason.utf8)
    }

    /// The wire bytes of this frame: header with the shortest length encoding, then the payload,
    /// masked with `maskingKey` when given (clients must mask, servers must not).
    ///
    /// - Parameter maskingKey: 4 bytes, or `nil` for an unmasked frame. Other sizes are ignored
    ///   (the frame is sent unmasked).
    /// - Returns: the encoded frame.
    public func encoded(maskingKey: [UInt8]? = nil) -> [UInt8] {
        let key = maskingKey?.count == 4 ? maskingKey : nil
        var bytes: [UInt8] = []
        bytes.reserveCapacity(WebSocketFrame.maxHeaderSize + payload.count)
        WebSocketFrame.appendHeader(
            to: &bytes, fin: fin, reservedBits: reservedBits, opcode: opcode,
            payloadLength: payload.count, maskingKey: key)
        let payloadStart = bytes.count
        bytes.append(contentsOf: payload)
        if let key {
            bytes.withUnsafeMutableBytes { raw in
                _ = WebSocketMasking.apply(
                    key: WebSocketMasking.key(key), offset: 0,
                    to: UnsafeMutableRawBufferPointer(rebasing: raw[payloadStart...]))
            }
        }
        return bytes
    }

    /// The longest possible frame header: 2 + 8 (64-bit length) + 4 (masking key).
    static let maxHeaderSize = 14

    /// Appends a frame header with the minimal length encoding.
    static func appendHeader(
        to bytes: inout [UInt8], fin: Bool, reservedBits: UInt8, opcode: WebSocketOpcode,
        payloadLength: Int, maskingKey: [UInt8]?
    ) {
        bytes.append((fin ? 0x80 : 0) | ((reservedBits & 0x07) << 4) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        if payloadLength < 126 {
            bytes.append(maskBit | UInt8(payloadLength))
        } else if payloadLength <= 0xFFFF {
            bytes.append(maskBit | 126)
            bytes.append(UInt8(payloadLength >> 8))
            bytes.append(UInt8(payloadLength & 0xFF))
        } else {
            bytes.append(maskBit | 127)
            let length = UInt64(payloadLength)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
        if let maskingKey { bytes.append(contentsOf: maskingKey) }
    }
}

/// The XOR masking of RFC 6455 section 5.3.
enum WebSocketMasking {
    /// Packs 4 key bytes into a word in memory order.
    static func key(_ bytes: [UInt8]) -> UInt32 {
        var word: UInt32 = 0
        withUnsafeMutableBytes(of: &word) { raw in
            for index in 0..<4 { raw[index] = index < bytes.count ? bytes[index] : 0 }
        }
        return word
    }

    /// XORs `buffer` in place with the key, starting at key position `offset` (0...3), so a
    /// payload can be unmasked in pieces. Returns the key position after the buffer.
    @discardableResult
    static func apply(key: UInt32, offset: Int, to buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard buffer.count > 0, let base = buffer.baseAddress else { return offset }
        var keyBytes = (UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        withUnsafeMutableBytes(of: &keyBytes) { raw in
            withUnsafeBytes(of: key) { source in
                for index in 0..<4 { raw[index] = source[(index + offset) & 3] }
            }
        }
        // The key rotated to `offset`, replicated into a 64-bit word for the bulk of the payload.
        var rotated: UInt32 = 0
        withUnsafeMutableBytes(of: &rotated) { raw in
            withUnsafeBytes(of: keyBytes) { source in raw.copyMemory(from: source) }
        }
        let wide = UInt64(rotated) | (UInt64(rotated) << 32)
        let count = buffer.count
        var index = 0
        while index + 8 <= count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            base.storeBytes(of: word ^ wide, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        withUnsafeBytes(of: keyBytes) { keyRaw in
            var keyIndex = 0
            while index < count {
                buffer[index] ^= keyRaw[keyIndex]
                keyIndex = (keyIndex + 1) & 3
                index += 1
            }
        }
        return (offset + count) & 3
    }
}
