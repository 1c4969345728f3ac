/// One HTTP/1.1 request as a route handler sees it: the request line, the header fields and the
/// whole body (`Content-Length` bodies only).
public struct HTTPRequest: Sendable, Hashable {
    /// The method as sent (`GET`, `POST`, ...; methods are case-sensitive).
    public var method: String
    /// The request target as sent, in origin form: path plus optional `?query`.
    public var target: String
    /// The header fields in received order.
    public var headers: WebSocketHTTPHeaders
    /// The body (empty without `Content-Length`).
    public var body: [UInt8]
    /// The client's numeric address.
    public var remoteAddress: String
    /// The client's port.
    public var remotePort: Int
    /// Whether the request came over TLS.
    public var isSecure: Bool

    /// Creates a request.
    public init(method: String, target: String, headers: WebSocketHTTPHeaders = [:], body: [UInt8] = [],
                remoteAddress: String = "127.0.0.1", remotePort: Int = 0, isSecure: Bool = false) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.isSecure = isSecure
    }

    /// The path part of ``target`` (before `?`), not percent-decoded.
    public var path: String {
        guard let mark = target.firstIndex(of: "?") else { return target }
        return String(target[..<mark])
    }

    /// The query part of ``target`` (after `?`), or `nil`.
    public var query: String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        return String(target[target.index(after: mark)...])
    }

    /// The value of query parameter `name` (the first one; `+` and percent escapes decoded), or `nil`.
    public func queryValue(_ name: String) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = parts.first.map({ HTTPRequest.decodeComponent($0) }), key == name else { continue }
            return parts.count > 1 ? HTTPRequest.decodeComponent(parts[1]) : ""
        }
        return nil
    }

    /// Percent-decodes a query component (`+` is a space); invalid escapes stay as they are.
    static func decodeComponent(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
               let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
                continue
            }
            bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The request as bytes on the wire (`Content-Length` added when there is a body).
    public func serialized() -> [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\n"
        for field in headers.fields where field.name.lowercased() != "content-length" {
            text += "\(field.name): \(field.value)\r\n"
        }
        if !body.isEmpty || method == "POST" || method == "PUT" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + body
    }
}

/// One HTTP/1.1 response: what a route handler returns. `Content-Length` and `Connection` are
/// set when it is written; a handler does not set them.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// The header fields (no `Content-Length`, no `Connection`).
    public var headers: WebSocketHTTPHeaders
    /// The body.
    public var body: [UInt8]
    /// Whether the connection closes after this response (keep-alive otherwise, when the
    /// request allows it).
    public var closesConnection: Bool

    /// Creates a response.
    public init(status: Int, headers: WebSocketHTTPHeaders = [:], body: [UInt8] = [], closesConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closesConnection = closesConnection
    }

    /// A `text/plain; charset=utf-8` response; the text gets a final newline.
    public static func text(_ status: Int, _ text: String, headers: WebSocketHTTPHeaders = [:]) -> HTTPResponse {
        var all = WebSocketHTTPHeaders([("Content-Type", "text/plain; charset=utf-8")])
        for field in headers { all.add(name: field.name, value: field.value) }
        return HTTPResponse(status: status, headers: all, body: Array((text + "\n").utf8))
    }

    /// A response with `body` of the given content type.
    public static func content(_ status: Int, type: String, _ body: [UInt8], headers: WebSocketHTTPHeaders = [:]) -> HTTPResponse {
        var all = WebSocketHTTPHeaders([("Content-Type", type)])
        for field in headers { all.add(name: field.name, value: field.value) }
        return HTTPResponse(status: status, headers: all, body: body)
    }

    /// `503 Service Unavailable`: the answer to every request once a router is shut down.
    public static var serviceUnavailable: HTTPResponse {
        var response = HTTPResponse.text(503, "the server is shutting down")
        response.closesConnection = true
        return response
    }

    /// The reason phrase of the status code (empty for codes without one here).
    public var reasonPhrase: String { HTTPResponse.reasonPhrase(status) }

    /// The reason phrase of a status code.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }

    /// The response as bytes on the wire, with `Content-Length` and `Connection`; the body is
    /// left out for a `HEAD` request and for 204 and 304.
    /// - Parameters:
    ///   - keepAlive: whether the connection stays open (`Connection: keep-alive` for an
    ///     HTTP/1.0 peer that asked for it, nothing for HTTP/1.1) or closes (`Connection: close`).
    ///   - http10: whether the request was HTTP/1.0.
    ///   - headRequest: whether the request was `HEAD`.
    public func serialized(keepAlive: Bool, http10: Bool = false, headRequest: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reasonPhrase)\r\n"
        for field in headers.fields {
            let name = field.name.lowercased()
            guard name != "content-length", name != "connection", name != "transfer-encoding" else { continue }
            // A field value never carries a line break into the head.
            // (By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n".)
            let value = String(String.UnicodeScalarView(field.value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
            text += "\(field.name): \(value)\r\n"
        }
        let bodyless = status == 204 || status == 304 || (100..<200).contains(status)
        if !bodyless { text += "Content-Length: \(body.count)\r\n" }
        if !keepAlive {
            text += "Connection: close\r\n"
        } else if http10 {
            text += "Connection: keep-alive\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + (bodyless || headRequest ? [] : body)
    }
}

/// Size limits of the HTTP requests a server accepts.
public struct HTTPLimits: Sendable, Hashable {
    /// The largest request head (request line plus header fields) in bytes; larger gets 431.
    public var maxHeadBytes: Int
    /// The largest `Content-Length` body in bytes; larger gets 413.
    public var maxBodyBytes: Int

    /// Creates limits: 16 KiB of head and 1 MiB of body by default.
    public init(maxHeadBytes: Int = 16 * 1024, maxBodyBytes: Int = 1024 * 1024) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
    }
}
