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

    static func row(_ text: String, role: String = "user", seq: Int, key: String? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["role": .string(role), "content": [["type": "text", "text": .string(text)]],
                                           "__openclaw": ["id": .string("e\(seq)"), "seq": .int(Int64(seq))]]
        if let key { object["idempotencyKey"] = .string(key) }
        return .object(object)
    }

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
        #expect(book.applyHistory(["messages": []], gateway: Self.gateway, sessionKey: "main").isEmpty)
        #expect(book.bubbles(gateway: Self.gateway).count == 1, "a lagging history retires nothing")
        let retired = book.applyHistory(["messages": [Self.row("hello", seq: 1, key: message.key)]], gateway: Self.gateway, sessionKey: "main")
        #expect(retired == [message.key])
        #expect(book.bubbles(gateway: Self.gateway).isEmpty)
        #expect(book.transcript(gateway: Self.gateway, sessionKey: "main").map(\.text) == ["hello"])

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
        book.applyHistory(["messages": [Self.row("a", seq: 1)]], gateway: Self.gateway, sessionKey: "main")
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
        book.applyHistory(["messages": [Self.row("earlier", seq: 1)]], gateway: Self.gateway, sessionKey: "main")
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
}
