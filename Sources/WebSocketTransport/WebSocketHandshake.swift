import Foundation
import Locking
import OpenClawCrypto

/// HTTP header fields in received order, with case-insensitive lookup.
public struct WebSocketHTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name as received.
        public var name: String
        /// The field value with surrounding whitespace removed.
        public var value: String
    }

    /// All fields in order.
    public private(set) var fields: [Field]

    /// Creates headers from fields.
    public init(_ fields: [Field] = []) { self.fields = fields }

    /// Creates headers from `(name, value)` pairs.
    public init(_ pairs: [(String, String)]) { self.fields = pairs.map { Field(name: $0.0, value: $0.1) } }

    /// Creates headers from a literal such as `["Authorization": "Bearer x"]`.
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// The first value of the field `name` (case-insensitive), or `nil`.
    public subscript(name: String) -> String? {
        let lowered = name.lowercased()
        return fields.first { $0.name.lowercased() == lowered }?.value
    }

    /// Every value of the field `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        let lowered = name.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// Appends a field.
    public mutating func add(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Whether a comma-separated field contains `token` (case-insensitive), as in
    /// `Connection: keep-alive, Upgrade`.
    func containsToken(_ token: String, in name: String) -> Bool {
        values(for: name).contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == token }
        }
    }
}

/// The opening handshake rules of RFC 6455 section 4 shared by both sides.
enum WebSocketHandshake {
    /// The GUID appended to the key before hashing (RFC 6455 section 1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)).
    static func acceptValue(forKey key: String) -> String {
        CryptoBackend.sha1(Data((key + guid).utf8)).base64EncodedString()
    }

    /// A fresh random `Sec-WebSocket-Key` (16 random bytes, base64).
    static func makeKey() -> String {
        Data(WebSocketRandom.bytes(16)).base64EncodedString()
    }

    /// The index just after the blank line that ends an HTTP head, searching from `start`.
    static func endOfHead(in bytes: [UInt8], searchingFrom start: Int) -> Int? {
        var index = max(0, start)
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// Splits an HTTP head into its start line and header fields; `nil` when malformed.
    static func parseHead(_ head: ArraySlice<UInt8>) -> (startLine: String, headers: WebSocketHTTPHeaders)? {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        while lines.last == "" { lines.removeLast() }
        guard let startLine = lines.first, !startLine.isEmpty else { return nil }
        var headers = WebSocketHTTPHeaders()
        for line in lines.dropFirst() {
            // Obsolete line folding and lines without a colon are malformed.
            guard let first = line.first, first != " ", first != "\t",
                  let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon])
            guard !name.isEmpty, !name.contains(where: { $0 == " " || $0 == "\t" }) else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            headers.add(name: name, value: value)
        }
        return (startLine, headers)
    }
}

/// The request of an accepted WebSocket upgrade, as the server saw it.
struct WebSocketUpgradeRequest: Sendable, Hashable {
    /// The request target, e.g. `/gateway?x=1`.
    var target: String
    /// The request header fields.
    var headers: WebSocketHTTPHeaders
}

/// The server side of the opening handshake as a state machine: request bytes in, a decision out.
struct ServerHandshakeParser: Sendable {
    /// What to do after consuming bytes.
    enum Action: Sendable, Hashable {
        /// The request head is not complete yet.
        case needMoreData
        /// Upgrade: send `response`, then treat `leftover` as the first WebSocket bytes.
        case accept(WebSocketUpgradeRequest, response: [UInt8], leftover: [UInt8])
        /// Refuse: send `response` and close.
        case reject(status: Int, response: [UInt8])
    }

    let maxBytes: Int
    private var buffer: [UInt8] = []

    /// Creates a parser that refuses heads longer than `maxBytes`.
    init(maxBytes: Int) { self.maxBytes = maxBytes }

    /// Consumes received bytes.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Action {
        let searchStart = buffer.count - 3
        buffer.append(contentsOf: bytes)
        guard let end = WebSocketHandshake.endOfHead(in: buffer, searchingFrom: searchStart) else {
            if buffer.count > maxBytes {
                return Self.rejection(431, "Request Header Fields Too Large", "request head too large")
            }
            return .needMoreData
        }
        guard end <= maxBytes else {
            return Self.rejection(431, "Request Header Fields Too Large", "request head too large")
        }
        return Self.decide(head: buffer[..<end], leftover: Array(buffer[end...]))
    }

    /// Consumes received bytes (array convenience for tests).
    mutating func consume(_ bytes: [UInt8]) -> Action { bytes.withUnsafeBytes { consume($0) } }

    /// The RFC 6455 section 4.2.1 checks of a client's upgrade request.
    static func decide(head: ArraySlice<UInt8>, leftover: [UInt8]) -> Action {
        guard let (startLine, headers) = WebSocketHandshake.parseHead(head) else {
            return rejection(400, "Bad Request", "malformed HTTP request")
        }
        let parts = startLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[1].isEmpty else { return rejection(400, "Bad Request", "malformed request line") }
        guard parts[0] == "GET" else { return rejection(400, "Bad Request", "the method must be GET") }
        guard isHTTP11OrLater(parts[2]) else { return rejection(400, "Bad Request", "HTTP/1.1 or later is required") }
        guard headers.containsToken("websocket", in: "Upgrade") else {
            return rejection(426, "Upgrade Required", "this is a WebSocket endpoint")
        }
        guard headers.containsToken("upgrade", in: "Connection") else {
            return rejection(400, "Bad Request", "the Connection header must contain Upgrade")
        }
        guard headers["Host"] != nil else { return rejection(400, "Bad Request", "the Host header is missing") }
        guard headers.values(for: "Sec-WebSocket-Version").map({ $0.trimmingCharacters(in: .whitespaces) }) == ["13"] else {
            return rejection(426, "Upgrade Required", "unsupported WebSocket version")
        }
        let keys = headers.values(for: "Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, Data(base64Encoded: key)?.count == 16 else {
            return rejection(400, "Bad Request", "invalid Sec-WebSocket-Key")
        }
        let response = "HTTP/1.1 101 Switching Protocols\r\n"
            + "Upgrade: websocket\r\n"
            + "Connection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n\r\n"
        return .accept(
            WebSocketUpgradeRequest(target: String(parts[1]), headers: headers),
            response: Array(response.utf8), leftover: leftover)
    }

    private static func isHTTP11OrLater(_ version: Substring) -> Bool {
        guard version.hasPrefix("HTTP/") else { return false }
        let numbers = version.dropFirst(5).split(separator: ".", omittingEmptySubsequences: false)
        guard let major = numbers.first.flatMap({ Int($0) }) else { return false }
        let minor = numbers.count > 1 ? Int(numbers[1]) ?? -1 : 0
        return major > 1 || (major == 1 && minor >= 1)
    }

    /// A plain-text HTTP error response; 426 also names the supported version.
    static func rejection(_ status: Int, _ phrase: String, _ body: String) -> Action {
        var response = "HTTP/1.1 \(status) \(phrase)\r\n"
        if status == 426 { response += "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" }
        response += "Connection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
        response += "Content-Length: \(body.utf8.count + 1)\r\n\r\n\(body)\n"
        return .reject(status: status, response: Array(response.utf8))
    }
}

/// The client side of the opening handshake as a state machine: it builds the request and
/// validates the server's response.
struct ClientHandshake: Sendable {
    /// What to do after consuming response bytes.
    enum Action: Sendable, Hashable {
        /// The response head is not complete yet.
        case needMoreData
        /// Upgraded; `leftover` are the first WebSocket bytes from the server.
        case upgraded(WebSocketHTTPHeaders, leftover: [UInt8])
        /// The server refused or answered wrongly.
        case failed(String)
    }

    let key: String
    let maxBytes: Int
    private var buffer: [UInt8] = []

    /// Creates a handshake with a random key (or a given one, for tests).
    init(key: String = WebSocketHandshake.makeKey(), maxBytes: Int) {
        self.key = key
        self.maxBytes = maxBytes
    }

    /// The upgrade request for `url`, with extra header fields appended.
    func request(for url: WebSocketURL, headers: WebSocketHTTPHeaders) -> [UInt8] {
        var text = "GET \(url.target) HTTP/1.1\r\n"
        text += "Host: \(url.hostHeader)\r\n"
        text += "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for field in headers.fields { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Consumes response bytes.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Action {
        let searchStart = buffer.count - 3
        buffer.append(contentsOf: bytes)
        guard let end = WebSocketHandshake.endOfHead(in: buffer, searchingFrom: searchStart) else {
            return buffer.count > maxBytes ? .failed("response head too large") : .needMoreData
        }
        guard let (statusLine, headers) = WebSocketHandshake.parseHead(buffer[..<end]) else {
            return .failed("malformed HTTP response")
        }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") else { return .failed("malformed status line: \(statusLine)") }
        guard parts[1] == "101" else { return .failed("server answered \(statusLine)") }
        guard headers.containsToken("websocket", in: "Upgrade") else { return .failed("missing Upgrade: websocket") }
        guard headers.containsToken("upgrade", in: "Connection") else { return .failed("missing Connection: Upgrade") }
        guard headers["Sec-WebSocket-Accept"] == WebSocketHandshake.acceptValue(forKey: key) else {
            return .failed("wrong Sec-WebSocket-Accept")
        }
        guard headers["Sec-WebSocket-Extensions"] == nil else { return .failed("the server chose an extension that was not offered") }
        return .upgraded(headers, leftover: Array(buffer[end...]))
    }

    /// Consumes response bytes (array convenience for tests).
    mutating func consume(_ bytes: [UInt8]) -> Action { bytes.withUnsafeBytes { consume($0) } }
}

/// A parsed `ws://` or `wss://` URL.
struct WebSocketURL: Sendable, Hashable {
    /// The host without brackets (`::1`, `127.0.0.1`, `localhost`).
    var host: String
    /// The TCP port (80, or 443 for `wss://`, when absent).
    var port: Int
    /// Whether the URL is `wss://` (TLS).
    var secure: Bool
    /// The request target: path plus query, at least `/`.
    var target: String

    /// Parses `ws://host[:port][/path][?query]` or the same with `wss://`.
    init(parsing string: String) throws(WebSocketError) {
        let lower = string.lowercased()
        guard lower.hasPrefix("ws://") || lower.hasPrefix("wss://") else {
            throw WebSocketError.invalidURL.with(detail: "expected ws://host[:port][/path] or wss://…: \(string)")
        }
        secure = lower.hasPrefix("wss://")
        let rest = string.dropFirst(secure ? 6 : 5)
        guard !rest.contains("#") else { throw WebSocketError.invalidURL.with(detail: "fragments are not allowed: \(string)") }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        guard !authority.isEmpty, !authority.contains("@") else {
            throw WebSocketError.invalidURL.with(detail: "invalid host: \(string)")
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw WebSocketError.invalidURL.with(detail: "unclosed [: \(string)") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw WebSocketError.invalidURL.with(detail: "invalid port: \(string)") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        var port = secure ? 443 : 80
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw WebSocketError.invalidURL.with(detail: "invalid port: \(string)")
            }
            port = value
        }
        guard !host.isEmpty else { throw WebSocketError.invalidURL.with(detail: "empty host: \(string)") }
        self.host = String(host)
        self.port = port
        self.target = target
    }

    /// The `Host` header value: brackets around IPv6 literals, the port unless it is the
    /// scheme's default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }
}

/// Random bytes for masking keys and handshake keys, from the package's crypto interface.
///
/// Every client frame needs a fresh 4-byte masking key (RFC 6455 section 5.3), and one call into
/// the crypto library per frame cost more than the frame itself. The bytes are drawn from the
/// same cryptographically secure source 1 KiB at a time and handed out in order, each byte
/// once, so a key is exactly as unpredictable as before.
enum WebSocketRandom {
    private static let chunk = 1_024
    // Unused secure random bytes, consumed from `next`; only under the lock.
    private static let pool = Locked<(bytes: [UInt8], next: Int)>(([], 0))

    /// `count` bytes from a cryptographically secure source.
    static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        guard count <= chunk / 4 else { return CryptoBackend.randomBytes(count) }
        return pool.withLock { pool in
            if pool.bytes.count - pool.next < count {
                pool.bytes = CryptoBackend.randomBytes(chunk)
                pool.next = 0
            }
            let taken = Array(pool.bytes[pool.next..<(pool.next + count)])
            pool.next += count
            return taken
        }
    }
}
