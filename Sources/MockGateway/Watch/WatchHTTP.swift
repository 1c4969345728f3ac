import Foundation
import GatewayProtocol

/// One HTTP request as the Apple Watch direct mode sees it, independent of the transport that
/// carried it (docs/protocol.md §13).
public struct WatchHTTPRequest: Sendable, Hashable {
    /// The method, as sent (`GET`, `POST`).
    public var method: String
    /// The path without the query (`/api/nodes/watch/poll`).
    public var path: String
    /// The header fields, names lower-cased.
    public var headers: [String: String]
    /// The body bytes.
    public var body: [UInt8]
    /// The client's address: the key of the challenge store and the rate limit.
    public var clientAddress: String

    /// A request.
    public init(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [], clientAddress: String) {
        self.method = method
        self.path = path
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
        self.body = body
        self.clientAddress = clientAddress
    }

    /// The token of an `Authorization: Bearer TOKEN` header, if any.
    public var bearerToken: String? {
        guard let header = headers["authorization"]?.trimmingASCIIWhitespace() else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1]).trimmingASCIIWhitespace()
        return token.isEmpty ? nil : token
    }
}

/// One HTTP response of the Apple Watch direct mode: a status, header fields and a body.
public struct WatchHTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// The header fields (`Content-Type`, `Cache-Control`, `Allow`, `Retry-After`).
    public var headers: [String: String]
    /// The body bytes.
    public var body: [UInt8]

    /// A response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as JSON, when it is JSON.
    public var json: JSONValue? { try? JSONValue(parsing: Data(body)) }

    /// A JSON response (`application/json; charset=utf-8`).
    public static func json(_ status: Int, _ value: JSONValue) -> WatchHTTPResponse {
        WatchHTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"],
                          body: Array(value.jsonString.utf8))
    }

    /// A response whose JSON body is already serialised.
    static func rawJSON(_ status: Int, _ text: String) -> WatchHTTPResponse {
        WatchHTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: Array(text.utf8))
    }

    /// 401 `{error: {message: "Unauthorized", type: "unauthorized"}}` (upstream `sendUnauthorized`).
    public static let unauthorized = json(401, ["error": ["message": "Unauthorized", "type": "unauthorized"]])

    /// 400 `{error: {message, type: "invalid_request_error"}}` (upstream `sendInvalidRequest`).
    public static func invalidRequest(_ message: String) -> WatchHTTPResponse {
        json(400, ["error": ["message": .string(message), "type": "invalid_request_error"]])
    }

    /// 413 for a body over the limit.
    public static let payloadTooLarge = json(413, ["error": ["message": "Payload too large", "type": "invalid_request_error"]])

    /// 405 `Method Not Allowed` with `Allow` (upstream `sendMethodNotAllowed`).
    public static func methodNotAllowed(allow: String) -> WatchHTTPResponse {
        WatchHTTPResponse(status: 405, headers: ["Allow": allow, "Content-Type": "text/plain; charset=utf-8"],
                          body: Array("Method Not Allowed".utf8))
    }

    /// 429 with `Retry-After` in whole seconds (upstream `sendRateLimited`).
    public static func rateLimited(retryAfterMs: Int64) -> WatchHTTPResponse {
        var response = json(429, ["error": [
            "message": "Too many failed authentication attempts. Please try again later.", "type": "rate_limited",
        ]])
        if retryAfterMs > 0 { response.headers["Retry-After"] = String((retryAfterMs + 999) / 1000) }
        return response
    }

    /// 503 while the Gateway shuts down.
    public static let shuttingDown = json(503, ["ok": false, "error": "gateway shutting down"])

    /// 404 for an unknown path under the Watch prefix.
    public static let notFound = json(404, ["ok": false, "error": "not found"])
}

/// A response is also the failure of a step that refuses a request (the answer to send).
extension WatchHTTPResponse: Error {}
