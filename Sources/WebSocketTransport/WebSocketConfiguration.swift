/// Limits and timeouts of a WebSocket endpoint. The defaults match the OpenClaw Gateway.
///
/// A server applies its configuration to every accepted connection; a client to the one
/// connection it opens. ``WebSocketConnection/setMaxMessageSize(_:closeReason:)`` changes the
/// message limit of a single connection at runtime.
public struct WebSocketConfiguration: Sendable, Hashable {
    /// The largest inbound message (after reassembly of fragments) in bytes. A larger message
    /// fails the connection with close code 1009 as soon as its frame header announces it.
    /// Default 25 MiB.
    public var maxMessageSize: Int
    /// The close reason sent with 1009 when ``maxMessageSize`` is exceeded.
    public var messageTooBigReason: String
    /// The most bytes queued for sending on one connection. A send that would exceed it
    /// throws ``WebSocketError/outboundBufferFull`` and closes the connection with 1008
    /// "slow consumer". Default 50 MiB.
    public var maxOutboundBufferBytes: Int
    /// Once the received but not yet consumed messages of a connection reach this many bytes,
    /// the connection stops reading from its socket until the consumer catches up (TCP
    /// backpressure). Default 32 MiB.
    public var inboundBufferHighWaterMark: Int
    /// The largest HTTP upgrade request (server) or response (client) head in bytes. Default 16 KiB.
    public var maxHandshakeBytes: Int
    /// The largest `Content-Length` body of a plain HTTP request a server with an
    /// ``HTTPResponder`` accepts (larger gets 413; the request head is limited by
    /// ``maxHandshakeBytes``, larger gets 431). Default 1 MiB.
    public var maxHTTPBodyBytes: Int
    /// How long the opening handshake may take (connect + HTTP upgrade). A server also closes
    /// an HTTP connection that stays this long without a complete request. Default 10 s.
    public var handshakeTimeout: Duration
    /// How long the closing handshake may take before the TCP connection is dropped. Default 5 s.
    public var closeTimeout: Duration
    /// Whether received pings are answered automatically with a pong (RFC 6455 requires it;
    /// turning it off is a fault). Default `true`.
    public var automaticPongs: Bool

    /// How a client trusts the server of a `wss://` URL (a pinned certificate fingerprint or a
    /// CA file); `nil` verifies against the system's trust store. Ignored for `ws://` and by
    /// servers (see ``WebSocketServer/start(host:port:configuration:tls:)``).
    public var tls: WebSocketTLSClientConfiguration?

    /// The I/O multiplexer; `epoll` on Linux, `poll` elsewhere. Tests force `poll` on Linux so
    /// that the code path of Apple platforms runs there too.
    var poller: PollerKind
    /// The shared client loop (and its thread name) for a client connection: clients with
    /// different names share different loops, so a test can own one.
    var clientLoopName: String

    /// Creates a configuration; every parameter has the Gateway default.
    public init(
        maxMessageSize: Int = 25 * 1024 * 1024,
        messageTooBigReason: String = "message too big",
        maxOutboundBufferBytes: Int = 50 * 1024 * 1024,
        inboundBufferHighWaterMark: Int = 32 * 1024 * 1024,
        maxHandshakeBytes: Int = 16 * 1024,
        maxHTTPBodyBytes: Int = 1024 * 1024,
        handshakeTimeout: Duration = .seconds(10),
        closeTimeout: Duration = .seconds(5),
        automaticPongs: Bool = true,
        tls: WebSocketTLSClientConfiguration? = nil
    ) {
        self.maxMessageSize = maxMessageSize
        self.messageTooBigReason = messageTooBigReason
        self.maxOutboundBufferBytes = maxOutboundBufferBytes
        self.inboundBufferHighWaterMark = inboundBufferHighWaterMark
        self.maxHandshakeBytes = maxHandshakeBytes
        self.maxHTTPBodyBytes = maxHTTPBodyBytes
        self.handshakeTimeout = handshakeTimeout
        self.closeTimeout = closeTimeout
        self.automaticPongs = automaticPongs
        self.tls = tls
        self.poller = .platformDefault
        self.clientLoopName = "WebSocketClient"
    }
}

/// The I/O multiplexer behind an event loop. `allCases` are the ones this platform has.
enum PollerKind: Sendable, Hashable, CaseIterable {
    #if canImport(CEpoll)
    /// Linux `epoll` (the `CEpoll` shim exists on Linux only).
    case epoll
    #endif
    /// POSIX `poll`, portable (the only one on Apple platforms; tests use it on Linux too).
    case poll

    static var platformDefault: PollerKind {
        #if canImport(CEpoll)
        return .epoll
        #else
        return .poll
        #endif
    }
}
