import GatewayProtocol
@testable import MockGateway
import Testing

/// The chat surface's rules as a value: idempotent sends, history paging, catch-up and lag.
@Suite("Chat store rules")
struct ChatStoreTests {
    static func texts(_ payload: JSONValue) -> [String] {
        payload["messages"]?.arrayValue?.compactMap { $0["content"]?.arrayValue?.first?["text"]?.stringValue } ?? []
    }

    static func request(_ params: JSONValue) throws -> ChatStore.HistoryRequest {
        try ChatStore.historyRequest(params).get()
    }

    @Test func aRepeatedKeyReturnsTheFirstAckAndAppendsNothing() {
        var store = ChatStore()
        guard case .appended(let message, let ack) = store.send(sessionKey: "main", text: "hi", idempotencyKey: "k1", nowMs: 10) else {
            Issue.record("the first send appends")
            return
        }
        #expect(ack == ["runId": "k1", "status": "started"])
        #expect(message.idempotencyKey == "k1" && message.seq == 1 && message.role == .user)
        #expect(store.send(sessionKey: "main", text: "hi again", idempotencyKey: "k1", nowMs: 20) == .repeated(ack: ack))
        #expect(store.messages(in: "main").map(\.text) == ["hi"])
        #expect(store.hasApplied(idempotencyKey: "k1"))
        #expect(!store.hasApplied(idempotencyKey: "k2"))
    }

    @Test func theEchoAgentAnswersWhenItsReplyIsDue() {
        var store = ChatStore()
        store.autoReply = .echo(delay: .seconds(2))
        _ = store.send(sessionKey: "main", text: "ping", idempotencyKey: "k1", nowMs: 1_000)
        #expect(store.nextDueMs == 3_000)
        #expect(store.releaseDue(nowMs: 2_999).isEmpty)
        let replies = store.releaseDue(nowMs: 3_000)
        #expect(replies.map(\.text) == ["echo: ping"])
        #expect(replies.first?.runId == "k1" && replies.first?.role == .assistant)
        #expect(store.nextDueMs == nil)
        store.autoReply = .off
        _ = store.send(sessionKey: "main", text: "quiet", idempotencyKey: "k2", nowMs: 4_000)
        #expect(store.nextDueMs == nil)
        #expect(store.messages(in: "main").map(\.text) == ["ping", "echo: ping", "quiet"])
    }

    @Test func historyPagesBackwardAndCatchesUpAfterACursor() throws {
        var store = ChatStore()
        store.autoReply = .off
        for index in 1...5 { _ = store.send(sessionKey: "main", text: "m\(index)", idempotencyKey: "k\(index)", nowMs: Int64(index)) }
        let newest = store.history(try Self.request(["sessionKey": "main", "limit": 2]))
        #expect(Self.texts(newest) == ["m4", "m5"])
        #expect(newest["hasMore"] == true && newest["nextOffset"] == 2)
        let older = store.history(try Self.request(["sessionKey": "main", "limit": 2, "offset": 2]))
        #expect(Self.texts(older) == ["m2", "m3"])
        let oldest = store.history(try Self.request(["sessionKey": "main", "limit": 2, "offset": 4]))
        #expect(Self.texts(oldest) == ["m1"] && oldest["hasMore"] == false && oldest["nextOffset"] == nil)
        #expect(newest["deltaCursor"] == "5")
        let delta = store.history(try Self.request(["sessionKey": "main", "deltaCursor": "3"]))
        #expect(Self.texts(delta) == ["m4", "m5"])
        #expect(delta["messages"]?.arrayValue?.first?["__openclaw"]?["seq"] == 4)
        #expect(delta["messages"]?.arrayValue?.first?["idempotencyKey"] == "k4")
        #expect(Self.texts(store.history(try Self.request(["sessionKey": "other"]))).isEmpty)
    }

    @Test func aLaggingHistoryOmitsTheNewestRowsForTheArmedReads() throws {
        var store = ChatStore()
        store.autoReply = .off
        for index in 1...3 { _ = store.send(sessionKey: "main", text: "m\(index)", idempotencyKey: "k\(index)", nowMs: 0) }
        store.setHistoryLag(omitNewest: 2, reads: 2)
        let query = try Self.request(["sessionKey": "main"])
        #expect(Self.texts(store.history(query)) == ["m1"])
        let second = store.history(query)
        #expect(Self.texts(second) == ["m1"])
        #expect(second["deltaCursor"] == "1", "the cursor never runs ahead of what the answer shows")
        #expect(Self.texts(store.history(query)) == ["m1", "m2", "m3"], "the lag ends after the armed reads")
        store.setHistoryLag(omitNewest: 5, reads: nil)
        #expect(Self.texts(store.history(query)).isEmpty)
        #expect(Self.texts(store.history(query)).isEmpty, "without a read count the lag lasts until cleared")
        store.setHistoryLag(omitNewest: 0, reads: nil)
        #expect(Self.texts(store.history(query)).count == 3)
    }

    @Test func badHistoryParametersAreRefusedWithAMessage() {
        for params: JSONValue in [[:], ["sessionKey": ""], ["sessionKey": "main", "limit": 0], ["sessionKey": "main", "limit": 1001],
                                  ["sessionKey": "main", "limit": "ten"], ["sessionKey": "main", "offset": -1],
                                  ["sessionKey": "main", "deltaCursor": "later"], ["sessionKey": 7]] {
            guard case .failure(let error) = ChatStore.historyRequest(params) else {
                Issue.record("accepted \(params.jsonString)")
                continue
            }
            #expect(error.message.hasPrefix("invalid chat.history params: "))
        }
        #expect((try? ChatStore.historyRequest(nil).get()) == nil)
    }

    @Test func sessionsListNamesTheDefaultSessionFirst() {
        var store = ChatStore()
        store.autoReply = .off
        _ = store.send(sessionKey: "alpha", text: "a", idempotencyKey: "k1", nowMs: 7)
        let list = store.sessionsList(nowMs: 9)
        let keys = list["sessions"]?.arrayValue?.compactMap { $0["key"]?.stringValue }
        #expect(keys == ["main", "alpha"])
        #expect(list["sessions"]?.arrayValue?.dropFirst().first?["updatedAt"] == 7 && list["sessions"]?.arrayValue?.dropFirst().first?["lastMessagePreview"] == "a")
        #expect(list["count"] == 2)
    }
}
