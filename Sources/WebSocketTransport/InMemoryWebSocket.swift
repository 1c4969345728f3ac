import Locking

/// The other end of an in-memory connection, held until either end finishes.
final class MemoryPeer: Sendable {
    // The peer, or `nil` once the pair came apart; taking it breaks the reference cycle.
    private let peer = Locked<WebSocketConnection?>(nil)

    init() {}

    /// The peer while the pair is joined.
    var connection: WebSocketConnection? { peer.withLock { $0 } }

    func join(_ connection: WebSocketConnection) { peer.withLock { $0 = connection } }

    /// Takes the peer out (once).
    func take() -> WebSocketConnection? {
        peer.withLock { peer in
            defer { peer = nil }
            return peer
        }
    }
}

/// WebSocket connections joined in memory: both ends are ordinary ``WebSocketConnection``s with
/// the whole framing, parser, close handshake and fault hooks, but the bytes go straight to the
/// peer instead of through a socket.
///
/// This is what makes a conformance run with an in-process client a deterministic simulation:
/// no event-loop thread, no kernel buffers, nothing that happens at a time of its own.
public enum InMemoryWebSocket {
    /// An address for one end of a pair.
    public struct Endpoint: Sendable, Hashable {
        /// The numeric address the other end reports as ``WebSocketConnection/remoteAddress``.
        public var address: String
        /// The port it reports as ``WebSocketConnection/remotePort``.
        public var port: Int

        /// Creates an endpoint.
        public init(address: String = "127.0.0.1", port: Int) {
            self.address = address
            self.port = port
        }
    }

    /// Creates a joined pair, as if the client had connected and the opening handshake had
    /// passed.
    /// - Parameters:
    ///   - path: the request target the server end reports (``WebSocketConnection/requestPath``).
    ///   - headers: the request header fields the client sent.
    ///   - client: the client end's address (what the server sees as the remote address).
    ///   - server: the server end's address.
    ///   - clientConfiguration: limits of the client end.
    ///   - serverConfiguration: limits of the server end.
    /// - Returns: both ends.
    public static func pair(
        path: String = "/", headers: WebSocketHTTPHeaders = [:],
        client: Endpoint = Endpoint(port: 40000), server: Endpoint = Endpoint(port: 18789),
        clientConfiguration: WebSocketConfiguration = .init(), serverConfiguration: WebSocketConfiguration = .init()
    ) -> (client: WebSocketConnection, server: WebSocketConnection) {
        let toServer = MemoryPeer()
        let toClient = MemoryPeer()
        let clientEnd = WebSocketConnection(
            memoryPeer: toServer, isClient: true, configuration: clientConfiguration,
            remoteAddress: server.address, remotePort: server.port, requestPath: path, requestHeaders: headers)
        let serverEnd = WebSocketConnection(
            memoryPeer: toClient, isClient: false, configuration: serverConfiguration,
            remoteAddress: client.address, remotePort: client.port, requestPath: path, requestHeaders: headers)
        toServer.join(serverEnd)
        toClient.join(clientEnd)
        return (clientEnd, serverEnd)
    }
}

/// Opens client connections to a URL: over sockets (``SocketConnector``), or in memory
/// (``InMemoryNetwork``). Clients take one so that the same code runs on real sockets and in a
/// simulated run.
public protocol WebSocketConnector: Sendable {
    /// Connects and performs the opening handshake.
    /// - Parameters:
    ///   - url: `ws://host[:port][/path][?query]`.
    ///   - headers: extra request header fields.
    ///   - configuration: limits for the connection.
    /// - Returns: the open connection.
    /// - Throws: ``WebSocketError`` or `CancellationError`.
    func connect(to url: String, headers: WebSocketHTTPHeaders, configuration: WebSocketConfiguration) async throws
        -> WebSocketConnection

    /// Sends one plain HTTP request to an `http://` or `https://` URL of the same network (the
    /// Gateway's port serves HTTP next to the WebSocket) and returns the response.
    /// - Parameters:
    ///   - request: method, header fields and body; the URL gives the target.
    ///   - url: `http://host:port/path` (or `https://`).
    ///   - configuration: TLS trust and the time limit, as for ``connect(to:headers:configuration:)``.
    /// - Returns: the response.
    /// - Throws: ``WebSocketError`` or `CancellationError`.
    func send(_ request: HTTPRequest, to url: String, configuration: WebSocketConfiguration) async throws -> HTTPResponse
}

extension WebSocketConnector {
    /// A connector without HTTP refuses: the default for connectors written before HTTP.
    /// - Throws: ``WebSocketError/connectionFailed`` always.
    public func send(_ request: HTTPRequest, to url: String, configuration: WebSocketConfiguration) async throws -> HTTPResponse {
        throw WebSocketError.connectionFailed.with(detail: "\(type(of: self)) cannot send HTTP requests")
    }

    /// Connects with no extra header fields and default limits.
    /// - Throws: see ``connect(to:headers:configuration:)``.
    public func connect(to url: String) async throws -> WebSocketConnection {
        try await connect(to: url, headers: [:], configuration: .init())
    }
}

/// Real TCP connections through ``WebSocketClient``.
public struct SocketConnector: WebSocketConnector {
    /// How `wss://` servers are trusted when a connect's configuration does not say.
    public var tls: WebSocketTLSClientConfiguration?

    /// Creates the connector.
    /// - Parameter tls: the trust for `wss://` URLs (a pinned fingerprint, a CA file); `nil`
    ///   uses the system's trust store.
    public init(tls: WebSocketTLSClientConfiguration? = nil) {
        self.tls = tls
    }

    /// Connects with ``WebSocketClient/connect(to:headers:configuration:)``.
    /// - Throws: see ``WebSocketClient/connect(to:headers:configuration:)``.
    public func connect(to url: String, headers: WebSocketHTTPHeaders, configuration: WebSocketConfiguration) async throws
        -> WebSocketConnection {
        var configuration = configuration
        if configuration.tls == nil { configuration.tls = tls }
        return try await WebSocketClient.connect(to: url, headers: headers, configuration: configuration)
    }

    /// Sends the request with ``HTTPClient/send(_:to:configuration:)``.
    /// - Throws: see ``HTTPClient/send(_:to:configuration:)``.
    public func send(_ request: HTTPRequest, to url: String, configuration: WebSocketConfiguration) async throws -> HTTPResponse {
        var configuration = configuration
        if configuration.tls == nil { configuration.tls = tls }
        return try await HTTPClient.send(request, to: url, configuration: configuration)
    }
}

/// A network that exists only in memory: servers listen on a host and port of it, clients
/// connect to `ws://host:port` URLs of it, and every connection is an ``InMemoryWebSocket`` pair.
///
/// Ports are handed out in order (18789, 18790, ... for listeners, 40000 on for clients), so a
/// simulated run that starts the same servers gets the same addresses every time.
public final class InMemoryNetwork: WebSocketConnector {
    private struct State: Sendable {
        var listeners: [String: InMemoryListener] = [:]
        var nextListenerPort = 18789
        var nextClientPort = 40000
    }

    // Listeners and port counters.
    private let state = Locked(State())

    /// Creates an empty network.
    public init() {}

    /// Starts listening.
    /// - Parameters:
    ///   - host: the host part of the URLs clients use (default `127.0.0.1`).
    ///   - port: the port, or `nil` (or 0) for the next free one.
    ///   - configuration: limits applied to every accepted connection.
    ///   - http: answers plain HTTP requests sent with ``exchange(_:host:port:)`` or
    ///     ``send(_:to:)``; `nil` answers them 426, as a ``WebSocketServer`` without one does.
    /// - Returns: the listener.
    /// - Throws: ``WebSocketError/socketFailed`` when the address is taken.
    public func listen(host: String = "127.0.0.1", port: Int? = nil, configuration: WebSocketConfiguration = .init(),
                       http: (any HTTPResponder)? = nil)
        throws(WebSocketError) -> InMemoryListener {
        try state.withLock { (state: inout State) throws(WebSocketError) -> InMemoryListener in
            var chosen = port ?? 0
            if chosen == 0 {
                while state.listeners[Self.key(host, state.nextListenerPort)] != nil { state.nextListenerPort += 1 }
                chosen = state.nextListenerPort
                state.nextListenerPort += 1
            }
            let key = Self.key(host, chosen)
            guard state.listeners[key] == nil else {
                throw WebSocketError.socketFailed.with(detail: "\(key) is already in use")
            }
            let listener = InMemoryListener(host: host, port: chosen, configuration: configuration, http: http, network: self)
            state.listeners[key] = listener
            return listener
        }
    }

    func remove(_ listener: InMemoryListener) {
        state.withLock { state in
            let key = Self.key(listener.host, listener.port)
            if state.listeners[key] === listener { state.listeners[key] = nil }
        }
    }

    /// Connects to a listener of this network.
    /// - Throws: ``WebSocketError/invalidURL`` for a malformed URL, ``WebSocketError/connectionFailed``
    ///   when nothing listens there (connection refused).
    public func connect(to url: String, headers: WebSocketHTTPHeaders, configuration: WebSocketConfiguration) async throws
        -> WebSocketConnection {
        let parsed = try WebSocketURL(parsing: url)
        let (listener, clientPort): (InMemoryListener?, Int) = state.withLock { state in
            let listener = state.listeners[Self.key(parsed.host, parsed.port)]
            state.nextClientPort += 1
            return (listener, state.nextClientPort - 1)
        }
        guard let listener else {
            throw WebSocketError.connectionFailed.with(detail: "\(parsed.hostHeader): connection refused")
        }
        var requestHeaders = WebSocketHTTPHeaders([("Host", parsed.hostHeader)])
        for field in headers { requestHeaders.add(name: field.name, value: field.value) }
        let (client, server) = InMemoryWebSocket.pair(
            path: parsed.target, headers: requestHeaders,
            client: InMemoryWebSocket.Endpoint(port: clientPort), server: InMemoryWebSocket.Endpoint(port: listener.port),
            clientConfiguration: configuration, serverConfiguration: listener.configuration)
        guard listener.accept(server) else {
            throw WebSocketError.connectionFailed.with(detail: "\(parsed.hostHeader): connection refused")
        }
        return client
    }

    /// The listener at `host:port`, if any.
    func listener(host: String, port: Int) -> InMemoryListener? {
        state.withLock { $0.listeners[Self.key(host, port)] }
    }

    /// The next client port, as a connect would take it.
    func takeClientPort() -> Int {
        state.withLock { state in
            state.nextClientPort += 1
            return state.nextClientPort - 1
        }
    }

    static func key(_ host: String, _ port: Int) -> String {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return "\(bare.lowercased()):\(port)"
    }
}

/// A server's place on an ``InMemoryNetwork``.
public final class InMemoryListener: Sendable {
    /// The host clients connect to.
    public let host: String
    /// The port clients connect to.
    public let port: Int
    /// Accepted connections (server ends), in accept order; finishes after ``close()``. One consumer.
    public let connections: AsyncStream<WebSocketConnection>

    let configuration: WebSocketConfiguration
    let http: (any HTTPResponder)?
    private let continuation: AsyncStream<WebSocketConnection>.Continuation
    private let network: InMemoryNetwork
    // Whether `close()` was called.
    private let closed = Locked(false)

    init(host: String, port: Int, configuration: WebSocketConfiguration, http: (any HTTPResponder)?, network: InMemoryNetwork) {
        self.host = host
        self.port = port
        self.configuration = configuration
        self.http = http
        self.network = network
        (connections, continuation) = AsyncStream<WebSocketConnection>.makeStream()
    }

    /// Whether the listener still accepts.
    var isOpen: Bool { closed.withLock { !$0 } }

    func accept(_ connection: WebSocketConnection) -> Bool {
        let open = closed.withLock { !$0 }
        guard open else { return false }
        if case .terminated = continuation.yield(connection) { return false }
        return true
    }

    /// Stops listening: later connects are refused, ``connections`` finishes.
    public func close() {
        closed.withLock { $0 = true }
        network.remove(self)
        continuation.finish()
    }
}
