/// The server side of HTTP/1.1 as a state machine: received bytes in, complete requests (or a
/// WebSocket upgrade, or an error to answer) out. It keeps what follows a request, so pipelined
/// requests come out one after the other.
///
/// It is as small as the routes need: the request line, header fields, `Content-Length` bodies,
/// `Transfer-Encoding: chunked` bodies (decoded; extensions and trailer fields read and dropped)
/// and keep-alive. Another transfer coding gets 501, both `Transfer-Encoding` and
/// `Content-Length` (or an unparsable request) 400, a head over ``HTTPLimits/maxHeadBytes`` 431, a
/// body over ``HTTPLimits/maxBodyBytes`` 413 (a chunked one as soon as its decoded bytes pass the
/// limit), an HTTP version other than 1.0 and 1.1 505. After an error the connection closes.
struct HTTPRequestParser: Sendable {
    /// What the next buffered bytes are.
    enum Event: Sendable, Hashable {
        /// No complete request yet.
        case needMoreData
        /// A complete request; `keepAlive` says whether the connection may stay open after the
        /// response, `http10` whether the request was HTTP/1.0.
        case request(HTTPRequest, keepAlive: Bool, http10: Bool)
        /// A request with `Upgrade: websocket`: its head for the opening handshake and the bytes
        /// after it. The parser is done with the connection.
        case upgrade(head: [UInt8], leftover: [UInt8])
        /// A bad request: answer `status` with `message` and close.
        case invalid(status: Int, message: String)
    }

    let limits: HTTPLimits
    private var buffer: [UInt8] = []
    /// Where the search for the end of the head resumes.
    private var searched = 0
    /// A parsed head waiting for its body (`length` is ignored for a chunked body).
    private var pending: (request: HTTPRequest, length: Int, chunked: Bool, keepAlive: Bool, http10: Bool)?
    private var failed = false

    /// Creates a parser with the given limits.
    init(limits: HTTPLimits) { self.limits = limits }

    /// Bytes received but not yet returned as a request.
    var bufferedCount: Int { buffer.count }

    /// Appends received bytes.
    mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

    /// Appends received bytes (array convenience).
    mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    /// The next request in the buffer, if complete. `remoteAddress`, `remotePort` and `isSecure`
    /// are copied into it.
    mutating func next(remoteAddress: String = "127.0.0.1", remotePort: Int = 0, isSecure: Bool = false) -> Event {
        guard !failed else { return .needMoreData }
        if pending == nil {
            // Empty lines before a request line are ignored (RFC 9112 section 2.2).
            var skip = 0
            while skip + 1 < buffer.count, buffer[skip] == 13, buffer[skip + 1] == 10 { skip += 2 }
            if skip > 0 {
                buffer.removeFirst(skip)
                searched = 0
            }
            guard let end = WebSocketHandshake.endOfHead(in: buffer, searchingFrom: searched - 3) else {
                searched = buffer.count
                if buffer.count > limits.maxHeadBytes { return fail(431, "request head too large") }
                return .needMoreData
            }
            searched = 0
            guard end <= limits.maxHeadBytes else { return fail(431, "request head too large") }
            let head = Array(buffer[..<end])
            switch Self.parseHead(head, limits: limits) {
            case .failure(let error):
                return fail(error.status, error.message)
            case .success(let parsed):
                if parsed.upgrade {
                    failed = true
                    let leftover = Array(buffer[end...])
                    buffer = []
                    return .upgrade(head: head, leftover: leftover)
                }
                buffer.removeFirst(end)
                let request = HTTPRequest(method: parsed.method, target: parsed.target, headers: parsed.headers,
                                          remoteAddress: remoteAddress, remotePort: remotePort, isSecure: isSecure)
                pending = (request, parsed.length, parsed.chunked, parsed.keepAlive, parsed.http10)
            }
        }
        guard let waiting = pending else { return .needMoreData }
        var request = waiting.request
        if waiting.chunked {
            switch ChunkedBody.decode(buffer, maxBodyBytes: limits.maxBodyBytes, maxLineBytes: limits.maxHeadBytes) {
            case .needMoreData:
                return .needMoreData
            case .invalid(let status, let message):
                return fail(status, message)
            case .complete(let body, let consumed):
                request.body = body
                buffer.removeFirst(consumed)
            }
        } else {
            guard buffer.count >= waiting.length else { return .needMoreData }
            request.body = Array(buffer[..<waiting.length])
            buffer.removeFirst(waiting.length)
        }
        pending = nil
        return .request(request, keepAlive: waiting.keepAlive, http10: waiting.http10)
    }

    private mutating func fail(_ status: Int, _ message: String) -> Event {
        failed = true
        buffer = []
        pending = nil
        return .invalid(status: status, message: message)
    }

    /// A parsed request head.
    struct Head: Sendable {
        var method: String
        var target: String
        var headers: WebSocketHTTPHeaders
        var length: Int
        var chunked = false
        var keepAlive: Bool
        var http10: Bool
        var upgrade: Bool
    }

    /// Why a head is refused.
    struct HeadError: Error, Sendable, Hashable {
        var status: Int
        var message: String
    }

    /// Parses and checks a complete head (ending with the blank line).
    static func parseHead(_ head: [UInt8], limits: HTTPLimits) -> Result<Head, HeadError> {
        // Control characters (other than tab and CRLF line ends) have no place in a head.
        for (index, byte) in head.enumerated() {
            let allowed: Bool
            switch byte {
            case 13: allowed = index + 1 < head.count && head[index + 1] == 10
            case 10: allowed = index > 0 && head[index - 1] == 13
            case 9: allowed = true
            case 0..<0x20, 0x7F: allowed = false
            default: allowed = true
            }
            if !allowed { return .failure(HeadError(status: 400, message: "control character in the request head")) }
        }
        guard let (requestLine, headers) = WebSocketHandshake.parseHead(head[...]) else {
            return .failure(HeadError(status: 400, message: "malformed request head"))
        }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(HeadError(status: 400, message: "malformed request line")) }
        let method = String(parts[0])
        let target = String(parts[1])
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else {
            return .failure(HeadError(status: 400, message: "malformed method"))
        }
        guard target.hasPrefix("/"), !target.contains("#") else {
            return .failure(HeadError(status: 400, message: "the request target must be a path"))
        }
        let version = parts[2]
        guard version.hasPrefix("HTTP/"), version.count == 8 else {
            return .failure(HeadError(status: 400, message: "malformed HTTP version"))
        }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .failure(HeadError(status: 505, message: "only HTTP/1.1 and HTTP/1.0 are served"))
        }
        let http10 = version == "HTTP/1.0"
        if !http10 {
            guard headers.values(for: "Host").count == 1 else {
                return .failure(HeadError(status: 400, message: "exactly one Host header is required"))
            }
        }
        if headers.containsToken("websocket", in: "Upgrade") {
            return .success(Head(method: method, target: target, headers: headers, length: 0, keepAlive: false, http10: http10,
                                 upgrade: true))
        }
        let codings = headers.values(for: "Transfer-Encoding").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if !codings.isEmpty {
            // Both framings at once is how requests are smuggled past proxies: refused (RFC 9112 §6.3).
            guard headers["Content-Length"] == nil else {
                return .failure(HeadError(status: 400, message: "both Transfer-Encoding and Content-Length"))
            }
            guard !http10 else { return .failure(HeadError(status: 400, message: "Transfer-Encoding in an HTTP/1.0 request")) }
            guard codings == ["chunked"] else {
                return .failure(HeadError(status: 501, message: "only the chunked transfer coding is supported"))
            }
            let keepAlive = !headers.containsToken("close", in: "Connection")
            return .success(Head(method: method, target: target, headers: headers, length: 0, chunked: true, keepAlive: keepAlive,
                                 http10: false, upgrade: false))
        }
        let lengths = Set(headers.values(for: "Content-Length").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) })
        var length = 0
        if let only = lengths.first {
            guard lengths.count == 1, !only.isEmpty, only.utf8.allSatisfy({ (48...57).contains($0) }),
                  only.count <= 18, let value = Int(only) else {
                return .failure(HeadError(status: 400, message: "invalid Content-Length"))
            }
            guard value <= limits.maxBodyBytes else {
                return .failure(HeadError(status: 413, message: "the body is larger than \(limits.maxBodyBytes) bytes"))
            }
            length = value
        }
        let keepAlive = http10
            ? headers.containsToken("keep-alive", in: "Connection")
            : !headers.containsToken("close", in: "Connection")
        return .success(Head(method: method, target: target, headers: headers, length: length, keepAlive: keepAlive,
                             http10: http10, upgrade: false))
    }

    /// Whether a byte may appear in an HTTP token (RFC 9110 section 5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

/// The decoding of a `Transfer-Encoding: chunked` body (RFC 9112 section 7.1): chunk sizes in
/// hexadecimal with optional extensions (ignored), the chunks, the last (size 0) chunk and the
/// trailer section (read and dropped). Decoded from the start of the buffer each time more bytes
/// arrive, which is cheap for bodies as small as the routes take.
enum ChunkedBody {
    /// What the buffered bytes are.
    enum Outcome: Sendable, Hashable {
        /// Not complete yet (and nothing wrong so far).
        case needMoreData
        /// Refused: answer `status` with `message` and close.
        case invalid(status: Int, message: String)
        /// The decoded body, and how many buffered bytes the chunked message took.
        case complete(body: [UInt8], consumed: Int)
    }

    /// Decodes the chunked body at the start of `bytes`; more than `maxBodyBytes` decoded bytes
    /// is 413 at once, a size or trailer line longer than `maxLineBytes` 400 (431 for trailers).
    static func decode(_ bytes: [UInt8], maxBodyBytes: Int, maxLineBytes: Int) -> Outcome {
        var body: [UInt8] = []
        var position = 0
        while true {
            guard let lineEnd = lineEnd(in: bytes, from: position) else {
                return bytes.count - position > maxLineBytes ? .invalid(status: 400, message: "chunk size line too long") : .needMoreData
            }
            let line = bytes[position..<lineEnd]
            let sizeText = line.prefix { $0 != UInt8(ascii: ";") }.filter { $0 != 32 && $0 != 9 }
            guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.allSatisfy(isHexDigit),
                  let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16)
            else { return .invalid(status: 400, message: "invalid chunk size") }
            position = lineEnd + 2
            if size == 0 { break }
            guard body.count + size <= maxBodyBytes else {
                return .invalid(status: 413, message: "the body is larger than \(maxBodyBytes) bytes")
            }
            guard bytes.count >= position + size + 2 else {
                return .needMoreData
            }
            guard bytes[position + size] == 13, bytes[position + size + 1] == 10 else {
                return .invalid(status: 400, message: "a chunk does not end with CRLF")
            }
            body.append(contentsOf: bytes[position..<(position + size)])
            position += size + 2
        }
        // Trailer fields until the empty line; they are not kept.
        let trailerStart = position
        while true {
            guard let lineEnd = lineEnd(in: bytes, from: position) else {
                return bytes.count - trailerStart > maxLineBytes ? .invalid(status: 431, message: "trailer section too large")
                    : .needMoreData
            }
            if lineEnd == position { return .complete(body: body, consumed: lineEnd + 2) }
            guard lineEnd - trailerStart <= maxLineBytes else { return .invalid(status: 431, message: "trailer section too large") }
            position = lineEnd + 2
        }
    }

    /// The index of the CR of the next CRLF at or after `start`.
    private static func lineEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }
}

/// The client side of HTTP/1.1: response bytes in, a complete response out (`Content-Length`
/// bodies, or a body that runs to the end of the connection).
struct HTTPResponseParser: Sendable {
    /// What the buffered bytes are.
    enum Event: Sendable, Hashable {
        /// No complete response yet.
        case needMoreData
        /// A complete response.
        case response(HTTPResponse)
        /// Malformed or too large.
        case invalid(String)
    }

    let maxHeadBytes: Int
    let maxBodyBytes: Int
    private var buffer: [UInt8] = []

    /// Creates a parser with limits.
    init(maxHeadBytes: Int = 16 * 1024, maxBodyBytes: Int = 32 * 1024 * 1024) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Appends received bytes.
    mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    /// The response, if complete; `ended` says the peer closed the connection (which completes
    /// a body without `Content-Length`).
    func next(ended: Bool, headRequest: Bool = false) -> Event {
        guard let end = WebSocketHandshake.endOfHead(in: buffer, searchingFrom: 0) else {
            if buffer.count > maxHeadBytes { return .invalid("response head too large") }
            return ended ? .invalid(buffer.isEmpty ? "the server closed the connection without a response" : "truncated response head")
                : .needMoreData
        }
        guard let (statusLine, headers) = WebSocketHandshake.parseHead(buffer[..<end]) else { return .invalid("malformed response head") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else {
            return .invalid("malformed status line: \(statusLine)")
        }
        var response = HTTPResponse(status: status, headers: headers)
        response.closesConnection = headers.containsToken("close", in: "Connection")
        if headRequest || status == 204 || status == 304 || (100..<200).contains(status) { return .response(response) }
        if headers["Transfer-Encoding"] != nil { return .invalid("Transfer-Encoding responses are not supported") }
        if let text = headers["Content-Length"] {
            guard let length = Int(text), length >= 0 else { return .invalid("invalid Content-Length: \(text)") }
            guard length <= maxBodyBytes else { return .invalid("response body too large") }
            guard buffer.count - end >= length else { return ended ? .invalid("truncated response body") : .needMoreData }
            response.body = Array(buffer[end..<(end + length)])
            return .response(response)
        }
        guard buffer.count - end <= maxBodyBytes else { return .invalid("response body too large") }
        guard ended else { return .needMoreData }
        response.body = Array(buffer[end...])
        response.closesConnection = true
        return .response(response)
    }
}
