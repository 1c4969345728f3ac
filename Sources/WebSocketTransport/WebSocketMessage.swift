/// One complete (reassembled) WebSocket data message.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message (opcode 0x1); its payload was valid UTF-8 on the wire.
    case text(String)
    /// A binary message (opcode 0x2).
    case binary([UInt8])

    /// The payload as it travels on the wire (UTF-8 for text).
    public var payload: [UInt8] {
        switch self {
        case .text(let string): return Array(string.utf8)
        case .binary(let bytes): return bytes
        }
    }

    /// The payload size in bytes.
    public var byteCount: Int {
        switch self {
        case .text(let string): return string.utf8.count
        case .binary(let bytes): return bytes.count
        }
    }
}

/// A received message and how it arrived on the wire.
public struct WebSocketReceivedMessage: Sendable, Hashable {
    /// The reassembled message.
    public var message: WebSocketMessage
    /// How many WebSocket frames carried it: 1 when it was not fragmented, otherwise the first
    /// frame and its continuation frames (control frames in between are not counted).
    public var frameCount: Int

    /// Creates a description of a received message.
    public init(_ message: WebSocketMessage, frameCount: Int = 1) {
        self.message = message
        self.frameCount = frameCount
    }

    /// Whether the message arrived in more than one frame.
    public var isFragmented: Bool { frameCount > 1 }
}

/// A WebSocket close status code (RFC 6455 section 7.4).
///
/// Any 16-bit value can be represented, so application codes (3000-4999, e.g. the Gateway's
/// 4000 "tick timeout") work as well as the registered ones below.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The numeric status code.
    public var rawValue: UInt16

    /// Creates a close code from its numeric value.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Creates a close code from its numeric value.
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: normal closure.
    public static let normal = WebSocketCloseCode(1000)
    /// 1001: the endpoint is going away (server shutdown, page navigation).
    public static let goingAway = WebSocketCloseCode(1001)
    /// 1002: protocol error.
    public static let protocolError = WebSocketCloseCode(1002)
    /// 1003: a data type the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(1003)
    /// 1005: no status code was present in the close frame (never sent on the wire).
    public static let noStatus = WebSocketCloseCode(1005)
    /// 1006: the connection ended without a close frame (never sent on the wire).
    public static let abnormal = WebSocketCloseCode(1006)
    /// 1007: a message payload was inconsistent with its type (invalid UTF-8 in a text message).
    public static let invalidPayload = WebSocketCloseCode(1007)
    /// 1008: the message violated the endpoint's policy (also used for "slow consumer").
    public static let policyViolation = WebSocketCloseCode(1008)
    /// 1009: a message was too big to process.
    public static let messageTooBig = WebSocketCloseCode(1009)
    /// 1010: the client expected an extension the server did not negotiate.
    public static let mandatoryExtension = WebSocketCloseCode(1010)
    /// 1011: the server hit an unexpected condition.
    public static let internalError = WebSocketCloseCode(1011)
    /// 1012: the service is restarting.
    public static let serviceRestart = WebSocketCloseCode(1012)
    /// 1013: try again later.
    public static let tryAgainLater = WebSocketCloseCode(1013)

    /// Whether a peer may put this code in a close frame (RFC 6455 section 7.4 and the IANA
    /// registry): 1000-1003, 1007-1014 and the application range 3000-4999.
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// The numeric code, e.g. `1000`.
    public var description: String { String(rawValue) }
}

/// The content of one close frame: the status code (if present) and the reason text.
public struct WebSocketCloseFrame: Sendable, Hashable {
    /// The status code, or `nil` when the close frame had an empty body.
    public var code: WebSocketCloseCode?
    /// The reason text (at most 123 bytes of UTF-8 on the wire).
    public var reason: String

    /// Creates a close frame description.
    public init(code: WebSocketCloseCode?, reason: String = "") {
        self.code = code
        self.reason = reason
    }
}

/// How a connection ended, for transcripts and assertions.
public struct WebSocketCloseInfo: Sendable, Hashable, CustomStringConvertible {
    /// The close frame this side sent, if any.
    public var sent: WebSocketCloseFrame?
    /// The close frame received from the peer, if any.
    public var received: WebSocketCloseFrame?
    /// Whether this side started the closing (sent the first close frame, failed the connection
    /// on bad input, or aborted the TCP connection).
    public var initiatedLocally: Bool

    /// Creates a close description.
    public init(sent: WebSocketCloseFrame?, received: WebSocketCloseFrame?, initiatedLocally: Bool) {
        self.sent = sent
        self.received = received
        self.initiatedLocally = initiatedLocally
    }

    /// The code that describes the end of the connection:
    /// the code this side sent when it initiated the close; otherwise the code the peer sent
    /// (1005 ``WebSocketCloseCode/noStatus`` for an empty close frame); 1006
    /// ``WebSocketCloseCode/abnormal`` when no close frame explains the end (TCP reset, EOF,
    /// ``WebSocketConnection/abort()``).
    public var code: WebSocketCloseCode {
        if initiatedLocally, let sent { return sent.code ?? .noStatus }
        if let received { return received.code ?? .noStatus }
        return .abnormal
    }

    /// The reason belonging to ``code`` (empty for 1006).
    public var reason: String {
        if initiatedLocally, let sent { return sent.reason }
        if let received { return received.reason }
        return ""
    }

    /// Whether both close frames were exchanged (a clean close handshake).
    public var wasClean: Bool { sent != nil && received != nil }

    /// E.g. `1000 "bye" (local, clean)`.
    public var description: String {
        "\(code.rawValue) \"\(reason)\" (\(initiatedLocally ? "local" : "remote"), \(wasClean ? "clean" : "unclean"))"
    }
}
