import Foundation
import Locking
import Testing
@testable import WebSocketTransport

/// Interoperability with an independent implementation: the Python `websockets` package.
/// Skipped (with the reason) when the peer is missing, unless `OPENCLAW_REQUIRE_INTEROP=1`.
@Suite(.enabled(if: PythonPeer.shouldRun, "Python with `websockets` not found (.venv or OPENCLAW_PYTHON)"))
struct InteropTests {
    /// How each server-side connection ended, by request path.
    private final class Endings: Sendable {
        let value = Locked<[(path: String, info: WebSocketCloseInfo)]>([])
        func record(_ path: String, _ info: WebSocketCloseInfo) { value.withLock { $0.append((path, info)) } }
        func infos(for path: String) -> [WebSocketCloseInfo] { value.withLock { $0.filter { $0.path == path }.map(\.info) } }
    }

    /// Behaviour of our server, chosen by the Python client's request path.
    private static func serve(_ connection: WebSocketConnection) async {
        let path = connection.requestPath
        switch path {
        case "/small":
            connection.setMaxMessageSize(1024)
            try? await connection.send(text: "ready")
        case "/ping-me":
            do {
                try await connection.ping(Array("from swift".utf8))
                try await connection.send(text: "pong received")
            } catch {
                await connection.close(code: .internalError, reason: "ping failed: \(error)")
            }
        case "/close-4000":
            await connection.close(code: WebSocketCloseCode(4000), reason: "bye from swift")
        case "/malformed":
            try? await connection.sendRaw([0xC1, 0x01, 0x78])  // RSV1 set, no extension negotiated
        case "/fragmented":
            try? await connection.send(.text("fragmented by swift ✓"), fault: .fragmented(into: 4, interleavingPings: true))
        default:
            break
        }
        for await message in connection.messages { try? await connection.send(message) }
    }

    /// A certificate for the TLS variants (`nil` for plain `ws://`).
    private static func certificate(_ tls: Bool) throws -> TestCertificate? {
        tls ? try TestCertificate() : nil
    }

    @Test(arguments: WebSocketTLS.isAvailable ? [false, true] : [false])
    func ourServerWithTheirClient(tls: Bool) async throws {
        _ = try PythonPeer.interpreter.get()
        let endings = Endings()
        let certificate = try Self.certificate(tls)
        defer { certificate?.remove() }
        try await WebSocketServer.withServer(tls: certificate?.server) { server in
            let serverTask = Task {
                await withDiscardingTaskGroup { group in
                    for await connection in server.connections {
                        group.addTask {
                            await Self.serve(connection)
                            endings.record(connection.requestPath, await connection.waitUntilClosed())
                        }
                    }
                }
            }
            defer { serverTask.cancel() }
            let peer = try PythonPeer(certificate.map { ["client", "wss://127.0.0.1:\(server.port)", "--pin", $0.fingerprint] }
                ?? ["client", "ws://127.0.0.1:\(server.port)"])
            let results = try await withDeadline(600, "python client scenarios") { () -> [String: PeerLine] in
                var results: [String: PeerLine] = [:]
                for await line in peer.lines {
                    if line.done == true { break }
                    if let scenario = line.scenario { results[scenario] = line }
                }
                return results
            }
            await peer.stop()
            let expected = ["text", "binary", "large", "fragmented", "ping", "server_ping", "close_1000", "close_1009",
                            "close_1002_unmasked", "close_1002_opcode", "close_1007", "server_close_4000",
                            "server_malformed", "server_fragmented"] + (tls ? ["wrong_pin"] : [])
            for scenario in expected {
                let line = results[scenario]
                #expect(line?.ok == true, "\(scenario): \(line.map { "\($0)" } ?? "no result")")
            }
            // Our side of the close handshakes. Connections end after the client is done with them;
            // wait for each one the assertions need.
            let needed: [(String, Int)] = [("/small", 1), ("/close-4000", 1), ("/malformed", 1)]
            try await withDeadline(120, "server-side endings") {
                // The deadline cancels this task: stop then, or it spins on after the test failed.
                while needed.contains(where: { endings.infos(for: $0.0).count < $0.1 }) {
                    try Task.checkCancellation()
                    await Task.yield()
                }
            }
            #expect(endings.infos(for: "/small").first?.sent?.code == .messageTooBig)
            #expect(endings.infos(for: "/close-4000").first?.code.rawValue == 4000)
            #expect(endings.infos(for: "/close-4000").first?.wasClean == true)
            #expect(endings.infos(for: "/malformed").first?.received?.code == .protocolError)
            let echoEndings = endings.infos(for: "/echo")
            #expect(echoEndings.contains { $0.received == WebSocketCloseFrame(code: .normal, reason: "bye from python") })
            #expect(echoEndings.filter { $0.sent?.code == .protocolError && $0.initiatedLocally }.count == 2)
            #expect(echoEndings.contains { $0.sent?.code == .invalidPayload && $0.initiatedLocally })
        }
    }

    @Test(arguments: WebSocketTLS.isAvailable ? [false, true] : [false])
    func ourClientWithTheirServer(tls: Bool) async throws {
        _ = try PythonPeer.interpreter.get()
        let certificate = try Self.certificate(tls)
        defer { certificate?.remove() }
        let peer = try PythonPeer(certificate.map { ["server", "--tls", $0.server.certificateFile, $0.server.privateKeyFile] }
            ?? ["server"])
        let configuration = certificate?.pinned ?? WebSocketConfiguration()
        do {
            try await withDeadline(600, "python server scenarios") {
                var lines = peer.lines.makeAsyncIterator()
                let port = try #require(await lines.next()?.port, "the peer did not print its port")
                let base = "\(tls ? "wss" : "ws")://127.0.0.1:\(port)"
                func open(_ path: String) async throws -> WebSocketConnection {
                    let connection = try await WebSocketClient.connect(to: base + path, configuration: configuration)
                    #expect(connection.isSecure == tls)
                    return connection
                }
                var closed: [String: PeerLine] = [:]
                func closedEvent(_ path: String) async throws -> PeerLine {
                    while closed[path] == nil {
                        guard let line = await lines.next() else { throw PeerUnavailable(reason: "the peer exited") }
                        if line.event == "closed", let linePath = line.path { closed[linePath] = line }
                    }
                    return closed[path]!
                }

                // Echo: text, binary, 1 MiB, fragmented (with pings in between), ping/pong, close 1000.
                let echo = try await open("/echo")
                try await echo.send(text: "héllo 🎉")
                #expect(try await nextMessage(echo) == .text("héllo 🎉"))
                try await echo.send(binary: [0, 1, 2, 254, 255])
                #expect(try await nextMessage(echo) == .binary([0, 1, 2, 254, 255]))
                try await echo.send(.binary(pattern(1 << 20)))
                #expect(try await nextMessage(echo) == .binary(pattern(1 << 20)))
                try await echo.send(.text("fragmented ✓ 日本語"), fault: .fragmented(into: 5, interleavingPings: true))
                #expect(try await nextMessage(echo) == .text("fragmented ✓ 日本語"))
                try await echo.send(.text("split writes"), fault: .byteByByte)
                #expect(try await nextMessage(echo) == .text("split writes"))
                try await echo.ping(Array("swift ping".utf8))
                let echoInfo = await echo.close(code: .normal, reason: "bye from swift")
                #expect(echoInfo.wasClean)
                #expect(echoInfo.received?.code == .normal)
                let echoClosed = try await closedEvent("/echo")
                #expect(echoClosed.received == 1000)
                #expect(echoClosed.reason == "bye from swift")

                // Their fragmented message.
                let fragmented = try await open("/fragmented")
                #expect(try await nextMessage(fragmented) == .text("fragmented by python ✓"))
                await fragmented.close()

                // They ping, we answer automatically.
                let pinged = try await open("/ping-you")
                #expect(try await nextMessage(pinged) == .text("pong received"))
                await pinged.close()

                // They close with 1001.
                let closing = try await open("/close-1001")
                let closingInfo = await closing.waitUntilClosed()
                #expect(closingInfo.received == WebSocketCloseFrame(code: .goingAway, reason: "python going away"))
                #expect(!closingInfo.initiatedLocally)

                // They send a malformed frame (RSV1): we fail the connection with 1002.
                let malformed = try await open("/malformed")
                let malformedInfo = await malformed.waitUntilClosed()
                #expect(malformedInfo.code == .protocolError)
                #expect(malformedInfo.initiatedLocally)
                #expect(try await closedEvent("/malformed").received == 1002)

                // A message over their 1.5 MiB limit: they close with 1009.
                let big = try await open("/big")
                try await big.send(.binary(pattern(2 << 20)))
                let bigInfo = await big.waitUntilClosed()
                #expect(bigInfo.received?.code == .messageTooBig)
                #expect(try await closedEvent("/big").sent == 1009)

                // We send a malformed frame (unmasked): they fail with 1002.
                let raw = try await open("/raw")
                try await raw.sendRaw(WebSocketFrame(opcode: .text, payload: Array("unmasked".utf8)).encoded())
                let rawInfo = await raw.waitUntilClosed()
                #expect(rawInfo.received?.code == .protocolError)
                #expect(try await closedEvent("/raw").sent == 1002)
            }
        } catch {
            await peer.stop()
            throw error
        }
        await peer.stop()
    }
}
