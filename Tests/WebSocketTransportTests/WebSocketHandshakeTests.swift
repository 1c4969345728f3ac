import Testing
@testable import WebSocketTransport

struct WebSocketHandshakeTests {
    private static let validRequest = "GET /gateway?x=1 HTTP/1.1\r\nHost: 127.0.0.1:1234\r\nUpgrade: websocket\r\n"
        + "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        + "Sec-WebSocket-Version: 13\r\nX-Custom:  value \r\n\r\n"

    @Test func computesTheRFCAcceptValue() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func acceptsAValidUpgradeAndKeepsBytesThatFollowIt() {
        var parser = ServerHandshakeParser(maxBytes: 16 * 1024)
        let action = parser.consume(Array(Self.validRequest.utf8) + [0x81, 0x80])
        guard case .accept(let request, let response, let leftover) = action else {
            Issue.record("not accepted: \(action)")
            return
        }
        #expect(request.target == "/gateway?x=1")
        #expect(request.headers["x-custom"] == "value")
        #expect(request.headers["HOST"] == "127.0.0.1:1234")
        #expect(leftover == [0x81, 0x80])
        let text = String(decoding: response, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(text.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
    }

    @Test func acceptsARequestArrivingByteByByte() {
        var parser = ServerHandshakeParser(maxBytes: 16 * 1024)
        var last = ServerHandshakeParser.Action.needMoreData
        for byte in Array(Self.validRequest.utf8) {
            #expect(last == .needMoreData)
            last = parser.consume([byte])
        }
        guard case .accept = last else {
            Issue.record("not accepted: \(last)")
            return
        }
    }

    static let rejections: [(String, String, Int)] = [
        ("plain GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 426),
        ("wrong version", validRequest.replacingOccurrences(of: "Version: 13", with: "Version: 8"), 426),
        ("POST", validRequest.replacingOccurrences(of: "GET /", with: "POST /"), 400),
        ("HTTP/1.0", validRequest.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/1.0"), 400),
        ("no Connection: Upgrade", validRequest.replacingOccurrences(of: "keep-alive, Upgrade", with: "keep-alive"), 400),
        ("no Host", validRequest.replacingOccurrences(of: "Host: 127.0.0.1:1234\r\n", with: ""), 400),
        ("short key", validRequest.replacingOccurrences(of: "dGhlIHNhbXBsZSBub25jZQ==", with: "c2hvcnQ="), 400),
        ("garbage", "\u{01}\u{02}\r\n\r\n", 400),
        ("folded header", validRequest.replacingOccurrences(of: "X-Custom:  value \r\n", with: "X-Custom: a\r\n b\r\n"), 400),
    ]

    @Test(arguments: rejections)
    func rejectsInvalidUpgradeRequests(_ name: String, _ request: String, _ status: Int) {
        var parser = ServerHandshakeParser(maxBytes: 16 * 1024)
        guard case .reject(let received, let response) = parser.consume(Array(request.utf8)) else {
            Issue.record("\(name): not rejected")
            return
        }
        #expect(received == status, "\(name)")
        #expect(String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 \(status) "), "\(name)")
    }

    @Test func rejectsAnOversizedHead() {
        var parser = ServerHandshakeParser(maxBytes: 100)
        guard case .reject(let status, _) = parser.consume(Array(String(repeating: "a", count: 200).utf8)) else {
            Issue.record("not rejected")
            return
        }
        #expect(status == 431)
    }

    @Test func clientValidatesTheServerResponse() throws {
        let url = try WebSocketURL(parsing: "ws://[::1]:8080/path?q=1")
        var handshake = ClientHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==", maxBytes: 4096)
        let request = String(decoding: handshake.request(for: url, headers: ["Origin": "test"]), as: UTF8.self)
        #expect(request.hasPrefix("GET /path?q=1 HTTP/1.1\r\nHost: [::1]:8080\r\n"))
        #expect(request.contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        #expect(request.contains("Origin: test\r\n"))
        let response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        let result1 = handshake.consume(Array(response.utf8) + [0x81])
        #expect(result1 == .upgraded(
            WebSocketHTTPHeaders([("Upgrade", "WebSocket"), ("Connection", "upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")]),
            leftover: [0x81]))
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: wrong=\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
        "nonsense\r\n\r\n",
    ])
    func clientRejectsWrongResponses(_ response: String) {
        var handshake = ClientHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==", maxBytes: 4096)
        guard case .failed = handshake.consume(Array(response.utf8)) else {
            Issue.record("accepted: \(response)")
            return
        }
    }

    @Test func parsesWebSocketURLs() throws {
        let plain = try WebSocketURL(parsing: "ws://example.com")
        #expect(plain.host == "example.com")
        #expect(plain.port == 80)
        #expect(plain.target == "/")
        #expect(plain.hostHeader == "example.com")
        let full = try WebSocketURL(parsing: "WS://127.0.0.1:18789/a/b?c=d")
        #expect(full.host == "127.0.0.1")
        #expect(full.port == 18789)
        #expect(full.target == "/a/b?c=d")
        let query = try WebSocketURL(parsing: "ws://h:1?x")
        #expect(query.target == "/?x")
        let v6 = try WebSocketURL(parsing: "ws://[::1]:9/")
        #expect(v6.host == "::1")
        #expect(v6.hostHeader == "[::1]:9")
    }

    @Test func parsesSecureURLsWithTheirDefaultPort() throws {
        let secure = try WebSocketURL(parsing: "wss://gw.example/ws")
        #expect(secure.secure)
        #expect(secure.port == 443)
        #expect(secure.hostHeader == "gw.example")
        let explicit = try WebSocketURL(parsing: "WSS://[::1]:18789")
        #expect(explicit.secure && explicit.port == 18789 && explicit.hostHeader == "[::1]:18789")
        #expect(try !WebSocketURL(parsing: "ws://h/").secure)
    }

    @Test(arguments: ["wss://", "http://host/", "ws://", "ws://host:0/", "ws://host:70000/", "ws://host:x/",
                      "ws://user@host/", "ws://host/#frag", "ws://[::1/", "ws://:80/"])
    func rejectsInvalidURLs(_ url: String) {
        #expect(throws: WebSocketError.invalidURL) { try WebSocketURL(parsing: url) }
    }
}
