import Foundation
import GatewayProtocol
@testable import ReferenceNode
import Testing

/// The reference client's outbox and transcript cache rules, as a value.
@Suite("Chat outbox and cache rules")
struct ChatBookTests {
    /// The client's state files in `directory` (not in memory).
    static func onDisk(_ directory: URL) -> StateFiles { StateFiles(directory: directory, memory: nil, durable: false) }

    static let gateway = "ws://a"
    static let other = "ws://b"

    /// A history row; a user row of a send carries the upstream envelope key `"<key>:user"`.
    static func row(_ text: String, role: String = "user", seq: Int, key: String? = nil) -> JSONValue {
        var envelope: [String: JSONValue] = ["id": .string("e\(seq)"), "seq": .int(Int64(seq))]
        if let key { envelope["idempotencyKey"] = .string("\(key):user") }
        return .object(["role": .string(role), "content": [["type": "text", "text": .string(text)]], "__openclaw": .object(envelope)])
    }

    static let reference = TestSupport.configuration()

    static func queue(_ book: inout ChatBook, _ text: String, gateway: String = gateway,
                      _ configuration: ReferenceConfiguration = TestSupport.configuration()) -> OutboxMessage? {
        if case .queued(let message) = book.enqueue(text: text, sessionKey: "main", gateway: gateway, keyPrefix: "dev",
                                                    configuration: configuration) { return message }
        return nil
    }

    @Test func theOutboxRefusesThe51stMessageOfAGatewayVisibly() {
        var book = ChatBook()
        let configuration = TestSupport.configuration()
        for index in 1...50 { #expect(Self.queue(&book, "m\(index)") != nil) }
        #expect(book.enqueue(text: "m51", sessionKey: "main", gateway: Self.gateway, keyPrefix: "dev", configuration: configuration) == .full)
        #expect(Self.queue(&book, "elsewhere", gateway: Self.other) != nil, "the limit is per Gateway")
        var mutant = ChatBook()
        let dropping = TestSupport.configuration([.dropOverLimit])
        for index in 1...50 { _ = Self.queue(&mutant, "m\(index)", dropping) }
        #expect(mutant.enqueue(text: "m51", sessionKey: "main", gateway: Self.gateway, keyPrefix: "dev", configuration: dropping)
            == .droppedSilently)
    }

    @Test func theFlushIsInOrderAndScopedToOneGateway() {
        var book = ChatBook()
        let configuration = TestSupport.configuration()
        let first = Self.queue(&book, "one")
        _ = Self.queue(&book, "not here", gateway: Self.other)
        let second = Self.queue(&book, "two")
        #expect(first?.key != second?.key)
        #expect(book.flushPlan(gateway: Self.gateway, configuration: configuration).map(\.text) == ["one", "two"])
        #expect(book.flushPlan(gateway: Self.gateway, configuration: TestSupport.configuration([.reorderFlush])).map(\.text)
            == ["two", "one"])
        #expect(book.flushPlan(gateway: Self.gateway, configuration: TestSupport.configuration([.sharedOutbox])).map(\.text)
            == ["one", "not here", "two"])
    }

    @Test func aMessageIsRetiredOnlyWhenHistoryShowsItsKey() throws {
        var book = ChatBook()
        let configuration = TestSupport.configuration()
        let message = try #require(Self.queue(&book, "hello"))
        book.acknowledged(message.key, configuration: configuration)
        #expect(book.bubbles(gateway: Self.gateway).map(\.status) == [.accepted])
        #expect(book.flushPlan(gateway: Self.gateway, configuration: configuration).isEmpty, "an acknowledged message is not resent")
        #expect(book.applyHistory(["messages": []], gateway: Self.gateway, sessionKey: "main", configuration: Self.reference).isEmpty)
        #expect(book.bubbles(gateway: Self.gateway).count == 1, "a lagging history retires nothing")
        let retired = book.applyHistory(["messages": [Self.row("hello", seq: 1, key: message.key)]], gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        #expect(retired == [message.key])
        #expect(book.bubbles(gateway: Self.gateway).isEmpty)
        #expect(book.transcript(gateway: Self.gateway, sessionKey: "main").map(\.text) == ["hello"])

        var topLevel = ChatBook()
        let legacyMatch = TestSupport.configuration([.retireOnTopLevelKey])
        let other = try #require(Self.queue(&topLevel, "hello", legacyMatch))
        topLevel.acknowledged(other.key, configuration: legacyMatch)
        topLevel.applyHistory(["messages": [Self.row("hello", seq: 1, key: other.key)]], gateway: Self.gateway, sessionKey: "main",
                              configuration: legacyMatch)
        #expect(topLevel.bubbles(gateway: Self.gateway).count == 1, "the mutant looks for a top-level key the Gateway never sends")

        var eager = ChatBook()
        let mutant = TestSupport.configuration([.retireOnAck])
        let sent = try #require(Self.queue(&eager, "hello", mutant))
        eager.acknowledged(sent.key, configuration: mutant)
        #expect(eager.bubbles(gateway: Self.gateway).isEmpty)
    }

    @Test func anAmbiguousMessageKeepsItsKeyUnlessTheMutantForgetsIt() throws {
        var book = ChatBook()
        let message = try #require(Self.queue(&book, "deploy"))
        book.mark(message.key, .unconfirmed)
        #expect(book.sessionsToReconcile(gateway: Self.gateway) == ["main"])
        book.forgetAmbiguity(gateway: Self.gateway, keyPrefix: "dev", configuration: TestSupport.configuration())
        #expect(book.flushPlan(gateway: Self.gateway, configuration: TestSupport.configuration()).map(\.key) == [message.key])
        book.forgetAmbiguity(gateway: Self.gateway, keyPrefix: "dev", configuration: TestSupport.configuration([.resendAmbiguousNewKey]))
        let replayed = book.bubbles(gateway: Self.gateway)
        #expect(replayed.map(\.status) == [.queued] && replayed.first?.key != message.key)
    }

    @Test func liveRowsAreAppendedOnceAndAResetForgetsTheCache() {
        var book = ChatBook()
        book.applyHistory(["messages": [Self.row("a", seq: 1)]], gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        let live: JSONValue = ["sessionKey": "main", "message": Self.row("b", role: "assistant", seq: 2)]
        book.applyLive(live, gateway: Self.gateway)
        book.applyLive(live, gateway: Self.gateway)
        #expect(book.transcript(gateway: Self.gateway, sessionKey: "main").map(\.text) == ["a", "b"])
        #expect(book.transcript(gateway: Self.other, sessionKey: "main").isEmpty, "the cache is per Gateway")

        var kept = book
        kept.forget(configuration: TestSupport.configuration([.keepCacheAfterReset]))
        #expect(kept.transcript(gateway: Self.gateway, sessionKey: "main").count == 2)
        book.forget(configuration: TestSupport.configuration())
        #expect(book.transcript(gateway: Self.gateway, sessionKey: "main").isEmpty)
    }

    @Test func theBookSurvivesALaunchInMemoryAsOnDisk() throws {
        let directory = TestSupport.temporaryDirectory()
        let memory = InMemoryStateFiles()
        let files = StateFiles(directory: directory, memory: memory, durable: false)
        var book = ChatBook()
        _ = try #require(Self.queue(&book, "kept in memory"))
        book.save(to: files)
        #expect(ChatBook.load(from: files) == book)
        #expect(ChatBook.load(from: Self.onDisk(directory)) == ChatBook(), "the directory was not written")
        try memory.write(to: directory)
        #expect(ChatBook.load(from: Self.onDisk(directory)) == book)
    }

    @Test func theBookSurvivesALaunchAndAnInterruptedSendBecomesAmbiguous() throws {
        let directory = TestSupport.temporaryDirectory()
        var book = ChatBook()
        let message = try #require(Self.queue(&book, "in flight"))
        book.mark(message.key, .sending)
        book.applyHistory(["messages": [Self.row("earlier", seq: 1)]], gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        book.save(to: Self.onDisk(directory))

        var loaded = ChatBook.load(from: Self.onDisk(directory))
        loaded.recoverAfterLaunch()
        #expect(loaded.bubbles(gateway: Self.gateway).map(\.status) == [.unconfirmed])
        loaded.coldStarted(configuration: TestSupport.configuration())
        #expect(loaded.transcript(gateway: Self.gateway, sessionKey: "main").map(\.text) == ["earlier"])
        loaded.coldStarted(configuration: TestSupport.configuration([.noColdStartCache]))
        #expect(loaded.transcript(gateway: Self.gateway, sessionKey: "main").isEmpty)

        try Data("not json".utf8).write(to: directory.appendingPathComponent(ChatBook.fileName))
        #expect(ChatBook.load(from: Self.onDisk(directory)) == ChatBook(), "an unreadable file is an empty book")
    }

    @Test func receiptsRetireConsumedInputsAndPendingOnesAreNeverResent() throws {
        var book = ChatBook()
        let first = try #require(Self.queue(&book, "a"))
        let second = try #require(Self.queue(&book, "b"))
        book.acknowledged(first.key, configuration: Self.reference)
        book.mark(second.key, .unconfirmed)
        #expect(book.inputRunIds(gateway: Self.gateway, sessionKey: "main", configuration: Self.reference).isEmpty,
                "no custody questions before the Gateway handed out a cursor")
        book.applyHistory(["messages": [], "deltaCursor": "c1.0"], gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        #expect(book.inputRunIds(gateway: Self.gateway, sessionKey: "main", configuration: Self.reference) == [first.key, second.key])
        #expect(book.inputRunIds(gateway: Self.gateway, sessionKey: "main", configuration: TestSupport.configuration([.ignoreInputReceipts])).isEmpty)

        let pending: JSONValue = ["messages": [], "deltaCursor": "c1.0",
                                  "inputReceipts": [["runId": .string(second.key), "state": "pending"]]]
        var resending = book
        book.applyHistory(pending, gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        #expect(book.bubbles(gateway: Self.gateway).map(\.status) == [.accepted, .accepted])
        #expect(book.flushPlan(gateway: Self.gateway, configuration: Self.reference).isEmpty, "a pending input is not resent")
        let mutant = TestSupport.configuration([.resendPendingInput])
        resending.applyHistory(pending, gateway: Self.gateway, sessionKey: "main", configuration: mutant)
        #expect(resending.flushPlan(gateway: Self.gateway, configuration: mutant).map(\.key) == [second.key])

        var listed = ChatBook()
        let queued = try #require(Self.queue(&listed, "q"))
        listed.mark(queued.key, .unconfirmed)
        listed.applyHistory(["messages": [], "pendingInputs": ["items": [["id": "p1", "runId": .string(queued.key), "state": "queued"]], "total": 1]],
                            gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        #expect(listed.bubbles(gateway: Self.gateway).map(\.status) == [.accepted], "pendingInputs lists it: accepted")

        let consumed: JSONValue = ["messages": [Self.row("a\nb", seq: 1, key: first.key)], "deltaCursor": "c1.1",
                                   "inputReceipts": [["runId": .string(first.key), "state": "consumed", "consumedByEventId": "e1"],
                                                     ["runId": .string(second.key), "state": "consumed", "consumedByEventId": "e1"]]]
        var ignoring = book
        #expect(book.applyHistory(consumed, gateway: Self.gateway, sessionKey: "main", configuration: Self.reference).sorted()
            == [first.key, second.key].sorted())
        #expect(book.bubbles(gateway: Self.gateway).isEmpty)
        ignoring.applyHistory(consumed, gateway: Self.gateway, sessionKey: "main", configuration: TestSupport.configuration([.ignoreInputReceipts]))
        #expect(ignoring.bubbles(gateway: Self.gateway).map(\.key) == [second.key], "the mutant keeps the collected input")
    }

    @Test func aDeltaMergesAndAResetDropsTheMergedRowsAndTheCursor() {
        var book = ChatBook()
        book.applyHistory(["messages": [Self.row("a", seq: 1)], "deltaCursor": "c1.1"], gateway: Self.gateway, sessionKey: "main",
                          configuration: Self.reference)
        #expect(book.cursor(gateway: Self.gateway, sessionKey: "main") == "c1.1")
        #expect(book.cursor(gateway: Self.other, sessionKey: "main") == nil, "a cursor never leaves its Gateway")
        #expect(book.cursor(gateway: Self.gateway, sessionKey: "side") == nil, "… or its session")
        book.applyHistory(["kind": "delta", "messages": [Self.row("a", seq: 1), Self.row("b", seq: 2)], "deltaCursor": "c1.2"],
                          gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        #expect(book.transcript(gateway: Self.gateway, sessionKey: "main").map(\.text) == ["a", "b"])
        #expect(book.cursor(gateway: Self.gateway, sessionKey: "main") == "c1.2")
        var stubborn = book
        book.historyReset(gateway: Self.gateway, sessionKey: "main", configuration: Self.reference)
        #expect(book.transcript(gateway: Self.gateway, sessionKey: "main").isEmpty)
        #expect(book.cursor(gateway: Self.gateway, sessionKey: "main") == nil)
        stubborn.historyReset(gateway: Self.gateway, sessionKey: "main", configuration: TestSupport.configuration([.ignoreHistoryReset]))
        #expect(stubborn.cursor(gateway: Self.gateway, sessionKey: "main") == "c1.2")
    }
}
