import Foundation
import Locking
import Testing
@testable import WebSocketTransport

/// Our client against our server over loopback, with each multiplexer of the platform for both
/// (`epoll` and `poll` on Linux; `poll`, the only one on Apple platforms).
struct EndToEndTests {
    @Test(arguments: PollerKind.allCases)
    func echoesTextAndBinaryAndExposesTheRequest(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect("ws://127.0.0.1:\(server.server.port)/gateway?token=x", headers: ["X-Test": "42"])
            let accepted = try await server.nextAccepted()
            #expect(accepted.requestPath == "/gateway?token=x")
            #expect(accepted.requestHeaders["x-test"] == "42")
            #expect(accepted.remoteAddress == "127.0.0.1")
            #expect(accepted.remotePort > 0)
            #expect(!accepted.isClient)
            #expect(client.isClient)
            try await client.send(text: "héllo 🎉")
            #expect(try await nextMessage(client) == .text("héllo 🎉"))
            try await client.send(binary: [0, 1, 2, 255])
            #expect(try await nextMessage(client) == .binary([0, 1, 2, 255]))
            try await client.send(.text(""))
            #expect(try await nextMessage(client) == .text(""))
            let info = await client.close()
            #expect(info.code == .normal)
            #expect(info.wasClean)
            #expect(info.initiatedLocally)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func echoesOneMebibyteMessages(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let payload = pattern(1 << 20)
            try await client.send(.binary(payload))
            #expect(try await nextMessage(client) == .binary(payload))
            let text = String(repeating: "ü", count: 1 << 19)
            try await client.send(.text(text))
            #expect(try await nextMessage(client) == .text(text))
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func keepsOrderAcrossManyMessages(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            for index in 0..<2000 { try await client.send(text: "m\(index)") }
            var iterator = client.messages.makeAsyncIterator()
            for index in 0..<2000 {
                let message = await iterator.next()
                #expect(message == .text("m\(index)"))
                if message != .text("m\(index)") { break }
            }
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases, [1, 2, 7, 64])
    func reassemblesFragmentedMessagesWithInterleavedPingsInBothDirections(poller: PollerKind, fragments: Int) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            let text = "fragmented 日本語 message with multi-byte characters €€€"
            try await client.send(.text(text), fault: .fragmented(into: fragments, interleavingPings: true))
            #expect(try await nextMessage(client) == .text(text))
            try await accepted.send(.binary(pattern(5000)), fault: .fragmented(into: fragments, interleavingPings: true))
            #expect(try await nextMessage(client) == .binary(pattern(5000)))
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases, [1, 3, 7])
    func receivedMessagesTellHowManyFramesCarriedEach(poller: PollerKind, fragments: Int) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            try await accepted.send(.text("in pieces"), fault: .fragmented(into: fragments, interleavingPings: true))
            try await accepted.send(.binary([1, 2, 3]))
            var iterator = client.receivedMessages.makeAsyncIterator()
            let first = try #require(await iterator.next())
            #expect(first == WebSocketReceivedMessage(.text("in pieces"), frameCount: fragments))
            #expect(first.isFragmented == (fragments > 1))
            let second = try #require(await iterator.next())
            #expect(second == WebSocketReceivedMessage(.binary([1, 2, 3]), frameCount: 1))
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func answersPingsInBothDirections(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            try await client.ping([1, 2, 3])
            try await client.ping()
            try await accepted.ping(Array("server ping".utf8))
            await #expect(throws: WebSocketError.invalidArgument) { try await client.ping(pattern(126)) }
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func aPeerWithoutAutomaticPongsLeavesThePingUnanswered(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            accepted.setAutomaticPongs(false)
            // The ping waits until the connection ends; then it fails.
            let ping = Task { try await client.ping([9]) }
            try await client.send(text: "still alive")
            #expect(try await nextMessage(client) == .text("still alive"))
            await accepted.close(code: .goingAway)
            await #expect(throws: WebSocketError.connectionClosed) { try await ping.value }
        }
    }

    @Test(arguments: PollerKind.allCases)
    func clientCloseCodeAndReasonReachTheServer(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            let clientInfo = await client.close(code: WebSocketCloseCode(4000), reason: "tick timeout")
            let serverInfo = await accepted.waitUntilClosed()
            #expect(clientInfo.code.rawValue == 4000)
            #expect(clientInfo.reason == "tick timeout")
            #expect(clientInfo.initiatedLocally)
            #expect(clientInfo.wasClean)
            #expect(serverInfo.received == WebSocketCloseFrame(code: WebSocketCloseCode(4000), reason: "tick timeout"))
            #expect(serverInfo.sent?.code?.rawValue == 4000)  // echoed
            #expect(!serverInfo.initiatedLocally)
            #expect(serverInfo.code.rawValue == 4000)
            #expect(serverInfo.wasClean)
            await #expect(throws: WebSocketError.connectionClosed) { try await client.send(text: "late") }
        }
    }

    @Test(arguments: PollerKind.allCases)
    func serverCloseReachesTheClientAndEndsItsMessages(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            try await accepted.send(text: "before close")
            let serverInfo = await accepted.close(code: .policyViolation, reason: "pairing required: x")
            #expect(serverInfo.code == .policyViolation)
            #expect(serverInfo.wasClean)
            #expect(await drain(client) == [.text("before close")])
            let clientInfo = await client.waitUntilClosed()
            #expect(clientInfo.received == WebSocketCloseFrame(code: .policyViolation, reason: "pairing required: x"))
            #expect(clientInfo.code == .policyViolation)
            #expect(!clientInfo.initiatedLocally)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func anEmptyCloseFrameIsReportedAsNoStatus(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            await client.close(code: .noStatus)
            let info = await accepted.waitUntilClosed()
            #expect(info.received == WebSocketCloseFrame(code: nil))
            #expect(info.code == .noStatus)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func overlongCloseReasonsAreTruncated(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            await client.close(code: .normal, reason: String(repeating: "r", count: 300))
            let info = await accepted.waitUntilClosed()
            #expect(info.received?.reason.utf8.count == 123)
        }
    }

    static let malformedFrames: [(String, [UInt8], WebSocketCloseCode)] = [
        ("unmasked frame", WebSocketFrame(opcode: .text, payload: Array("x".utf8)).encoded(), .protocolError),
        ("unknown opcode", maskedFrame(WebSocketOpcode(rawValue: 0x5), [1]), .protocolError),
        ("reserved bits", maskedFrame(.text, Array("x".utf8), reservedBits: 2), .protocolError),
        ("invalid UTF-8", maskedFrame(.text, [0xFF, 0xFE]), .invalidPayload),
        ("fragmented ping", maskedFrame(.ping, [], fin: false), .protocolError),
        ("long ping", maskedFrame(.ping, pattern(126)), .protocolError),
        ("bad close code", maskedFrame(.close, [0x03, 0xEE]), .protocolError),
        ("invalid close reason", maskedFrame(.close, [0x03, 0xE8, 0xC0]), .invalidPayload),
    ]

    @Test(arguments: PollerKind.allCases, malformedFrames)
    func theServerFailsMalformedClientFramesWithTheRightCode(poller: PollerKind, malformed: (String, [UInt8], WebSocketCloseCode)) async throws {
        let (name, frame, code) = malformed
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            try await client.sendRaw(frame)
            let clientInfo = await client.waitUntilClosed()
            let serverInfo = await accepted.waitUntilClosed()
            #expect(clientInfo.received?.code == code, "\(name): \(clientInfo)")
            #expect(serverInfo.code == code, "\(name): \(serverInfo)")
            #expect(serverInfo.initiatedLocally, "\(name)")
        }
    }

    @Test(arguments: PollerKind.allCases)
    func theClientFailsMalformedServerFrames(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            // A masked frame from a server is a protocol error for the client.
            try await accepted.sendRaw(maskedFrame(.text, Array("x".utf8)))
            let clientInfo = await client.waitUntilClosed()
            #expect(clientInfo.code == .protocolError)
            #expect(clientInfo.initiatedLocally)
            #expect(await accepted.waitUntilClosed().received?.code == .protocolError)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func theMessageSizeLimitCanChangeAtRuntime(poller: PollerKind) async throws {
        var configuration = WebSocketConfiguration()
        configuration.maxMessageSize = 64 * 1024
        try await withEchoServer(poller: poller, configuration: configuration) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            #expect(accepted.maxMessageSize == 64 * 1024)
            try await client.send(.binary(pattern(64 * 1024)))
            #expect(try await nextMessage(client) == .binary(pattern(64 * 1024)))
            accepted.setMaxMessageSize(25 * 1024 * 1024)
            try await client.send(.binary(pattern(1 << 20)))
            #expect(try await nextMessage(client) == .binary(pattern(1 << 20)))
            accepted.setMaxMessageSize(1000, closeReason: "preauth payload too large")
            try await client.send(.binary(pattern(1001)))
            let info = await client.waitUntilClosed()
            #expect(info.received == WebSocketCloseFrame(code: .messageTooBig, reason: "preauth payload too large"))
            #expect(await accepted.waitUntilClosed().code == .messageTooBig)
        }
    }

    @Test(arguments: PollerKind.allCases, [SendFault.byteByByte, .splitWrites(at: [1, 2, 5, 9, 100]), .fragmented(into: 3).combined(with: .byteByByte)])
    func splitWritesArriveAsOneMessage(poller: PollerKind, fault: SendFault) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            let text = "split across many TCP writes: ∑ é 🎉"
            try await client.send(.text(text), fault: fault)
            #expect(try await nextMessage(client) == .text(text))
            try await accepted.send(.binary(pattern(300)), fault: fault)
            #expect(try await nextMessage(client) == .binary(pattern(300)))
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func aTCPResetIsObservedAsAbnormalClosure(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            client.abort()
            let serverInfo = await accepted.waitUntilClosed()
            #expect(serverInfo.code == .abnormal)
            #expect(!serverInfo.wasClean)
            #expect(serverInfo.received == nil)
            #expect(client.closeInfo?.code == .abnormal)
            #expect(client.closeInfo?.initiatedLocally == true)

            let second = try await server.connect()
            let secondAccepted = try await server.nextAccepted()
            secondAccepted.abort()
            #expect(await second.waitUntilClosed().code == .abnormal)
            await #expect(throws: WebSocketError.connectionClosed) { try await second.send(text: "gone") }
        }
    }

    @Test(arguments: PollerKind.allCases)
    func dropFaultsDiscardMessagesSilently(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            let accepted = try await server.nextAccepted()
            accepted.dropNextOutboundMessages()
            try await accepted.send(text: "lost ack")
            try await accepted.send(text: "delivered")
            try await accepted.send(.text("dropped too"), fault: .drop)
            try await accepted.send(text: "last")
            #expect(try await nextMessage(client) == .text("delivered"))
            #expect(try await nextMessage(client) == .text("last"))
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func delayedSendsStillArrive(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let client = try await server.connect()
            try await client.send(.text("late"), fault: .delayed(by: .milliseconds(20)))
            #expect(try await nextMessage(client) == .text("late"))
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func aFullOutboundBufferClosesWithSlowConsumer(poller: PollerKind) async throws {
        var serverConfiguration = WebSocketConfiguration()
        serverConfiguration.maxOutboundBufferBytes = 256 * 1024
        serverConfiguration.closeTimeout = .milliseconds(300)
        try await withEchoServer(poller: poller, configuration: serverConfiguration) { server in
            var clientConfiguration = WebSocketConfiguration()
            clientConfiguration.inboundBufferHighWaterMark = 64 * 1024  // the client stops reading early
            let client = try await server.connect(configuration: clientConfiguration)
            let accepted = try await server.nextAccepted()
            var failure: WebSocketError?
            let payload = pattern(64 * 1024)
            for _ in 0..<10_000 {
                // A send that does not wait never gives the pool thread back: let other tests run.
                await Task.yield()
                do {
                    try await accepted.send(.binary(payload))
                } catch let error as WebSocketError {
                    failure = error
                    break
                }
            }
            #expect(failure == .outboundBufferFull)
            let info = await accepted.waitUntilClosed()
            #expect(info.sent == WebSocketCloseFrame(code: .policyViolation, reason: "slow consumer"))
            #expect(info.code == .policyViolation)
            _ = await drain(client)
            #expect(client.closeInfo != nil)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func aSlowReaderGetsEveryMessageAfterBackpressure(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            var configuration = WebSocketConfiguration()
            configuration.inboundBufferHighWaterMark = 32 * 1024
            let client = try await server.connect(configuration: configuration)
            let accepted = try await server.nextAccepted()
            let count = 200
            let sender = Task {
                for index in 0..<count { try await accepted.send(.binary(pattern(16 * 1024, seed: UInt8(index % 256)))) }
            }
            var iterator = client.messages.makeAsyncIterator()
            for index in 0..<count {
                let message = await iterator.next()
                #expect(message == .binary(pattern(16 * 1024, seed: UInt8(index % 256))))
            }
            try await sender.value
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func nonUpgradeRequestsGetAnHTTPError(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let port = server.server.port
            let response = try await onOwnThread {
                let raw = try RawTCPClient(port: port)
                raw.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                defer { raw.close() }
                return String(decoding: raw.readAll(), as: UTF8.self)
            }
            #expect(response.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"))
            #expect(response.contains("Sec-WebSocket-Version: 13"))
            let bad = try await onOwnThread {
                let raw = try RawTCPClient(port: port)
                raw.write("BREW /pot HTCPCP/1.0\r\n\r\n")
                defer { raw.close() }
                return String(decoding: raw.readAll(), as: UTF8.self)
            }
            #expect(bad.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            // The server still works.
            let client = try await server.connect()
            try await client.send(text: "ok")
            #expect(try await nextMessage(client) == .text("ok"))
            await client.close()
        }
    }

    @Test(arguments: PollerKind.allCases)
    func framesSentRightAfterTheHandshakeAreNotLost(poller: PollerKind) async throws {
        try await WebSocketServer.withServer(configuration: WebSocketConfiguration().with(poller)) { server in
            let port = server.port
            let raw = Task { try await onOwnThread {
                let raw = try RawTCPClient(port: port)
                defer { raw.close() }
                // The request, two frames and a close frame in one write.
                raw.write(Array(("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                 + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
                          + maskedFrame(.text, Array("one".utf8)) + maskedFrame(.text, Array("two".utf8))
                          + maskedFrame(.close, [0x03, 0xE8]))
                return raw.readAll()
            } }
            var connections = server.connections.makeAsyncIterator()
            let accepted = try #require(await connections.next())
            #expect(await drain(accepted) == [.text("one"), .text("two")])
            #expect(await accepted.waitUntilClosed().received == WebSocketCloseFrame(code: .normal))
            let echoed = try await raw.value
            guard let end = WebSocketHandshake.endOfHead(in: echoed, searchingFrom: 0) else {
                Issue.record("no response head")
                return
            }
            #expect(String(decoding: echoed[..<end], as: UTF8.self).hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
            var parser = WebSocketInboundParser(role: .client, maxMessageSize: 1000)
            let events = parser.parse(Array(echoed[end...]))
            #expect(events == [.close([0x03, 0xE8])])  // 1000, no reason
        }
    }

    @Test(arguments: PollerKind.allCases)
    func aPeerDyingMidFrameEndsTheConnectionCleanly(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            let port = server.server.port
            try await onOwnThread {
                let raw = try RawTCPClient(port: port)
                _ = raw.upgrade()
                raw.write(Array(maskedFrame(.binary, pattern(1000)).prefix(500)))
                raw.close()
            }
            let accepted = try await server.nextAccepted()
            let info = await accepted.waitUntilClosed()
            #expect(info.code == .abnormal)
            #expect(await drain(accepted).isEmpty)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func clientConnectFailuresAreReported(poller: PollerKind) async throws {
        // A port held by a socket that is bound but never listens: the kernel refuses connects to
        // it, and no other test's server can take it while this test runs (a port that was merely
        // freed can be handed to a server another test starts in parallel).
        let configuration = WebSocketConfiguration().with(poller)
        let (fd, port) = try boundButNotListening()
        defer { _ = systemClose(fd) }
        await #expect(throws: WebSocketError.connectionFailed) {
            try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", configuration: configuration)
        }
        await #expect(throws: WebSocketError.invalidURL) {
            try await WebSocketClient.connect(to: "https://127.0.0.1/", configuration: configuration)
        }
    }

    @Test(arguments: PollerKind.allCases)
    func shutdownEndsEveryConnectionAndStopsTheLoop(poller: PollerKind) async throws {
        let server = try await EchoServer(configuration: WebSocketConfiguration().with(poller))
        var clients: [WebSocketConnection] = []
        for _ in 0..<5 { clients.append(try await server.connect()) }
        for client in clients {
            try await client.send(text: "hi")
            #expect(try await nextMessage(client) == .text("hi"))
        }
        await server.shutdown()
        #expect(server.server.isShutDown)
        #expect(server.server.loop.registrationCount == 0)
        for client in clients {
            let info = try await withDeadline(10, "client end") { await client.waitUntilClosed() }
            #expect(info.code == .goingAway || info.code == .abnormal, "\(info)")
        }
        // The accept stream has finished.
        var iterator = server.server.connections.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        await #expect(throws: WebSocketError.connectionFailed) { try await server.connect() }
    }

    @Test(arguments: PollerKind.allCases)
    func theSharedClientLoopStopsWhenTheLastClientEnds(poller: PollerKind) async throws {
        try await withEchoServer(poller: poller) { server in
            var configuration = WebSocketConfiguration()
            configuration.clientLoopName = "WebSocketClient-\(poller)-stopTest"  // a shared loop no other test uses
            let client = try await server.connect(configuration: configuration)
            let loop = try #require(client.loop)
            #expect(!loop.isTerminated)
            await client.close()
            try await withDeadline(10, "shared loop stop") { await loop.waitUntilTerminated() }
            #expect(loop.isTerminated)
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/net/if_inet6") || !FileManager.default.fileExists(atPath: "/proc")),
          arguments: PollerKind.allCases)
    func worksOverIPv6Loopback(poller: PollerKind) async throws {
        let configuration = WebSocketConfiguration().with(poller)
        let server: WebSocketServer
        do {
            server = try await WebSocketServer.start(host: "::1", configuration: configuration)
        } catch {
            // IPv6 can be present but disabled on loopback (containers).
            withKnownIssue("IPv6 loopback unavailable: \(error)") { throw error }
            return
        }
        let task = Task {
            for await connection in server.connections {
                #expect(connection.remoteAddress == "::1")
                for await message in connection.messages { try? await connection.send(message) }
            }
        }
        let client = try await WebSocketClient.connect(to: "ws://[::1]:\(server.port)/v6", configuration: configuration)
        #expect(client.remoteAddress == "::1")
        try await client.send(text: "over v6")
        #expect(try await nextMessage(client) == .text("over v6"))
        await client.close()
        await server.shutdown()
        await task.value
    }
}
