import GatewayProtocol
@testable import MockGateway
import Testing

/// Chat as a state machine (``ChatState/handle(_:to:ids:)``): chat and session requests, the
/// scripted agent, the clock and closed connections in, Gateway effects out, no socket.
/// (Breaks tried, each run against this suite: acknowledging a `chat.send` before publishing its
/// rows fails `aSendPublishesItsRowsThenAcksThenReleasesTheAgentsReply`; dropping the scope gate
/// from `session.message` fails `sessionMessageReachesSubscribersThatMayReadIt`; settling the
/// parked waits before releasing the due rows fails `aParkedWaitIsAnsweredWhenItsRunEndsOrItsDeadlinePasses`;
/// sending `sessions.changed` to every listener fails `sessionsChangedGoesToSessionSubscribersOnly`;
/// drawing a fork's key before validating its params fails `aForkDrawsItsKeyOnlyFromValidParams`;
/// not refreshing the deadline after a transition fails `theDeadlineFollowsScheduledRowsAndParkedWaits`;
/// announcing the group catalog only after a successful rename fails
/// `aGroupRenameAnnouncesTheCatalogEvenWhenRefused`; announcing a rewind with reason `reset`
/// fails `aRewindAnswersItsEditorTextAndAnnouncesTheRewind`; announcing a branch switch with
/// reason `rewind` fails `aBranchSwitchReturnsToTheOldTipAndAnnouncesTheSwitch`; writing the
/// first message of a `sessions.create` without publishing its rows (bypassing the `chat.send`
/// path) fails `aCreateSendsItsFirstMessageThroughTheSendPathAndAnnouncesBoth`; recording every
/// observer visibility as `true` fails `observerVisibilityIsRecordedPerConnectionAndForgottenOnClose`.)
@Suite struct ChatMachineTests {
    static let t0: Int64 = 1_700_000_000_000
    static let reader = OperatorListener(connectionId: "c1", role: "operator", scopes: ["operator.read"], deviceId: "d1")
    static let noScopes = OperatorListener(connectionId: "c2", role: "operator", scopes: [], deviceId: "d2")
    static let other = OperatorListener(connectionId: "c3", role: "operator", scopes: ["operator.read"], deviceId: "d3")
    static let everyone = [reader, noScopes, other]

    static func reply(_ id: String, _ method: GatewayMethod, on connectionId: String = "c1") -> ReplyAddress {
        ReplyAddress(requestId: id, method: method.rawValue, connectionId: connectionId)
    }

    static func send(_ key: String, _ text: String = "hi", session: String = "main") -> JSONValue {
        ["sessionKey": .string(session), "message": .string(text), "idempotencyKey": .string(key)]
    }

    /// A machine and an id stream.
    struct Harness {
        var chat = ChatState(profile: .current)
        var ids = SeededRandom(seed: 7)

        mutating func handle(_ input: ChatState.Input, to listeners: [OperatorListener] = ChatMachineTests.everyone) -> [GatewayEffect] {
            chat.handle(input, to: listeners, ids: &ids)
        }
    }

    /// The `session.message` of a row.
    static func sessionMessage(_ message: ChatMessage) -> JSONValue {
        ["sessionKey": .string(message.sessionKey), "message": message.json, "messageId": .string(message.id),
         "messageSeq": .int(Int64(message.seq))]
    }

    @Test func aSendPublishesItsRowsThenAcksThenReleasesTheAgentsReply() throws {
        var machine = Harness()
        _ = machine.handle(.followMessages(key: "main", connectionId: "c1"))
        let reply = Self.reply("r1", .chatSend)
        let effects = machine.handle(.send(Self.send("k1"), reply, nowMs: Self.t0))
        let rows = machine.chat.store.messages(in: "main")
        try #require(rows.count == 2)
        let (user, agent) = (rows[0], rows[1])
        #expect(agent.role == .assistant && agent.runId == "k1")
        #expect(effects == [
            .log(.chatMessageStored(user)),
            .sendSequenced(event: GatewayEventName.sessionMessage.rawValue, payload: Self.sessionMessage(user), to: "c1"),
            reply.success(["runId": "k1", "status": "started"]),
            .log(.chatMessageStored(agent)),
            .sendSequenced(event: GatewayEventName.sessionMessage.rawValue, payload: Self.sessionMessage(agent), to: "c1"),
            .broadcast(event: GatewayEventName.chat.rawValue, payload: [
                "runId": "k1", "sessionKey": "main", "seq": .int(Int64(agent.seq)), "state": "final", "message": agent.json,
            ], stateVersion: nil),
        ])
        // The same key again: the first ack, nothing written or published.
        let again = machine.handle(.send(Self.send("k1"), Self.reply("r2", .chatSend), nowMs: Self.t0 + 1))
        #expect(again == [Self.reply("r2", .chatSend).success(["runId": "k1", "status": "started"])])
        #expect(machine.chat.store.messages(in: "main").count == 2)
    }

    @Test func anInvalidSendIsRefusedAndChangesNothing() {
        var machine = Harness()
        let effects = machine.handle(.send(["sessionKey": "main", "message": "hi"], Self.reply("r1", .chatSend), nowMs: Self.t0))
        #expect(effects.count == 1)
        guard case .respond(let response, _, _, _)? = effects.first else { return #expect(Bool(false)) }
        #expect(response.error?.code == ErrorCode.invalidRequest.rawValue)
        #expect(machine.chat.store.messages(in: "main").isEmpty)
    }

    @Test func sessionMessageReachesSubscribersThatMayReadIt() {
        var machine = Harness()
        _ = machine.handle(.followMessages(key: "main", connectionId: "c1"))
        _ = machine.handle(.followMessages(key: "main", connectionId: "c2"))
        _ = machine.handle(.followMessages(key: "elsewhere", connectionId: "c3"))
        _ = machine.handle(.setAutoReply(.off))
        let effects = machine.handle(.send(Self.send("k1"), Self.reply("r1", .chatSend), nowMs: Self.t0))
        let receivers = effects.compactMap { effect -> String? in
            if case .sendSequenced(GatewayEventName.sessionMessage.rawValue, _, let to) = effect { to } else { nil }
        }
        #expect(receivers == ["c1"], "c2 lacks operator.read, c3 follows another session")
        // `sessions.subscribe` follows every session; unsubscribing and closing end it.
        _ = machine.handle(.subscribeSessions(true, Self.reply("r2", .sessionsSubscribe, on: "c3")))
        _ = machine.handle(.unfollowMessages(key: "main", connectionId: "c1"))
        let next = machine.handle(.send(Self.send("k2"), Self.reply("r3", .chatSend), nowMs: Self.t0))
        #expect(next.compactMap { if case .sendSequenced(_, _, let to) = $0 { to } else { nil } } == ["c3"])
        _ = machine.handle(.connectionClosed("c3"))
        let last = machine.handle(.send(Self.send("k3"), Self.reply("r4", .chatSend), nowMs: Self.t0))
        #expect(!last.contains { if case .sendSequenced = $0 { true } else { false } })
    }

    @Test func aParkedWaitIsAnsweredWhenItsRunEndsOrItsDeadlinePasses() {
        var machine = Harness()
        _ = machine.handle(.setAutoReply(.echo(delay: .milliseconds(1_000))))
        _ = machine.handle(.send(Self.send("k1"), Self.reply("r1", .chatSend), nowMs: Self.t0))
        let waitRun = Self.reply("w1", .agentWait, on: "c2")
        let waitOther = Self.reply("w2", .agentWait, on: "c3")
        #expect(machine.handle(.wait(["runId": " k1 ", "timeoutMs": 5_000], waitRun, nowMs: Self.t0)).isEmpty)
        #expect(machine.handle(.wait(["runId": "nope", "timeoutMs": 2_000], waitOther, nowMs: Self.t0)).isEmpty)
        #expect(machine.chat.nextDeadlineMs == Self.t0 + 1_000)
        let due = machine.handle(.clock(nowMs: Self.t0 + 1_000))
        #expect(due.last == waitRun.success(["runId": "k1", "status": "ok", "endedAt": .int(Self.t0 + 1_000)]),
                "the run's reply is written first, then its waiter answered")
        #expect(machine.chat.nextDeadlineMs == Self.t0 + 2_000)
        #expect(machine.handle(.clock(nowMs: Self.t0 + 2_000)) == [
            waitOther.success(["runId": "nope", "status": "timeout", "timeoutPhase": "queue", "providerStarted": false]),
        ])
        #expect(machine.chat.nextDeadlineMs == nil)
        // A run that ended already answers at once; a zero timeout answers at once too.
        #expect(machine.handle(.wait(["runId": "k1"], waitRun, nowMs: Self.t0 + 3_000)) == [
            waitRun.success(["runId": "k1", "status": "ok", "endedAt": .int(Self.t0 + 1_000)]),
        ])
        #expect(machine.handle(.wait(["runId": "x", "timeoutMs": 0], waitRun, nowMs: Self.t0 + 3_000)).count == 1)
    }

    @Test func anAbortStopsTheRunAnnouncesItAndAnswersItsWaiters() {
        var machine = Harness()
        _ = machine.handle(.setAutoReply(.echo(delay: .milliseconds(1_000))))
        _ = machine.handle(.send(Self.send("k1"), Self.reply("r1", .chatSend), nowMs: Self.t0))
        let wait = Self.reply("w1", .agentWait, on: "c2")
        _ = machine.handle(.wait(["runId": "k1"], wait, nowMs: Self.t0))
        let abort = Self.reply("a1", .chatAbort)
        #expect(machine.handle(.abort(["sessionKey": "main"], abort, nowMs: Self.t0 + 10)) == [
            abort.success(["ok": true, "aborted": true, "runIds": ["k1"]]),
            .broadcast(event: GatewayEventName.chat.rawValue, payload: [
                "runId": "k1", "sessionKey": "main", "seq": 1, "state": "aborted", "stopReason": "rpc",
            ], stateVersion: nil),
            wait.success(["runId": "k1", "status": "timeout", "endedAt": .int(Self.t0 + 10), "stopReason": "rpc"]),
        ])
        #expect(machine.chat.runWaiters.isEmpty)
        // Nothing is written when the reply falls due.
        #expect(machine.handle(.clock(nowMs: Self.t0 + 1_000)).isEmpty)
    }

    @Test func aClosedConnectionsWaitsGoUnanswered() {
        var machine = Harness()
        _ = machine.handle(.wait(["runId": "k1", "timeoutMs": 100], Self.reply("w1", .agentWait, on: "c2"), nowMs: Self.t0))
        #expect(machine.chat.nextDeadlineMs == Self.t0 + 100)
        #expect(machine.handle(.connectionClosed("c2")).isEmpty)
        #expect(machine.chat.nextDeadlineMs == nil)
        #expect(machine.handle(.clock(nowMs: Self.t0 + 100)).isEmpty)
    }

    @Test func sessionsChangedGoesToSessionSubscribersOnly() {
        var machine = Harness()
        _ = machine.handle(.subscribeSessions(true, Self.reply("s1", .sessionsSubscribe)))
        _ = machine.handle(.subscribeSessions(true, Self.reply("s2", .sessionsSubscribe, on: "c2")))
        _ = machine.handle(.followMessages(key: "main", connectionId: "c3"))
        let reply = Self.reply("r1", .sessionsReset)
        let effects = machine.handle(.reset(["key": "main"], reply, nowMs: Self.t0))
        var changed = machine.chat.store.sessionRow("main").objectValue ?? [:]
        changed["sessionKey"] = "main"
        changed["reason"] = "reset"
        changed["ts"] = .int(Self.t0)
        #expect(effects == [
            .noteFault("session main reset", on: "-"),
            reply.success(["ok": true, "key": "main", "entry": machine.chat.store.sessionRow("main")]),
            .sendSequenced(event: GatewayEventName.sessionsChanged.rawValue, payload: .object(changed), to: "c1"),
        ], "c2 lacks operator.read, c3 follows messages only")
    }

    @Test func aDeleteIsRefusedOrAnnouncedWithTheAgent() {
        var machine = Harness()
        _ = machine.handle(.subscribeSessions(true, Self.reply("s1", .sessionsSubscribe)))
        let admin = ["operator.admin"]
        let main = Self.reply("d1", .sessionsDelete)
        #expect(machine.handle(.delete(["key": "main"], callerScopes: admin, agentId: "a", main, nowMs: Self.t0)) == [
            main.failure(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "Cannot delete the main session (main).")),
        ])
        let writer = machine.handle(.delete(["key": "s1"], callerScopes: ["operator.write"], agentId: "a", main, nowMs: Self.t0))
        #expect(writer == [main.failure(OperatorMethodPolicy.missingScopeError(.admin, requiredScopes: [.admin],
                                                                               style: GatewayProfile.current.missingScopeStyle))])
        _ = machine.handle(.send(Self.send("k1", session: "s1"), Self.reply("r1", .chatSend), nowMs: Self.t0))
        let reply = Self.reply("d2", .sessionsDelete)
        #expect(machine.handle(.delete(["key": " s1 "], callerScopes: admin, agentId: "a", reply, nowMs: Self.t0 + 5)) == [
            .noteFault("session s1 deleted", on: "-"),
            reply.success(["ok": true, "key": "s1", "deleted": true, "archived": []]),
            .sendSequenced(event: GatewayEventName.sessionsChanged.rawValue,
                           payload: ["agentId": "a", "sessionKey": "s1", "reason": "delete", "ts": .int(Self.t0 + 5)], to: "c1"),
        ])
        // The scripting API's deletion: no such session any more, so no event.
        let (result, effects) = machine.chat.deleteSession("s1", agentId: "a", nowMs: Self.t0 + 6, to: Self.everyone)
        #expect((try? result.get()) == false && effects.isEmpty)
    }

    @Test func aForkDrawsItsKeyOnlyFromValidParams() {
        var machine = Harness()
        var untouched = machine.ids
        let refused = machine.handle(.fork(["sessionKey": "main"], agentId: "a", Self.reply("f1", .sessionsFork), nowMs: Self.t0))
        #expect(refused.count == 1)
        #expect(machine.ids.next() == untouched.next(), "an invalid fork draws no id")
    }

    @Test func theDeadlineFollowsScheduledRowsAndParkedWaits() {
        var machine = Harness()
        #expect(machine.chat.nextDeadlineMs == nil)
        _ = machine.handle(.postAssistant(text: "later", sessionKey: "main", delayMs: 500, nowMs: Self.t0))
        #expect(machine.chat.nextDeadlineMs == Self.t0 + 500)
        _ = machine.handle(.wait(["runId": "k", "timeoutMs": 200], Self.reply("w1", .agentWait), nowMs: Self.t0))
        #expect(machine.chat.nextDeadlineMs == Self.t0 + 200)
        _ = machine.handle(.clock(nowMs: Self.t0 + 200))
        #expect(machine.chat.nextDeadlineMs == Self.t0 + 500)
        let due = machine.handle(.clock(nowMs: Self.t0 + 500))
        #expect(due.contains { if case .broadcast(GatewayEventName.chat.rawValue, _, _) = $0 { true } else { false } })
        #expect(machine.chat.nextDeadlineMs == nil)
        // A wait of any length: the deadline saturates.
        _ = machine.handle(.wait(["runId": "k", "timeoutMs": .int(Int64.max)], Self.reply("w2", .agentWait), nowMs: Self.t0))
        #expect(machine.chat.nextDeadlineMs == Int64.max)
    }

    @Test func aGroupRenameAnnouncesTheCatalogEvenWhenRefused() {
        var machine = Harness()
        _ = machine.handle(.subscribeSessions(true, Self.reply("s1", .sessionsSubscribe)))
        let reply = Self.reply("g1", .sessionsGroupsRename)
        let effects = machine.handle(.groupsRenameOrDelete(["name": "Nope", "to": "Other"], rename: true, reply, nowMs: Self.t0))
        #expect(effects.count == 2)
        guard case .respond(let response, _, _, _)? = effects.first else { return #expect(Bool(false)) }
        #expect(response.error?.code == ErrorCode.invalidRequest.rawValue)
        #expect(effects.last == .sendSequenced(event: GatewayEventName.sessionsChanged.rawValue,
                                               payload: ["reason": "groups", "ts": .int(Self.t0)], to: "c1"))
        // A refused put sends nothing but its answer; a put announces before it answers.
        let put = Self.reply("g2", .sessionsGroupsPut)
        let putEffects = machine.handle(.groupsPut(["names": ["Work"]], put, nowMs: Self.t0))
        #expect(putEffects.first == .sendSequenced(event: GatewayEventName.sessionsChanged.rawValue,
                                                   payload: ["reason": "groups", "ts": .int(Self.t0)], to: "c1"))
        #expect(machine.chat.store.groupCatalog == ["Work"])
    }

    /// A machine whose `main` holds two user messages and their echoes, `c1` following `main`
    /// and subscribed to `sessions.changed`.
    static func twoTurns() -> (Harness, [ChatMessage]) {
        var machine = Harness()
        _ = machine.handle(.subscribeSessions(true, Self.reply("s1", .sessionsSubscribe)))
        _ = machine.handle(.send(Self.send("k1", "one"), Self.reply("r1", .chatSend), nowMs: Self.t0))
        _ = machine.handle(.send(Self.send("k2", "two"), Self.reply("r2", .chatSend), nowMs: Self.t0 + 1))
        return (machine, machine.chat.store.messages(in: "main"))
    }

    /// `sessions.changed` of `key` to `c1` as the machine's store shows the session now.
    static func changed(_ machine: Harness, _ key: String, _ reason: String, nowMs: Int64) -> GatewayEffect {
        var payload = machine.chat.store.sessionRow(key).objectValue ?? [:]
        payload["sessionKey"] = .string(key)
        payload["reason"] = .string(reason)
        payload["ts"] = .int(nowMs)
        return .sendSequenced(event: GatewayEventName.sessionsChanged.rawValue, payload: .object(payload), to: "c1")
    }

    @Test func aRewindAnswersItsEditorTextAndAnnouncesTheRewind() throws {
        var (machine, rows) = Self.twoTurns()
        try #require(rows.count == 4)
        // An assistant entry cannot be rewound to: the refusal only, nothing moves.
        let refused = Self.reply("w0", .sessionsRewind)
        #expect(machine.handle(.rewind(["sessionKey": "main", "entryId": .string(rows[3].id)], refused, nowMs: Self.t0 + 2)) == [
            refused.failure(MessageCutRefusal.notUserMessage(rows[3].id).shape),
        ])
        let reply = Self.reply("w1", .sessionsRewind)
        let effects = machine.handle(.rewind(["sessionKey": " main ", "entryId": .string(rows[2].id)], reply, nowMs: Self.t0 + 3))
        #expect(machine.chat.store.messages(in: "main") == Array(rows.prefix(2)))
        #expect(effects == [
            .noteFault("session main rewound to before \(rows[2].id)", on: "-"),
            reply.success(["editorText": "two"]),
            Self.changed(machine, "main", "rewind", nowMs: Self.t0 + 3),
        ])
    }

    @Test func aBranchSwitchReturnsToTheOldTipAndAnnouncesTheSwitch() throws {
        var (machine, rows) = Self.twoTurns()
        try #require(rows.count == 4)
        _ = machine.handle(.rewind(["sessionKey": "main", "entryId": .string(rows[2].id)], Self.reply("w1", .sessionsRewind), nowMs: Self.t0 + 2))
        let reply = Self.reply("b1", .sessionsBranchesSwitch)
        let effects = machine.handle(.switchBranch(["sessionKey": "main", "leafEntryId": .string(rows[3].id)], reply, nowMs: Self.t0 + 3))
        #expect(machine.chat.store.messages(in: "main") == rows)
        #expect(effects == [
            .noteFault("session main switched to the branch ending at \(rows[3].id)", on: "-"),
            reply.success([:]),
            Self.changed(machine, "main", "branch-switch", nowMs: Self.t0 + 3),
        ])
        // The active tip again: refused, no event.
        let again = Self.reply("b2", .sessionsBranchesSwitch)
        #expect(machine.handle(.switchBranch(["sessionKey": "main", "leafEntryId": .string(rows[3].id)], again, nowMs: Self.t0 + 4)) == [
            again.failure(MessageCutRefusal.alreadyActive(rows[3].id).shape),
        ])
        // The scripting API's switch: the same rule, the note and the event without an answer.
        let (result, notes, events) = machine.chat.switchBranch("main", leafEntryId: rows[1].id, nowMs: Self.t0 + 5, to: Self.everyone)
        #expect(result.isFailure && notes.isEmpty && events.isEmpty, "an inner entry is not a tip")
    }

    @Test func aCreateSendsItsFirstMessageThroughTheSendPathAndAnnouncesBoth() throws {
        var machine = Harness()
        _ = machine.handle(.subscribeSessions(true, Self.reply("s1", .sessionsSubscribe)))
        _ = machine.handle(.followMessages(key: "research", connectionId: "c1"))
        // An incognito session needs operator.admin: refused before anything is drawn or written.
        var untouched = machine.ids
        let denied = Self.reply("n0", .sessionsCreate)
        #expect(machine.handle(.create(["incognito": true], callerScopes: ["operator.write"], agentId: "a", defaultModel: nil,
                                       denied, nowMs: Self.t0)) == [
            denied.failure(OperatorMethodPolicy.missingScopeError(.admin, requiredScopes: [.admin],
                                                                  style: GatewayProfile.current.missingScopeStyle)),
        ])
        #expect(machine.ids.next() == untouched.next())
        var expectedIds = machine.ids
        let idempotencyKey = expectedIds.uuidString().lowercased()
        let reply = Self.reply("n1", .sessionsCreate)
        let effects = machine.handle(.create(["key": "research", "message": "hello"], callerScopes: ["operator.write"], agentId: "a",
                                             defaultModel: .mockEcho, reply, nowMs: Self.t0 + 1))
        let rows = machine.chat.store.messages(in: "research")
        try #require(rows.count == 2)
        let (user, agent) = (rows[0], rows[1])
        #expect(user.idempotencyKey == idempotencyKey && agent.runId == idempotencyKey, "a fresh idempotency key from the id stream")
        #expect(machine.chat.store.hasApplied(idempotencyKey: idempotencyKey), "the first message went through chat.send")
        // The answer and the events show the session as the user message left it (the agent's
        // reply is released after them).
        var entry = machine.chat.store.sessionRow("research").objectValue ?? [:]
        entry["messageCount"] = 1
        entry["lastMessagePreview"] = "hello"
        func changed(_ reason: String) -> GatewayEffect {
            var payload = entry
            payload["agentId"] = "a"
            payload["sessionKey"] = "research"
            payload["reason"] = .string(reason)
            payload["ts"] = .int(Self.t0 + 1)
            return .sendSequenced(event: GatewayEventName.sessionsChanged.rawValue, payload: .object(payload), to: "c1")
        }
        let answer: JSONValue = [
            "ok": true, "key": "research", "sessionId": .string(machine.chat.store.sessionId("research")),
            "entry": .object(entry), "runStarted": true,
            "runId": .string(idempotencyKey), "status": "started",
            "resolved": ["modelProvider": "mock-gateway", "model": "mock-echo"],
        ]
        #expect(effects == [
            .noteFault("session research created", on: "-"),
            .log(.chatMessageStored(user)),
            .sendSequenced(event: GatewayEventName.sessionMessage.rawValue, payload: Self.sessionMessage(user), to: "c1"),
            reply.success(answer),
            changed("create"),
            changed("send"),
            .log(.chatMessageStored(agent)),
            .sendSequenced(event: GatewayEventName.sessionMessage.rawValue, payload: Self.sessionMessage(agent), to: "c1"),
            .broadcast(event: GatewayEventName.chat.rawValue, payload: [
                "runId": .string(idempotencyKey), "sessionKey": "research", "seq": .int(Int64(agent.seq)), "state": "final",
                "message": agent.json,
            ], stateVersion: nil),
        ])
        // Without a message: no run, one event; an unknown parent is refused.
        let plain = Self.reply("n2", .sessionsCreate)
        let adopted = machine.handle(.create(["key": "research", "label": "R"], callerScopes: ["operator.write"], agentId: "a",
                                             defaultModel: nil, plain, nowMs: Self.t0 + 2))
        #expect(adopted.first == .noteFault("session research adopted", on: "-"))
        #expect(adopted.filter { if case .sendSequenced(GatewayEventName.sessionsChanged.rawValue, _, _) = $0 { true } else { false } }.count == 1)
        let orphan = Self.reply("n3", .sessionsCreate)
        #expect(machine.handle(.create(["parentSessionKey": "nope"], callerScopes: ["operator.write"], agentId: "a", defaultModel: nil,
                                       orphan, nowMs: Self.t0 + 3)) == [
            orphan.failure(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unknown parent session: nope")),
        ])
    }

    @Test func observerVisibilityIsRecordedPerConnectionAndForgottenOnClose() {
        var machine = Harness()
        let shown = Self.reply("o1", .sessionsObserverVisibility)
        #expect(machine.handle(.observerVisibility(["visible": true], shown)) == [shown.success(["ok": true])])
        let hidden = Self.reply("o2", .sessionsObserverVisibility, on: "c3")
        #expect(machine.handle(.observerVisibility(["visible": false], hidden)) == [hidden.success(["ok": true])])
        #expect(machine.chat.messageSubscriptions.observerVisible == ["c1"])
        let invalid = machine.handle(.observerVisibility(["visible": "yes"], Self.reply("o3", .sessionsObserverVisibility)))
        #expect(invalid.count == 1)
        guard case .respond(let response, _, _, _)? = invalid.first else { return #expect(Bool(false)) }
        #expect(response.error?.code == ErrorCode.invalidRequest.rawValue)
        _ = machine.handle(.connectionClosed("c1"))
        #expect(machine.chat.messageSubscriptions.observerVisible.isEmpty)
    }
}

private extension Result {
    /// Whether this is a failure.
    var isFailure: Bool { if case .failure = self { true } else { false } }
}
