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
/// `aGroupRenameAnnouncesTheCatalogEvenWhenRefused`.)
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
}
