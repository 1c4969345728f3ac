/// An error thrown by the WebSocket transport.
///
/// Compare with the static members (`error == .connectionClosed`); equality looks at the
/// ``kind`` only, the ``detail`` text is for people.
public struct WebSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of a ``WebSocketError``.
    public struct Kind: RawRepresentable, Sendable, Hashable {
        /// A stable name of the kind.
        public var rawValue: String
        /// Creates a kind from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
    }

    /// What went wrong.
    public var kind: Kind
    /// Details for people (the system error, the HTTP status line, ...).
    public var detail: String

    /// Creates an error.
    public init(_ kind: Kind, detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    /// The URL is not a valid `ws://host[:port][/path]` URL.
    public static let invalidURL = WebSocketError(Kind(rawValue: "invalidURL"))
    /// A host name could not be resolved or an address could not be used.
    public static let addressResolutionFailed = WebSocketError(Kind(rawValue: "addressResolutionFailed"))
    /// A socket call (socket, bind, listen, connect) failed.
    public static let socketFailed = WebSocketError(Kind(rawValue: "socketFailed"))
    /// The TCP connection was refused or failed while connecting.
    public static let connectionFailed = WebSocketError(Kind(rawValue: "connectionFailed"))
    /// The server's HTTP response was not a valid WebSocket upgrade.
    public static let handshakeFailed = WebSocketError(Kind(rawValue: "handshakeFailed"))
    /// The opening handshake did not finish within the configured timeout.
    public static let handshakeTimedOut = WebSocketError(Kind(rawValue: "handshakeTimedOut"))
    /// The connection is closing or closed; nothing more can be sent.
    public static let connectionClosed = WebSocketError(Kind(rawValue: "connectionClosed"))
    /// The outbound buffer limit was exceeded; the connection is being closed with 1008
    /// "slow consumer".
    public static let outboundBufferFull = WebSocketError(Kind(rawValue: "outboundBufferFull"))
    /// An argument was out of range (e.g. a ping payload over 125 bytes).
    public static let invalidArgument = WebSocketError(Kind(rawValue: "invalidArgument"))
    /// The TLS handshake failed, the server's certificate was not trusted (a fingerprint that
    /// differs from the pinned one, a failed CA verification), or TLS material is unusable.
    public static let tlsFailed = WebSocketError(Kind(rawValue: "tlsFailed"),
                                                 detail: "")
    /// TLS was asked for on a platform built without OpenSSL.
    public static let tlsUnavailable = WebSocketError(
        Kind(rawValue: "tlsUnavailable"), detail: "TLS needs OpenSSL; not available on this platform")
    /// The event loop has shut down.
    public static let eventLoopShutDown = WebSocketError(Kind(rawValue: "eventLoopShutDown"))

    /// A copy of this error with a detail text.
    func with(detail: String) -> WebSocketError { WebSocketError(kind, detail: detail) }

    /// Equality by kind.
    public static func == (lhs: WebSocketError, rhs: WebSocketError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// E.g. `connectionFailed: connect(): Connection refused`.
    public var description: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue): \(detail)" }
}
