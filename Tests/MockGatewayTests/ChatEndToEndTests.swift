import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// The chat surface over real sockets: `chat.send` with idempotency keys, `chat.history`,
/// `sessions.list`, the message events (`session.message` to subscribers only), the scopes, and
/// the chat faults.
@Suite("Chat surface end to end")
struct ChatEndToEndTests {
    static let chatScopes = ["operator.read", "operator.write"]

    static func send(_ text: String, key: String, session: String = "main") -> JSONValue {
        ["sessionKey": .string(session), "message": .string(text), "idempotencyKey": .string(key)]
    }

    static func historyTexts(_ response: ResponseFrame) -> [String] {
        response.payload?["messages"]?.arrayValue?.compactMap { $0["content"]?.arrayValue?.first?["text"]?.stringValue } ?? []
    }

    static func chatter(_ gateway: Gateway, _ byte: UInt8, scopes: [String] = chatScopes) async throws -> ConnectedSession {
        try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(byte), scopes: scopes)
    }

    /// `sessions.messages.subscribe {key}`: `session.message` reaches subscribers only.
    static func follow(_ session: ConnectedSession, _ key: String = "main") async throws {
        let reply = try await session.client.request("sessions.messages.subscribe", params: ["key": .string(key)])
        #expect(reply.ok && reply.payload?["subscribed"] == true && reply.payload?["key"]?.stringValue == key)
    }

    @Test func helloAdvertisesTheChatMethodsAndEvents() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0x70)
            for method in ["chat.send", "chat.history", "sessions.list"] {
                #expect(session.hello.features.methods.contains(method), "\(method) is advertised")
            }
            #expect(session.hello.features.events.contains("session.message"))
            #expect(session.hello.features.events.contains("chat"))
        }
    }

    @Test func aRepeatedKeyIsAnsweredWithTheFirstAckAndStoredOnce() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0x71)
            try await Self.follow(session)
            let (first, events) = try await session.client.requestCollecting("chat.send", params: Self.send("hello", key: "k-1"))
            #expect(first.ok && first.payload == ["runId": "k-1", "status": "started"])
            let later = events + (try await session.client.barrier())
            let messages = TestClient.events("session.message", in: later)
            #expect(messages.map { $0.payload?["message"]?["role"]?.stringValue } == ["user", "assistant"])
            let finals = TestClient.events("chat", in: later)
            #expect(finals.map { $0.payload?["state"]?.stringValue } == ["final"])
            #expect(finals.first?.payload?["runId"] == "k-1")

            let again = try await session.client.request("chat.send", params: Self.send("hello (retry)", key: "k-1"))
            #expect(again.ok && again.payload == first.payload)
            #expect(await gateway.chatMessages().map(\.text) == ["hello", "echo: hello"])

            let history = try await session.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(Self.historyTexts(history) == ["hello", "echo: hello"])
            #expect(history.payload?["messages"]?.arrayValue?.first?["__openclaw"]?["idempotencyKey"] == "k-1:user")
            #expect(history.payload?["messages"]?.arrayValue?.first?["idempotencyKey"] == nil, "the key is inside the envelope only")
            let list = try await session.client.request("sessions.list", params: [:])
            #expect(list.payload?["sessions"]?.arrayValue?.first?["key"] == "main")
        }
    }

    @Test func chatNeedsWriteToSendAndReadToReadOrReceive() async throws {
        try await Gateway.withGateway { gateway in
            let reader = try await Self.chatter(gateway, 0x72, scopes: ["operator.read"])
            let denied = try await reader.client.request("chat.send", params: Self.send("no", key: "k-2"))
            #expect(denied.error?.code == "FORBIDDEN" && denied.error?.message == "missing scope: operator.write")
            let pairer = try await Self.chatter(gateway, 0x73, scopes: ["operator.pairing"])
            let hidden = try await pairer.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(hidden.error?.message == "missing scope: operator.read")
            let invalid = try await reader.client.request("chat.history", params: ["limit": 3])
            #expect(invalid.error?.code == "INVALID_REQUEST")

            try await Self.follow(reader)
            let refused = try await pairer.client.request("sessions.messages.subscribe", params: ["key": "main"])
            #expect(refused.error?.message == "missing scope: operator.read")
            await gateway.postAssistantMessage("news")
            let readerFrames = try await reader.client.barrier()
            #expect(TestClient.events("session.message", in: readerFrames).count == 1)
            let pairerFrames = try await pairer.client.barrier()
            #expect(TestClient.events("session.message", in: pairerFrames).isEmpty, "no chat events without operator.read")
        }
    }

    @Test func aDroppedAckAfterApplyingLeavesTheMessageStoredAndTheSocketCut() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0x74)
            await gateway.dropNextChatSendAck(.afterApplying)
            try await session.client.sendRequest("chat.send", params: Self.send("ambiguous", key: "k-3"), id: "r1")
            let (frames, _) = try await session.client.framesUntilClosed()
            #expect(!frames.contains { if case .response = $0 { true } else { false } }, "no ack arrives")
            #expect(await gateway.chatMessages().map(\.text).first == "ambiguous")

            let back = try await TestSessions.connect(gateway, identity: session.client.identity) { $0.operatorParams(scopes: Self.chatScopes) }
            let history = try await back.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(Self.historyTexts(history).first == "ambiguous", "reading history resolves the ambiguity")
            let retry = try await back.client.request("chat.send", params: Self.send("ambiguous", key: "k-3"))
            #expect(retry.payload?["runId"] == "k-3")
            #expect(await gateway.chatMessages().filter { $0.role == .user }.count == 1, "the same key never appends twice")
        }
    }

    @Test func aSendLostBeforeApplyingStoresNothing() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0x75)
            await gateway.dropNextChatSendAck(.beforeApplying)
            try await session.client.sendRequest("chat.send", params: Self.send("lost", key: "k-4"), id: "r1")
            _ = try await session.client.framesUntilClosed()
            #expect(await gateway.chatMessages().isEmpty)
        }
    }

    @Test func theConnectionIsCutAfterTheArmedNumberOfAcknowledgedSends() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0x76)
            await gateway.setChatAutoReply(.off)
            await gateway.cutConnectionAfterChatSends(2)
            let first = try await session.client.request("chat.send", params: Self.send("one", key: "a"))
            #expect(first.ok)
            try await session.client.sendRequest("chat.send", params: Self.send("two", key: "b"), id: "second")
            let (frames, _) = try await session.client.framesUntilClosed()
            #expect(frames.contains { if case .response(let response) = $0 { response.id == "second" && response.ok } else { false } },
                    "the second ack is sent before the cut")
            #expect(await gateway.chatMessages().map(\.text) == ["one", "two"])
        }
    }

    @Test func aLaggingHistoryHidesTheNewestRowsOverTheWire() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0x77)
            await gateway.lagChatHistory(omitNewest: 2, forReads: 1)
            _ = try await session.client.request("chat.send", params: Self.send("fresh", key: "k-5"))
            let lagging = try await session.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(Self.historyTexts(lagging).isEmpty)
            let current = try await session.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(Self.historyTexts(current) == ["fresh", "echo: fresh"])
        }
    }

    @Test func aDelayedPostArrivesWhenTheGatewayClockReachesIt() async throws {
        try await Gateway.withGateway(GatewayConfiguration(clock: .manual(startMs: 1_000))) { gateway in
            let session = try await Self.chatter(gateway, 0x78)
            try await Self.follow(session)
            await gateway.postAssistantMessage("later", after: .seconds(30))
            #expect(await gateway.chatMessages().isEmpty)
            #expect(await gateway.nextTimerDeadlineMs() ?? .max <= 31_000)
            await gateway.advance(by: .seconds(30))
            let event = try await session.client.event("session.message")
            #expect(event.payload?["message"]?["content"]?.arrayValue?.first?["text"] == "later")
        }
    }
}
