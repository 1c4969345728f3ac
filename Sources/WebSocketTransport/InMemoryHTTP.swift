extension InMemoryNetwork {
    /// Sends raw request bytes to the listener at `host:port` as one connection would, and
    /// returns every byte the server answers before it closes: the bytes go through the same HTTP
    /// parser, router and response writer as on a socket (pipelined requests are answered in
    /// order; a bad request gets its error response and ends the exchange; a request still
    /// incomplete at the end of `bytes` gets no answer, as a connection that hangs up).
    ///
    /// A WebSocket upgrade request is decided as on a socket; one that would be accepted gets
    /// 400 here (connect with ``connect(to:headers:configuration:)`` instead).
    /// - Throws: ``WebSocketError/connectionFailed`` when nothing listens there.
    public func exchange(_ bytes: [UInt8], host: String, port: Int) async throws -> [UInt8] {
        guard let listener = listener(host: host, port: port), listener.isOpen else {
            let name = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            throw WebSocketError.connectionFailed.with(detail: "\(name): connection refused")
        }
        let clientPort = takeClientPort()
        let limits = HTTPLimits(maxHeadBytes: listener.configuration.maxHandshakeBytes,
                                maxBodyBytes: listener.configuration.maxHTTPBodyBytes)
        return await InMemoryHTTPServer.serve(bytes, responder: listener.http, limits: limits,
                                              remoteAddress: "127.0.0.1", remotePort: clientPort)
    }

    /// Sends one request to an `http://host:port/path` URL of this network and returns the
    /// response (parsed from the bytes the server wrote). `Host` is added when missing.
    /// - Throws: ``WebSocketError/invalidURL``, ``WebSocketError/connectionFailed`` when nothing
    ///   listens there, ``WebSocketError/handshakeFailed`` for a malformed response.
    public func send(_ request: HTTPRequest, to url: String) async throws -> HTTPResponse {
        try await send(request, to: url, configuration: WebSocketConfiguration())
    }

    /// ``send(_:to:)`` as a ``WebSocketConnector`` (the configuration does not matter in memory).
    /// - Throws: see ``send(_:to:)``.
    public func send(_ request: HTTPRequest, to url: String, configuration: WebSocketConfiguration) async throws -> HTTPResponse {
        let parsed = try WebSocketURL(parsingHTTP: url)
        var request = request
        request.target = parsed.target
        if request.headers["Host"] == nil {
            var headers = WebSocketHTTPHeaders([("Host", parsed.hostHeader)])
            for field in request.headers { headers.add(name: field.name, value: field.value) }
            request.headers = headers
        }
        let answer = try await exchange(request.serialized(), host: parsed.host, port: parsed.port)
        var parser = HTTPResponseParser()
        parser.append(answer)
        switch parser.next(ended: true, headRequest: request.method == "HEAD") {
        case .response(let response): return response
        case .invalid(let reason): throw WebSocketError.handshakeFailed.with(detail: reason)
        case .needMoreData: throw WebSocketError.handshakeFailed.with(detail: "incomplete response")
        }
    }
}

/// Serves the bytes of one in-memory HTTP connection.
enum InMemoryHTTPServer {
    static func serve(_ bytes: [UInt8], responder: (any HTTPResponder)?, limits: HTTPLimits,
                      remoteAddress: String, remotePort: Int) async -> [UInt8] {
        guard let responder else {
            var handshake = ServerHandshakeParser(maxBytes: limits.maxHeadBytes)
            switch handshake.consume(bytes) {
            case .needMoreData: return []
            case .reject(_, let response): return response
            case .accept: return acceptedUpgradeRefusal
            }
        }
        var parser = HTTPRequestParser(limits: limits)
        parser.append(bytes)
        var output: [UInt8] = []
        while true {
            switch parser.next(remoteAddress: remoteAddress, remotePort: remotePort) {
            case .needMoreData:
                return output
            case .invalid(let status, let message):
                return output + HTTPResponse.text(status, message).serialized(keepAlive: false)
            case .upgrade(let head, let leftover):
                switch ServerHandshakeParser.decide(head: head[...], leftover: leftover) {
                case .reject(_, let response): return output + response
                case .accept, .needMoreData: return output + acceptedUpgradeRefusal
                }
            case .request(let request, let keepAlive, let http10):
                let response = await responder.respond(to: request)
                let keep = keepAlive && !response.closesConnection
                output += response.serialized(keepAlive: keep, http10: http10, headRequest: request.method == "HEAD")
                if !keep { return output }
            }
        }
    }

    private static var acceptedUpgradeRefusal: [UInt8] {
        HTTPResponse.text(400, "an in-memory WebSocket is opened with InMemoryNetwork.connect").serialized(keepAlive: false)
    }
}

extension WebSocketURL {
    /// Parses `http://host[:port][/path][?query]` or the same with `https://` (`ws://` and
    /// `wss://` are taken as the same server): an HTTP URL is a WebSocket URL of the same server.
    init(parsingHTTP string: String) throws(WebSocketError) {
        let lower = string.lowercased()
        if lower.hasPrefix("http://") {
            try self.init(parsing: "ws://" + String(string.dropFirst(7)))
        } else if lower.hasPrefix("https://") {
            try self.init(parsing: "wss://" + String(string.dropFirst(8)))
        } else if lower.hasPrefix("ws://") || lower.hasPrefix("wss://") {
            try self.init(parsing: string)
        } else {
            throw WebSocketError.invalidURL.with(detail: "expected http://host[:port][/path] or https://…: \(string)")
        }
    }
}
