import GatewayProtocol
@testable import MockGateway
import Testing

/// The chat surface's rules as a value: idempotent sends, history paging, cursor catch-up and
/// resets, input custody, the agent's queue, compaction and lag.
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
        guard case .accepted(let messages, let ack) = store.send(sessionKey: "main", text: "hi", idempotencyKey: "k1", mode: nil, nowMs: 10),
              let message = messages.first else {
            Issue.record("the first send appends")
            return
        }
        #expect(ack == ["runId": "k1", "status": "started"])
        #expect(message.idempotencyKey == "k1" && message.seq == 1 && message.role == .user)
        #expect(store.send(sessionKey: "main", text: "hi again", idempotencyKey: "k1", mode: nil, nowMs: 20) == .repeated(ack: ack))
        #expect(store.messages(in: "main").map(\.text) == ["hi"])
        #expect(store.hasApplied(idempotencyKey: "k1"))
        #expect(!store.hasApplied(idempotencyKey: "k2"))
    }

    @Test func theEchoAgentAnswersWhenItsReplyIsDue() {
        var store = ChatStore()
        store.autoReply = .echo(delay: .seconds(2))
        _ = store.send(sessionKey: "main", text: "ping", idempotencyKey: "k1", mode: nil, nowMs: 1_000)
        #expect(store.nextDueMs == 3_000)
        #expect(store.releaseDue(nowMs: 2_999).isEmpty)
        let replies = store.releaseDue(nowMs: 3_000)
        #expect(replies.map(\.text) == ["echo: ping"])
        #expect(replies.first?.runId == "k1" && replies.first?.role == .assistant)
        #expect(store.nextDueMs == nil)
        store.autoReply = .off
        _ = store.send(sessionKey: "main", text: "quiet", idempotencyKey: "k2", mode: nil, nowMs: 4_000)
        #expect(store.nextDueMs == nil)
        #expect(store.messages(in: "main").map(\.text) == ["ping", "echo: ping", "quiet"])
    }

    @Test func historyPagesBackwardAndCatchesUpAfterACursor() throws {
        var store = ChatStore()
        store.autoReply = .off
        for index in 1...5 { _ = store.send(sessionKey: "main", text: "m\(index)", idempotencyKey: "k\(index)", mode: nil, nowMs: Int64(index)) }
        let newest = store.history(try Self.request(["sessionKey": "main", "limit": 2]), nowMs: 0)
        #expect(Self.texts(newest) == ["m4", "m5"])
        #expect(newest["hasMore"] == true && newest["nextOffset"] == 2)
        let older = store.history(try Self.request(["sessionKey": "main", "limit": 2, "offset": 2]), nowMs: 0)
        #expect(Self.texts(older) == ["m2", "m3"])
        let oldest = store.history(try Self.request(["sessionKey": "main", "limit": 2, "offset": 4]), nowMs: 0)
        #expect(Self.texts(oldest) == ["m1"] && oldest["hasMore"] == false && oldest["nextOffset"] == nil)
        let cursor = try #require(newest["deltaCursor"]?.stringValue)
        #expect(newest["kind"] == nil, "a tail page carries no kind")
        _ = store.send(sessionKey: "main", text: "m6", idempotencyKey: "k6", mode: nil, nowMs: 6)
        let delta = store.history(try Self.request(["sessionKey": "main", "cursor": .string(cursor)]), nowMs: 0)
        #expect(delta["kind"] == "delta")
        #expect(Self.texts(delta) == ["m6"])
        #expect(delta["sessionInfo"]?["sessionId"] == "session-main")
        #expect(delta["messages"]?.arrayValue?.first?["__openclaw"]?["seq"] == 6)
        #expect(delta["messages"]?.arrayValue?.first?["__openclaw"]?["idempotencyKey"] == "k6:user")
        #expect(delta["messages"]?.arrayValue?.first?["idempotencyKey"] == nil, "no top-level key on a user row")
        let caughtUp = try #require(delta["deltaCursor"]?.stringValue)
        let empty = store.history(try Self.request(["sessionKey": "main", "cursor": .string(caughtUp)]), nowMs: 0)
        #expect(empty["kind"] == "delta" && Self.texts(empty).isEmpty)
        #expect(Self.texts(store.history(try Self.request(["sessionKey": "other"]), nowMs: 0)).isEmpty)
        #expect(store.sessions["other"] == nil, "a read creates no session")
    }

    @Test func aCursorIntoANeverWrittenSessionResetsOnceItExists() throws {
        var store = ChatStore()
        store.autoReply = .off
        let empty = try #require(store.history(try Self.request(["sessionKey": "new"]), nowMs: 0)["deltaCursor"]?.stringValue)
        #expect(store.history(try Self.request(["sessionKey": "new", "cursor": .string(empty)]), nowMs: 0)["kind"] == "delta")
        _ = store.send(sessionKey: "new", text: "first", idempotencyKey: "n1", mode: nil, nowMs: 0)
        #expect(store.history(try Self.request(["sessionKey": "new", "cursor": .string(empty)]), nowMs: 0) == ["kind": "reset"])
    }

    @Test func aCursorAnswersResetAcrossSessionsResetsCompactionsAndWhenStaleOrForeign() throws {
        var store = ChatStore()
        store.autoReply = .off
        for index in 1...3 { _ = store.send(sessionKey: "main", text: "m\(index)", idempotencyKey: "k\(index)", mode: nil, nowMs: 0) }
        _ = store.send(sessionKey: "side", text: "s1", idempotencyKey: "s1", mode: nil, nowMs: 0)
        let main = try #require(store.history(try Self.request(["sessionKey": "main"]), nowMs: 0)["deltaCursor"]?.stringValue)
        let side = try #require(store.history(try Self.request(["sessionKey": "side"]), nowMs: 0)["deltaCursor"]?.stringValue)
        func answer(_ key: String, _ cursor: String) throws -> JSONValue {
            store.history(try Self.request(["sessionKey": .string(key), "cursor": .string(cursor)]), nowMs: 0)
        }
        #expect(try answer("main", main)["kind"] == "delta")
        #expect(try answer("main", side) == ["kind": "reset"], "a cursor of another session")
        #expect(try answer("main", "1") == ["kind": "reset"], "not a cursor of this Gateway")
        #expect(try answer("main", ChatStore.cursor(epoch: 1, seq: 99)) == ["kind": "reset"], "a cursor ahead of the transcript")
        _ = store.compact(sessionKey: "main", keep: 1)
        #expect(try answer("main", main) == ["kind": "reset"], "a compaction in between")
        let afterCompaction = try #require(store.history(try Self.request(["sessionKey": "main"]), nowMs: 0)["deltaCursor"]?.stringValue)
        #expect(try answer("main", afterCompaction)["kind"] == "delta")
        store.reset(sessionKey: "side")
        #expect(try answer("side", side) == ["kind": "reset"], "a reset in between")
        #expect(store.sessionId("side") != "session-side", "a reset starts a new transcript")
    }

    @Test func aCursorAnswersResetPastTwoHundredRowsOrTheByteBudget() throws {
        var store = ChatStore()
        store.autoReply = .off
        _ = store.send(sessionKey: "main", text: "m0", idempotencyKey: "k0", mode: nil, nowMs: 0)
        let start = try #require(store.history(try Self.request(["sessionKey": "main"]), nowMs: 0)["deltaCursor"]?.stringValue)
        for index in 1...200 { _ = store.send(sessionKey: "main", text: "m\(index)", idempotencyKey: "k\(index)", mode: nil, nowMs: 0) }
        let at200 = store.history(try Self.request(["sessionKey": "main", "cursor": .string(start)]), nowMs: 0)
        #expect(at200["kind"] == "delta" && Self.texts(at200).count == 200, "200 rows still fit")
        _ = store.send(sessionKey: "main", text: "m201", idempotencyKey: "k201", mode: nil, nowMs: 0)
        #expect(store.history(try Self.request(["sessionKey": "main", "cursor": .string(start)]), nowMs: 0) == ["kind": "reset"])

        var big = ChatStore()
        big.autoReply = .off
        _ = big.send(sessionKey: "main", text: "b0", idempotencyKey: "b0", mode: nil, nowMs: 0)
        let cursor = try #require(big.history(try Self.request(["sessionKey": "main"]), nowMs: 0)["deltaCursor"]?.stringValue)
        let chunk = String(repeating: "x", count: 400_000)
        for index in 1...2 { _ = big.send(sessionKey: "main", text: chunk, idempotencyKey: "b\(index)", mode: nil, nowMs: 0) }
        #expect(big.history(try Self.request(["sessionKey": "main", "cursor": .string(cursor)]), nowMs: 0)["kind"] == "delta")
        _ = big.send(sessionKey: "main", text: chunk, idempotencyKey: "b3", mode: nil, nowMs: 0)
        #expect(big.history(try Self.request(["sessionKey": "main", "cursor": .string(cursor)]), nowMs: 0) == ["kind": "reset"],
                "1.2 MB of rows is past the byte budget")
    }

    @Test func queuedInputsArePendingUntilTheirTurnAndCollectedOnesAreConsumedByOneRow() throws {
        var store = ChatStore()
        store.autoReply = .off
        store.holdRun(sessionKey: "main")
        guard case .accepted(let written, let ack) = store.send(sessionKey: "main", text: "a", idempotencyKey: "ka", mode: nil, nowMs: 5) else {
            Issue.record("accepted")
            return
        }
        #expect(written.isEmpty && ack == ["runId": "ka", "status": "started"], "queued: nothing written yet")
        _ = store.send(sessionKey: "main", text: "b", idempotencyKey: "kb", mode: .collect, nowMs: 6)
        let query = try Self.request(["sessionKey": "main", "inputRunIds": ["ka", "kb", "unknown"]])
        let waiting = store.history(query, nowMs: 0)
        #expect(Self.texts(waiting).isEmpty)
        #expect(waiting["inputReceipts"] == [["runId": "ka", "state": "pending"], ["runId": "kb", "state": "pending"]])
        #expect(waiting["inputConsumptions"] == [])
        #expect(waiting["pendingInputs"]?["total"] == 2)
        #expect(waiting["pendingInputs"]?["items"]?.arrayValue?.map { $0["state"] } == ["queued", "queued"])
        #expect(waiting["pendingInputs"]?["items"]?.arrayValue?.first?["runId"] == "ka")
        #expect(waiting["pendingInputs"]?["items"]?.arrayValue?.first?["acceptedAt"] == 5)

        let rows = store.releaseRun(sessionKey: "main", collectAll: true, nowMs: 9)
        #expect(rows.map(\.text) == ["a\nb"] && rows.first?.idempotencyKey == "ka")
        let done = store.history(query, nowMs: 0)
        let rowId = try #require(rows.first?.id)
        #expect(done["inputReceipts"] == [["runId": "ka", "state": "consumed", "consumedByEventId": .string(rowId)],
                                          ["runId": "kb", "state": "consumed", "consumedByEventId": .string(rowId)]])
        #expect(done["inputConsumptions"]?.arrayValue?.count == 2)
        #expect(done["pendingInputs"] == nil, "nothing is waiting any more")
    }

    @Test func followupsTakeTheirOwnTurnsSteerIsFoldedInAndInterruptCancelsTheRun() throws {
        var store = ChatStore()
        store.autoReply = .off
        store.holdRun(sessionKey: "main")
        _ = store.send(sessionKey: "main", text: "f1", idempotencyKey: "f1", mode: .followup, nowMs: 0)
        guard case .accepted(let steered, _) = store.send(sessionKey: "main", text: "s", idempotencyKey: "s", mode: .steer, nowMs: 0) else {
            Issue.record("accepted")
            return
        }
        #expect(steered.map(\.text) == ["s"], "a steer is in history at once")
        #expect(store.releaseRun(sessionKey: "main", collectAll: false, nowMs: 0).map(\.text) == ["f1"])

        store.holdRun(sessionKey: "main")
        _ = store.send(sessionKey: "main", text: "q", idempotencyKey: "q", mode: nil, nowMs: 0)
        guard case .accepted(let now, let ack) = store.send(sessionKey: "main", text: "i", idempotencyKey: "i", mode: .interrupt, nowMs: 0) else {
            Issue.record("accepted")
            return
        }
        #expect(now.map(\.text) == ["i"] && ack["interruptedActiveRun"] == true)
        let answer = store.history(try Self.request(["sessionKey": "main", "inputRunIds": ["q"]]), nowMs: 0)
        #expect(answer["pendingInputs"]?["items"]?.arrayValue?.map { $0["state"] } == ["interrupted"])
        #expect(answer["inputReceipts"] == [], "an interrupted input is neither pending nor consumed")
        #expect(Self.texts(answer) == ["s", "f1", "i"])
        guard case .accepted(_, let idle) = store.send(sessionKey: "main", text: "j", idempotencyKey: "j", mode: .interrupt, nowMs: 0) else {
            Issue.record("accepted")
            return
        }
        #expect(idle["interruptedActiveRun"] == nil, "nothing to interrupt")

        store.holdRun(sessionKey: "main")
        _ = store.send(sessionKey: "main", text: "c", idempotencyKey: "c", mode: nil, nowMs: 0)
        #expect(store.cancelQueued(sessionKey: "main") == 1)
        let cancelled = store.history(try Self.request(["sessionKey": "main"]), nowMs: 0)
        #expect(cancelled["pendingInputs"]?["items"]?.arrayValue?.last?["state"] == "cancelled")
    }

    @Test func pendingInputsPageTwentyAtATimeBackward() throws {
        var store = ChatStore()
        store.holdRun(sessionKey: "main")
        for index in 1...25 { _ = store.send(sessionKey: "main", text: "p\(index)", idempotencyKey: "p\(index)", mode: nil, nowMs: 0) }
        let first = store.history(try Self.request(["sessionKey": "main"]), nowMs: 0)["pendingInputs"]
        #expect(first?["total"] == 25 && first?["items"]?.arrayValue?.count == 20)
        #expect(first?["items"]?.arrayValue?.first?["runId"] == "p6")
        let before = try #require(first?["nextBefore"]?.int64Value)
        let second = store.history(try Self.request(["sessionKey": "main", "pendingBefore": .int(before)]), nowMs: 0)["pendingInputs"]
        #expect(second?["items"]?.arrayValue?.map { $0["runId"] } == ["p1", "p2", "p3", "p4", "p5"])
        #expect(second?["nextBefore"] == nil)
    }

    @Test func aLaggingRowKeepsItsReceiptPending() throws {
        var store = ChatStore()
        store.autoReply = .off
        _ = store.send(sessionKey: "main", text: "m", idempotencyKey: "k", mode: nil, nowMs: 0)
        store.setHistoryLag(omitNewest: 1, reads: 1)
        let lagging = store.history(try Self.request(["sessionKey": "main", "inputRunIds": ["k"]]), nowMs: 0)
        #expect(lagging["inputReceipts"] == [["runId": "k", "state": "pending"]], "consumed only once the row is visible")
        let current = store.history(try Self.request(["sessionKey": "main", "inputRunIds": ["k"]]), nowMs: 0)
        #expect(current["inputReceipts"]?.arrayValue?.first?["state"] == "consumed")
    }

    @Test func messageGetAnswersNotFoundOversizedAndNotVisible() {
        var store = ChatStore()
        store.autoReply = .off
        _ = store.send(sessionKey: "main", text: "hello world", idempotencyKey: "k1", mode: nil, nowMs: 0)
        _ = store.send(sessionKey: "main", text: "second", idempotencyKey: "k2", mode: nil, nowMs: 0)
        let ids = store.messages(in: "main").map(\.id)
        #expect(store.messageGet(sessionKey: "main", messageId: ids[0], maxChars: nil)["ok"] == true)
        #expect(store.messageGet(sessionKey: "main", messageId: ids[0], maxChars: 5) == ["ok": false, "unavailableReason": "oversized"])
        #expect(store.messageGet(sessionKey: "main", messageId: "msg-404", maxChars: nil) == ["ok": false, "unavailableReason": "not_found"])
        #expect(store.messageGet(sessionKey: "other", messageId: ids[0], maxChars: nil)["unavailableReason"] == "not_found")
        _ = store.compact(sessionKey: "main", keep: 1)
        #expect(store.messageGet(sessionKey: "main", messageId: ids[0], maxChars: nil) == ["ok": false, "unavailableReason": "not_visible"])
        #expect(store.messageGet(sessionKey: "main", messageId: ids[1], maxChars: nil)["ok"] == true)
    }

    @Test func aLaggingHistoryOmitsTheNewestRowsForTheArmedReads() throws {
        var store = ChatStore()
        store.autoReply = .off
        for index in 1...3 { _ = store.send(sessionKey: "main", text: "m\(index)", idempotencyKey: "k\(index)", mode: nil, nowMs: 0) }
        store.setHistoryLag(omitNewest: 2, reads: 2)
        let query = try Self.request(["sessionKey": "main"])
        #expect(Self.texts(store.history(query, nowMs: 0)) == ["m1"])
        let second = store.history(query, nowMs: 0)
        #expect(Self.texts(second) == ["m1"])
        #expect(second["deltaCursor"]?.stringValue == ChatStore.cursor(epoch: 1, seq: 1), "the cursor never runs ahead of what the answer shows")
        #expect(Self.texts(store.history(query, nowMs: 0)) == ["m1", "m2", "m3"], "the lag ends after the armed reads")
        store.setHistoryLag(omitNewest: 5, reads: nil)
        #expect(Self.texts(store.history(query, nowMs: 0)).isEmpty)
        #expect(Self.texts(store.history(query, nowMs: 0)).isEmpty, "without a read count the lag lasts until cleared")
        store.setHistoryLag(omitNewest: 0, reads: nil)
        #expect(Self.texts(store.history(query, nowMs: 0)).count == 3)
    }

    @Test func badHistoryParametersAreRefusedWithAMessage() {
        for params: JSONValue in [[:], ["sessionKey": ""], ["sessionKey": "main", "limit": 0], ["sessionKey": "main", "limit": 1001],
                                  ["sessionKey": "main", "limit": "ten"], ["sessionKey": "main", "offset": -1],
                                  ["sessionKey": "main", "deltaCursor": "later"], ["sessionKey": 7],
                                  ["sessionKey": "main", "cursor": 3], ["sessionKey": "main", "maxBytes": 1023],
                                  ["sessionKey": "main", "pendingBefore": 0], ["sessionKey": "main", "inputRunIds": []],
                                  ["sessionKey": "main", "inputRunIds": ["a", "a"]], ["sessionKey": "main", "inputRunIds": [""]],
                                  ["sessionKey": "main", "maxChars": 500_001]] {
            guard case .failure(let error) = ChatStore.historyRequest(params) else {
                Issue.record("accepted \(params.jsonString)")
                continue
            }
            #expect(error.message.hasPrefix("invalid chat.history params: "))
        }
        #expect((try? ChatStore.historyRequest(nil).get()) == nil)
        let tooMany = JSONValue.array((0...50).map { .string("r\($0)") })
        #expect((try? ChatStore.historyRequest(["sessionKey": "main", "inputRunIds": tooMany]).get()) == nil, "at most 50 run ids")
        guard case .failure(let member) = ChatStore.historyRequest(["sessionKey": "main", "deltaCursor": "c1.0"]) else {
            Issue.record("deltaCursor accepted")
            return
        }
        #expect(member.message == "invalid chat.history params: at root: unexpected property 'deltaCursor'")
        for member in ["cursor", "offset", "inputRunIds", "pendingBefore", "maxBytes"] {
            let value: JSONValue = member == "inputRunIds" ? ["k"] : member == "cursor" ? "c1.0" : 2048
            #expect((try? ChatStore.historyRequest(.object(["sessionKey": "main", member: value]), generation: .older).get()) == nil,
                    "the older generation's closed schema has no \(member)")
            #expect((try? ChatStore.historyRequest(.object(["sessionKey": "main", member: value]), generation: .newest).get()) != nil)
        }
    }

    @Test func sessionsListNamesTheDefaultSessionFirst() {
        var store = ChatStore()
        store.autoReply = .off
        _ = store.send(sessionKey: "alpha", text: "a", idempotencyKey: "k1", mode: nil, nowMs: 7)
        let list = store.sessionsList(nowMs: 9)
        let keys = list["sessions"]?.arrayValue?.compactMap { $0["key"]?.stringValue }
        #expect(keys == ["main", "alpha"])
        #expect(list["sessions"]?.arrayValue?.dropFirst().first?["updatedAt"] == 7 && list["sessions"]?.arrayValue?.dropFirst().first?["lastMessagePreview"] == "a")
        #expect(list["count"] == 2)
    }
}
