import Foundation
import Locking
import TestSupport
import Testing
@testable import WebSocketTransport

/// Plain HTTP on a WebSocket server's port, checked with an independent client (the Python
/// standard library's `http.client` and raw sockets, `Tests/Interop/http_peer.py`), over TCP and
/// TLS. Breaks tried: answering every plain request 426 (the server without a responder) fails
/// every status check; dropping keep-alive (closing after each response) fails `reused`;
/// answering pipelined requests concurrently out of order fails the order check.
@Suite(.enabled(if: HTTPPeer.shouldRun, "Python not found (.venv or OPENCLAW_PYTHON)"))
struct HTTPServerWireTests {
    /// Routes for the checks; `/poll` waits until `release` is signalled.
    private static func router(release: WakeSignal, entered: WakeSignal) -> HTTPRouter {
        let router = HTTPRouter()
        router.route("GET", prefix: "/hello") { request in
            .text(200, "hello \(request.path) from \(request.remoteAddress) secure=\(request.isSecure)")
        }
        router.route("POST", prefix: "/echo") { request in
            .content(200, type: "application/octet-stream", request.body)
        }
        router.route("GET", prefix: "/poll") { _ in
            entered.signal()
            await release.wait()
            return .text(200, "released")
        }
        return router
    }

    private static let limits = WebSocketConfiguration(maxHandshakeBytes: 2048, maxHTTPBodyBytes: 100)

    @Test(arguments: WebSocketTLS.isAvailable ? [false, true] : [false])
    func routesStatusesAndLimits(tls: Bool) async throws {
        let certificate = tls ? try TestCertificate() : nil
        defer { certificate?.remove() }
        let router = Self.router(release: WakeSignal(), entered: WakeSignal())
        try await WebSocketServer.withServer(configuration: Self.limits, tls: certificate?.server, http: router) { server in
            let base = "\(tls ? "https" : "http")://127.0.0.1:\(server.port)"
            let results = try await HTTPPeer.run(base: base, [
                .request(path: "/hello/x?y=1"),
                .request(method: "POST", path: "/echo", body: "ping"),
                .request(path: "/missing"),
                .request(method: "DELETE", path: "/hello"),
                .request(method: "POST", path: "/echo", body: String(repeating: "z", count: 101)),
                .raw("NONSENSE\r\n\r\n"),
                .raw("GET / HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "h", count: 3000))\r\n\r\n"),
                .raw("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
                .raw("GET /hello/1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nabGET /hello/3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
                .raw("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"),
                .raw("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\npi\r\n2;x=y\r\nng\r\n0\r\n\r\n"),
                .raw("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n"),
            ])
            #expect(results.count == 12)
            guard results.count == 12 else { return }
            #expect(results[0].status == 200)
            #expect(results[0].body == "hello /hello/x from 127.0.0.1 secure=\(tls)\n")
            #expect(results[1].status == 200 && results[1].body == "ping")
            #expect(results[1].reused, "keep-alive: the second request used the first one's connection")
            #expect(results[2].status == 404)
            #expect(results[2].reused)
            #expect(results[3].status == 405 && results[3].headers["allow"] == "GET, HEAD")
            #expect(results[4].status == 413, "\(results[4])")
            #expect(results[5].rawStatusLine == "HTTP/1.1 400 Bad Request" && results[5].closed, "\(results[5])")
            #expect(results[6].rawStatusLine == "HTTP/1.1 431 Request Header Fields Too Large" && results[6].closed, "\(results[6])")
            #expect(results[7].rawStatusLine == "HTTP/1.1 501 Not Implemented" && results[7].closed, "\(results[7])")
            // Pipelined: three responses, in order, then the close the last one asked for.
            let pipelined = results[8].raw ?? ""
            // (A body without a final line break runs into the next status line.)
            #expect(pipelined.components(separatedBy: "HTTP/1.1 200 OK\r\n").count - 1 == 3, "\(results[8])")
            #expect(!pipelined.contains("HTTP/1.1 4") && !pipelined.contains("HTTP/1.1 5"), "\(results[8])")
            let first = pipelined.range(of: "hello /hello/1")
            let second = pipelined.range(of: "\r\n\r\nab")
            let third = pipelined.range(of: "hello /hello/3")
            #expect(first != nil && second != nil && third != nil)
            if let first, let second, let third {
                #expect(first.lowerBound < second.lowerBound && second.lowerBound < third.lowerBound)
            }
            #expect(results[8].closed)
            // A WebSocket upgrade with a wrong version still gets the WebSocket answer.
            #expect(results[9].rawStatusLine == "HTTP/1.1 426 Upgrade Required", "\(results[9])")
            // Chunked bodies: decoded (a chunk extension ignored); over the limit 413 before the chunk comes.
            #expect(results[10].raw?.hasPrefix("HTTP/1.1 200 OK\r\n") == true && results[10].raw?.hasSuffix("\r\n\r\nping") == true,
                    "\(results[10])")
            #expect(results[11].rawStatusLine == "HTTP/1.1 413 Content Too Large" && results[11].closed, "\(results[11])")
        }
    }

    @Test(arguments: WebSocketTLS.isAvailable ? [false, true] : [false])
    func upgradesStillBecomeWebSocketsNextToHTTP(tls: Bool) async throws {
        let certificate = tls ? try TestCertificate() : nil
        defer { certificate?.remove() }
        let router = Self.router(release: WakeSignal(), entered: WakeSignal())
        try await WebSocketServer.withServer(tls: certificate?.server, http: router) { server in
            let echo = Task {
                for await connection in server.connections {
                    for await message in connection.messages { try? await connection.send(message) }
                }
            }
            defer { echo.cancel() }
            let scheme = tls ? "wss" : "ws"
            let configuration = certificate?.pinned ?? WebSocketConfiguration()
            let client = try await WebSocketClient.connect(to: "\(scheme)://127.0.0.1:\(server.port)/hello", configuration: configuration)
            try await client.send(text: "still a websocket")
            var iterator = client.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text("still a websocket"))
            await client.close()
            let results = try await HTTPPeer.run(base: "\(tls ? "https" : "http")://127.0.0.1:\(server.port)", [.request(path: "/hello")])
            #expect(results.first?.status == 200)
        }
    }

    @Test func aLongPollWaitsAndShutdownAnswersIt503() async throws {
        let release = WakeSignal()
        let entered = WakeSignal()
        let router = Self.router(release: release, entered: entered)
        try await WebSocketServer.withServer(http: router) { server in
            let base = "http://127.0.0.1:\(server.port)"
            // A poll released by the test: the response comes when the handler returns.
            async let released = HTTPPeer.run(base: base, [.request(path: "/poll")])
            await entered.wait()
            release.signal()
            #expect(try await released.first?.body == "released\n")
            // A poll still waiting at shutdown gets 503.
            release.reset()
            async let cut = HTTPPeer.run(base: base, [.request(path: "/poll")])
            await entered.wait()
            router.shutDown()
            let answer = try await cut
            #expect(answer.first?.status == 503, "\(answer)")
            #expect(answer.first?.headers["connection"] == "close")
            #expect(try await HTTPPeer.run(base: base, [.request(path: "/hello")]).first?.status == 503)
        }
    }

    @Test func withoutARouterPlainRequestsStillGet426() async throws {
        try await WebSocketServer.withServer { server in
            let results = try await HTTPPeer.run(base: "http://127.0.0.1:\(server.port)", [.request(path: "/hello")])
            #expect(results.first?.status == 426)
        }
    }
}

/// The same HTTP layer on the in-memory network: requests go through the parser, router and
/// response writer without a socket.
struct InMemoryHTTPTests {
    @Test func requestsStatusesAndPipeliningInMemory() async throws {
        let network = InMemoryNetwork()
        let router = HTTPRouter()
        router.route("GET", prefix: "/hello") { request in .text(200, "hi \(request.queryValue("name") ?? "")") }
        let listener = try network.listen(configuration: WebSocketConfiguration(maxHandshakeBytes: 512, maxHTTPBodyBytes: 4), http: router)
        let base = "http://127.0.0.1:\(listener.port)"
        let hello = try await network.send(HTTPRequest(method: "GET", target: "/"), to: base + "/hello?name=a%20b")
        #expect(hello.status == 200 && hello.body == Array("hi a b\n".utf8))
        #expect(try await network.send(HTTPRequest(method: "GET", target: "/"), to: base + "/nope").status == 404)
        #expect(try await network.send(HTTPRequest(method: "POST", target: "/", body: Array("12345".utf8)), to: base + "/hello").status == 413)
        let raw = try await network.exchange(
            Array("GET /hello?name=1 HTTP/1.1\r\nHost: a\r\n\r\nGET /hello?name=2 HTTP/1.1\r\nHost: a\r\n\r\nBAD\r\n\r\n".utf8),
            host: "127.0.0.1", port: listener.port)
        let text = String(decoding: raw, as: UTF8.self)
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count - 1 == 2, "\(text)")
        #expect(text.contains("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
        if let one = text.range(of: "hi 1"), let two = text.range(of: "hi 2"), let bad = text.range(of: "HTTP/1.1 400") {
            #expect(one.lowerBound < two.lowerBound && two.lowerBound < bad.lowerBound)
        } else {
            Issue.record("missing responses: \(text)")
        }
        listener.close()
        await #expect(throws: WebSocketError.self) {
            try await network.send(HTTPRequest(method: "GET", target: "/"), to: base + "/hello")
        }
    }

    @Test func withoutARouterInMemoryRequestsGet426() async throws {
        let network = InMemoryNetwork()
        let listener = try network.listen()
        let response = try await network.send(HTTPRequest(method: "GET", target: "/"), to: "http://127.0.0.1:\(listener.port)/x")
        #expect(response.status == 426)
    }
}
