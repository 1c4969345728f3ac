import Foundation
import Testing
@testable import WebSocketTransport

@Suite("In-memory connections")
struct InMemoryTests {
    @Test func textAndBinaryMessagesArriveInOrder() async throws {
        let (client, server) = InMemoryWebSocket.pair(path: "/ws?x=1")
        try await client.send(text: "hello")
        try await client.send(binary: [1, 2, 3])
        #expect(try await nextMessage(server) == .text("hello"))
        #expect(try await nextMessage(server) == .binary([1, 2, 3]))
        try await server.send(text: "back")
        #expect(try await nextMessage(client) == .text("back"))
        #expect(server.requestPath == "/ws?x=1")
        #expect(server.remoteAddress == "127.0.0.1")
    }

    @Test func faultsWorkAsOverSockets() async throws {
        let (client, server) = InMemoryWebSocket.pair()
        let text = String(repeating: "fragment-me ", count: 50)
        // Fragments with pings between them, then byte-by-byte writes: the peer's parser
        // reassembles both and answers the pings by itself.
        try await server.send(.text(text), fault: .fragmented(into: 3, interleavingPings: true))
        try await server.send(.text("split"), fault: .byteByByte)
        #expect(try await nextMessage(client) == .text(text))
        #expect(try await nextMessage(client) == .text("split"))
        try await server.ping([7])
        // A dropped message is reported sent but never arrives.
        server.dropNextOutboundMessages(1)
        try await server.send(text: "lost")
        try await server.send(text: "kept")
        #expect(try await nextMessage(client) == .text("kept"))
    }

    @Test func theCloseHandshakeCompletesOnBothEnds() async throws {
        let (client, server) = InMemoryWebSocket.pair()
        let info = await server.close(code: WebSocketCloseCode(4000), reason: "tick timeout")
        #expect(info.code == WebSocketCloseCode(4000))
        #expect(info.initiatedLocally)
        let clientInfo = await client.waitUntilClosed()
        #expect(clientInfo.code == WebSocketCloseCode(4000))
        #expect(clientInfo.received?.reason == "tick timeout")
        #expect(!clientInfo.initiatedLocally)
        await #expect(throws: WebSocketError.connectionClosed) { try await client.send(text: "late") }
    }

    @Test func anAbortLooksLikeAResetToThePeer() async throws {
        let (client, server) = InMemoryWebSocket.pair()
        client.abort()
        let info = await server.waitUntilClosed()
        #expect(info.code == .abnormal)
        #expect(await client.waitUntilClosed().code == .abnormal)
    }

    @Test func aProtocolViolationClosesWith1002() async throws {
        let (client, server) = InMemoryWebSocket.pair()
        // A server must not receive an unmasked frame.
        try await client.sendRaw(WebSocketFrame(opcode: .text, payload: Array("x".utf8)).encoded())
        let info = await server.waitUntilClosed()
        #expect(info.code == .protocolError)
        #expect(await client.waitUntilClosed().code == .protocolError)
    }

    @Test func anOversizedMessageClosesWith1009() async throws {
        let (client, server) = InMemoryWebSocket.pair()
        server.setMaxMessageSize(16, closeReason: "preauth payload too large")
        try await client.send(text: String(repeating: "a", count: 64))
        let info = await client.waitUntilClosed()
        #expect(info.code == .messageTooBig)
        #expect(info.received?.reason == "preauth payload too large")
    }

    @Test func theNetworkConnectsToListenersAndRefusesElsewhere() async throws {
        let network = InMemoryNetwork()
        let listener = try network.listen()
        #expect(listener.port == 18789)
        let second = try network.listen()
        #expect(second.port == 18790)
        #expect(throws: WebSocketError.self) { try network.listen(port: 18789) }

        let client = try await network.connect(to: "ws://127.0.0.1:18789/path", headers: ["Origin": "x"], configuration: .init())
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(await accepted.next())
        #expect(server.requestPath == "/path")
        #expect(server.requestHeaders["origin"] == "x")
        #expect(server.remotePort == 40000)
        try await client.send(text: "ping")
        #expect(try await nextMessage(server) == .text("ping"))

        await #expect(throws: WebSocketError.connectionFailed) {
            _ = try await network.connect(to: "ws://127.0.0.1:9/", headers: [:], configuration: .init())
        }
        listener.close()
        await #expect(throws: WebSocketError.connectionFailed) {
            _ = try await network.connect(to: "ws://127.0.0.1:18789/", headers: [:], configuration: .init())
        }
        second.close()
    }
}
