import Foundation
import GatewayProtocol
import MockGateway
import Testing
import WebSocketTransport

/// The chat history contract over real sockets: closed params per generation, cursor deltas and
/// resets, input receipts and pending inputs, queue modes, `chat.message.get`, `chat.startup` and
/// `sessions.patch` / `reset` / `compact`.
///
/// Breaks tried (each made a test here fail): accepting an unknown `chat.history` member (the
/// `deltaCursor` test), answering a cursor from before a compaction with a delta, leaving
/// `inputReceipts` out, writing queued inputs to history at once, dropping the envelope key, a
/// `not_visible` row answered `not_found`, `sessions.patch` without a closed schema.
@Suite("Chat history contract on the wire")
struct ChatHistoryWireTests {
    static func chatter(_ gateway: Gateway, _ byte: UInt8, scopes: [String] = ChatEndToEndTests.chatScopes) async throws -> ConnectedSession {
        try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(byte), scopes: scopes)
    }

    static func texts(_ response: ResponseFrame) -> [String] { ChatEndToEndTests.historyTexts(response) }

    @Test func aDeltaCursorMemberIsRefusedAndTheTailsCursorComesBackAsCursor() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0xA0)
            _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("one", key: "k-1"))
            let tail = try await session.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(tail.ok && tail.payload?["kind"] == nil && Self.texts(tail) == ["one", "echo: one"])
            let cursor = try #require(tail.payload?["deltaCursor"]?.stringValue)

            let refused = try await session.client.request("chat.history", params: ["sessionKey": "main", "deltaCursor": .string(cursor)])
            #expect(refused.error?.code == "INVALID_REQUEST")
            #expect(refused.error?.message == "invalid chat.history params: at root: unexpected property 'deltaCursor'")

            _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("two", key: "k-2"))
            let delta = try await session.client.request("chat.history", params: ["sessionKey": "main", "cursor": .string(cursor)])
            #expect(delta.payload?["kind"] == "delta")
            #expect(Self.texts(delta) == ["two", "echo: two"])
            #expect(delta.payload?["sessionInfo"]?["sessionId"] == "session-main")
            #expect(delta.payload?["deltaCursor"]?.stringValue != cursor)
            #expect(delta.payload?["messages"]?.arrayValue?.first?["__openclaw"]?["idempotencyKey"] == "k-2:user")

            let garbage = try await session.client.request("chat.history", params: ["sessionKey": "main", "cursor": "1"])
            #expect(garbage.ok && garbage.payload == ["kind": "reset"], "a cursor this Gateway never handed out")
            let elsewhere = try await session.client.request("chat.history", params: ["sessionKey": "side", "cursor": .string(cursor)])
            #expect(elsewhere.payload == ["kind": "reset"], "a cursor of another session")
        }
    }

    /// `sessions.reset` and `sessions.compact` need `operator.admin` (upstream's method table).
    static let adminChatScopes = ChatEndToEndTests.chatScopes + ["operator.admin"]

    @Test func aCompactionOrAResetInvalidatesCursors() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0xA1, scopes: Self.adminChatScopes)
            for index in 1...3 { _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("m\(index)", key: "c-\(index)")) }
            let before = try #require(try await session.client.request("chat.history", params: ["sessionKey": "main"]).payload?["deltaCursor"]?.stringValue)
            let compacted = try await session.client.request("sessions.compact", params: ["key": "main", "maxLines": 2])
            #expect(compacted.payload == ["ok": true, "key": "main", "compacted": true, "kept": 2])
            let stale = try await session.client.request("chat.history", params: ["sessionKey": "main", "cursor": .string(before)])
            #expect(stale.payload == ["kind": "reset"])
            let fresh = try await session.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(Self.texts(fresh) == ["m3", "echo: m3"])
            let after = try #require(fresh.payload?["deltaCursor"]?.stringValue)
            #expect(try await session.client.request("chat.history", params: ["sessionKey": "main", "cursor": .string(after)]).payload?["kind"] == "delta")

            let reset = try await session.client.request("sessions.reset", params: ["key": "main", "reason": "reset"])
            #expect(reset.payload?["ok"] == true && reset.payload?["key"] == "main")
            #expect(reset.payload?["entry"]?["sessionId"]?.stringValue != "session-main", "a reset starts a new transcript")
            #expect(try await session.client.request("chat.history", params: ["sessionKey": "main", "cursor": .string(after)]).payload == ["kind": "reset"])
            #expect(Self.texts(try await session.client.request("chat.history", params: ["sessionKey": "main"])).isEmpty)

            let badReason = try await session.client.request("sessions.reset", params: ["key": "main", "reason": "wipe"])
            #expect(badReason.error?.code == "INVALID_REQUEST")
            let badLines = try await session.client.request("sessions.compact", params: ["key": "main", "maxLines": 0])
            #expect(badLines.error?.message == "invalid sessions.compact params: at /maxLines: must be >= 1")
        }
    }

    @Test func queuedInputsArePendingThenConsumedByTheRunThatCollectedThem() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0xA2)
            await gateway.holdChatRun()
            let first = try await session.client.request("chat.send", params: ChatEndToEndTests.send("a", key: "q-a"))
            #expect(first.payload == ["runId": "q-a", "status": "started"])
            _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("b", key: "q-b"))
            let waiting = try await session.client.request("chat.history", params: ["sessionKey": "main", "inputRunIds": ["q-a", "q-b"]])
            #expect(Self.texts(waiting).isEmpty, "queued inputs are not canonical history")
            #expect(waiting.payload?["inputReceipts"] == [["runId": "q-a", "state": "pending"], ["runId": "q-b", "state": "pending"]])
            #expect(waiting.payload?["pendingInputs"]?["total"] == 2)
            #expect(waiting.payload?["pendingInputs"]?["items"]?.arrayValue?.map { $0["state"] } == ["queued", "queued"])

            await gateway.releaseChatRun(collect: true)
            let done = try await session.client.request("chat.history", params: ["sessionKey": "main", "inputRunIds": ["q-a", "q-b"]])
            #expect(Self.texts(done) == ["a\nb", "echo: a\nb"])
            let rowId = try #require(done.payload?["messages"]?.arrayValue?.first?["__openclaw"]?["id"])
            #expect(done.payload?["inputReceipts"] == [["runId": "q-a", "state": "consumed", "consumedByEventId": rowId],
                                                       ["runId": "q-b", "state": "consumed", "consumedByEventId": rowId]])
            #expect(done.payload?["inputConsumptions"] == [["runId": "q-a", "consumedByEventId": rowId],
                                                           ["runId": "q-b", "consumedByEventId": rowId]])
            #expect(done.payload?["pendingInputs"] == nil)

            let duplicate = try await session.client.request("chat.history", params: ["sessionKey": "main", "inputRunIds": ["q-a", "q-a"]])
            #expect(duplicate.error?.code == "INVALID_REQUEST", "inputRunIds are unique")
        }
    }

    @Test func interruptCancelsTheActiveRunAndItsQueuedInputs() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0xA3)
            await gateway.holdChatRun()
            _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("waiting", key: "i-1"))
            var params = ChatEndToEndTests.send("stop and do this", key: "i-2").objectValue ?? [:]
            params["queueMode"] = "interrupt"
            let ack = try await session.client.request("chat.send", params: .object(params))
            #expect(ack.payload == ["runId": "i-2", "status": "started", "interruptedActiveRun": true])
            let history = try await session.client.request("chat.history", params: ["sessionKey": "main", "inputRunIds": ["i-1", "i-2"]])
            #expect(Self.texts(history) == ["stop and do this", "echo: stop and do this"])
            #expect(history.payload?["pendingInputs"]?["items"]?.arrayValue?.map { $0["state"] } == ["interrupted"])
            params["queueMode"] = "later"
            params["idempotencyKey"] = "i-3"
            let badMode = try await session.client.request("chat.send", params: .object(params))
            #expect(badMode.error?.code == "INVALID_REQUEST")
        }
    }

    @Test func messageGetAnswersEachUnavailableReason() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0xA4)
            _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("a long enough message", key: "g-1"))
            let rows = await gateway.chatMessages()
            let first = try #require(rows.first?.id)
            let found = try await session.client.request("chat.message.get", params: ["sessionKey": "main", "messageId": .string(first)])
            #expect(found.payload?["ok"] == true && found.payload?["message"]?["__openclaw"]?["id"]?.stringValue == first)
            let oversized = try await session.client.request("chat.message.get",
                                                             params: ["sessionKey": "main", "messageId": .string(first), "maxChars": 4])
            #expect(oversized.payload == ["ok": false, "unavailableReason": "oversized"])
            let missing = try await session.client.request("chat.message.get", params: ["sessionKey": "main", "messageId": "nope"])
            #expect(missing.payload == ["ok": false, "unavailableReason": "not_found"])
            await gateway.compactChatSession(keep: 1)
            let hidden = try await session.client.request("chat.message.get", params: ["sessionKey": "main", "messageId": .string(first)])
            #expect(hidden.payload == ["ok": false, "unavailableReason": "not_visible"])
            let tooBig = try await session.client.request("chat.message.get",
                                                          params: ["sessionKey": "main", "messageId": .string(first), "maxChars": 2_000_001])
            #expect(tooBig.error?.code == "INVALID_REQUEST")
        }
    }

    @Test func startupAnswersLikeHistoryAndPatchIsClosed() async throws {
        try await Gateway.withGateway { gateway in
            let session = try await Self.chatter(gateway, 0xA5)
            _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("hi", key: "s-1"))
            let startup = try await session.client.request("chat.startup", params: ["sessionKey": "main", "limit": 1])
            #expect(Self.texts(startup) == ["echo: hi"] && startup.payload?["deltaCursor"] != nil)
            let link = try await session.client.request("chat.startup", params: ["shortId": "abc"])
            #expect(link.error?.message == "invalid chat.startup params: at root: must have required property 'agentId'")

            let patched = try await session.client.request("sessions.patch", params: ["key": "main", "label": "Ops", "pinned": true])
            #expect(patched.payload?["ok"] == true && patched.payload?["entry"]?["label"] == "Ops" && patched.payload?["entry"]?["pinned"] == true)
            let listed = try await session.client.request("sessions.list", params: [:])
            #expect(listed.payload?["sessions"]?.arrayValue?.first?["label"] == "Ops")
            let cleared = try await session.client.request("sessions.patch", params: ["key": "main", "label": .null])
            #expect(cleared.payload?["entry"]?["label"] == nil)
            // An unknown member raises the scope to admin before the schema sees it (upstream fails
            // closed on unknown fields); an admin gets the schema's refusal.
            let unknownAsWriter = try await session.client.request("sessions.patch", params: ["key": "main", "nickname": "x"])
            #expect(unknownAsWriter.error?.message == "missing scope: operator.admin")
            let admin = try await Self.chatter(gateway, 0xAA, scopes: Self.adminChatScopes)
            let unknown = try await admin.client.request("sessions.patch", params: ["key": "main", "nickname": "x"])
            #expect(unknown.error?.message == "invalid sessions.patch params: at root: unexpected property 'nickname'")
            let badType = try await session.client.request("sessions.patch", params: ["key": "main", "pinned": "yes"])
            #expect(badType.error?.message == "invalid sessions.patch params: at /pinned: must be boolean")

            let reader = try await Self.chatter(gateway, 0xA6, scopes: ["operator.read"])
            let denied = try await reader.client.request("sessions.patch", params: ["key": "main", "label": "no"])
            #expect(denied.error?.message == "missing scope: operator.write")

            // Upstream's `dynamic` scope (break tried: no check in the handler; the writer's
            // `sendPolicy` patch then succeeded): organisation fields need write, others admin.
            let sendPolicy = try await session.client.request("sessions.patch", params: ["key": "main", "sendPolicy": "deny"])
            #expect(sendPolicy.error?.message == "missing scope: operator.admin")
            let fullAccess = try await session.client.request("sessions.patch", params: ["key": "main", "permissionMode": "full"])
            #expect(fullAccess.error?.message == "missing scope: operator.admin")
            let adminPatch = try await admin.client.request("sessions.patch", params: ["key": "main", "sendPolicy": "deny"])
            #expect(adminPatch.payload?["ok"] == true, "\(adminPatch)")
            let writerReset = try await session.client.request("sessions.reset", params: ["key": "main"])
            #expect(writerReset.error?.message == "missing scope: operator.admin")
            let allowed = try await reader.client.request("chat.message.get", params: ["sessionKey": "main", "messageId": "x"])
            #expect(allowed.ok)
        }
    }

    @Test func theOlderGenerationHasNoCursorNoCustodyAndNoStartup() async throws {
        try await Gateway.withGateway(GatewayConfiguration(profile: .legacy)) { gateway in
            let session = try await Self.chatter(gateway, 0xA7)
            _ = try await session.client.request("chat.send", params: ChatEndToEndTests.send("old", key: "o-1"))
            let tail = try await session.client.request("chat.history", params: ["sessionKey": "main"])
            #expect(Self.texts(tail) == ["old", "echo: old"] && tail.payload?["deltaCursor"] == nil)
            let cursor = try await session.client.request("chat.history", params: ["sessionKey": "main", "cursor": "c1.0"])
            #expect(cursor.error?.message == "invalid chat.history params: at root: unexpected property 'cursor'")
            let receipts = try await session.client.request("chat.history", params: ["sessionKey": "main", "inputRunIds": ["o-1"]])
            #expect(receipts.error?.code == "INVALID_REQUEST")
            var params = ChatEndToEndTests.send("steer", key: "o-2").objectValue ?? [:]
            params["queueMode"] = "steer"
            #expect(try await session.client.request("chat.send", params: .object(params)).error?.code == "INVALID_REQUEST")
            let startup = try await session.client.request("chat.startup", params: ["sessionKey": "main"])
            #expect(startup.error?.message.contains("unknown method") == true)
            let get = try await session.client.request("chat.message.get", params: ["sessionKey": "main", "messageId": "nope"])
            #expect(get.payload == ["ok": false, "unavailableReason": "not_found"])
        }
    }

    /// Break tried: sending `sessions.changed` to every reader (the per-key subscriber then saw it).
    @Test func sessionsChangedGoesToSessionSubscribersOnPatchResetAndCompact() async throws {
        try await Gateway.withGateway { gateway in
            let watcher = try await Self.chatter(gateway, 0xA8, scopes: Self.adminChatScopes)
            let subscribed = try await watcher.client.request("sessions.subscribe", params: [:])
            #expect(subscribed.payload?["subscribed"] == true)
            let follower = try await Self.chatter(gateway, 0xA9)
            try await ChatEndToEndTests.follow(follower)
            #expect(watcher.hello.features.events.contains("sessions.changed"))

            let (_, patchEvents) = try await watcher.client.requestCollecting("sessions.patch", params: ["key": "main", "label": "Ops"])
            let (_, resetEvents) = try await watcher.client.requestCollecting("sessions.reset", params: ["key": "main"])
            let (_, compactEvents) = try await watcher.client.requestCollecting("sessions.compact", params: ["key": "main"])
            let later = try await watcher.client.barrier()
            let changes = TestClient.events("sessions.changed", in: patchEvents + resetEvents + compactEvents + later)
            #expect(changes.map { $0.payload?["reason"]?.stringValue } == ["patch", "reset", "compact"])
            #expect(changes.allSatisfy { $0.payload?["sessionKey"] == "main" && $0.payload?["ts"]?.int64Value != nil })
            #expect(changes.first?.payload?["label"] == "Ops", "the session row is spread into the payload")
            #expect(changes.last?.payload?["compacted"] == false)
            let followerSaw = try await follower.client.barrier()
            #expect(TestClient.events("sessions.changed", in: followerSaw).isEmpty, "a per-session message subscriber gets no sessions.changed")
        }
    }
}
