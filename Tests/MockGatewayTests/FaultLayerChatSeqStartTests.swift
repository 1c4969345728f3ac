import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing
import WebSocketTransport

/// The faults that moved out of the rules into ``FaultLayer``: the `chat.send` ack drops and the
/// mid-flush cut, the `seq` gap and starting up, pinned as rewrites of the effects a healthy
/// Gateway decides. (Breaks tried: consuming an ack drop on an invalid `chat.send` fails
/// `anInvalidChatSendUsesUpNoAckDrop`; applying the gap to the one event only, not to the later
/// ones, fails `aSeqGapShiftsThisAndEveryLaterEventOfItsConnection`; the wire behaviour is pinned
/// by `ChatEndToEndTests`, `GatewayFaultTests` and `GatewayLifecycleTests`.)
@Suite struct FaultLayerChatSeqStartTests {
    static func chatSend(id: String = "r1", key: String = "k1", message: JSONValue = "hello", on connectionId: String = "c1") -> MethodCall {
        let client = ClientInfo(id: "openclaw-macos", version: "1", platform: "macOS", mode: "ui")
        let session = Session(role: "operator", scopes: ["operator.write"], deviceId: "dev", publicKey: nil, nodeId: nil, client: client,
                              protocolVersion: 3, authMethod: "token", deviceToken: nil, sharedAuthGeneration: nil)
        let params: JSONValue = ["sessionKey": "main", "message": message, "idempotencyKey": .string(key)]
        return MethodCall(request: RequestFrame(id: id, method: GatewayMethod.chatSend.rawValue, params: params),
                          session: session, connectionId: connectionId)
    }

    static func ack(_ id: String = "r1", on connectionId: String = "c1") -> GatewayEffect {
        .respond(.success(id: id, payload: ["runId": "k1", "status": "started"]), method: GatewayMethod.chatSend.rawValue, to: connectionId)
    }

    @Test func aChatSendLostBeforeApplyingIsAnsweredByTheLayerAndCut() {
        var layer = FaultLayer()
        #expect(layer.arm(.chatAckDrop(.beforeApplying, cut: false))
            == [.noteFault("lose the next chat.send before applying it and cut the connection", on: "-")])
        #expect(layer.answerInstead(of: Self.chatSend(), profile: .current) == [
            .loseAnswer(method: GatewayMethod.chatSend.rawValue, to: "c1", text: "chat.send k1 lost before it was applied (fault)"),
            .abort("c1"),
        ])
        // Used up: the next send runs its handler.
        #expect(layer.answerInstead(of: Self.chatSend(id: "r2"), profile: .current) == nil)
    }

    @Test func anAckDroppedAfterApplyingLetsTheHandlerRunAndLosesItsAnswer() {
        var layer = FaultLayer()
        _ = layer.arm(.chatAckDrop(.afterApplying, cut: false))
        #expect(layer.answerInstead(of: Self.chatSend(), profile: .current) == nil)
        // Another request's answer on the same connection is not touched.
        let other = GatewayEffect.respond(.success(id: "r0", payload: nil), method: "health", to: "c1")
        #expect(layer.rewrite(other) == [other])
        #expect(layer.rewrite(Self.ack()) == [
            .loseAnswer(method: GatewayMethod.chatSend.rawValue, to: "c1", text: "ack of chat.send k1 dropped after it was applied (fault)"),
        ])
        #expect(layer.rewrite(Self.ack()) == [Self.ack()])
        _ = layer.arm(.chatAckDrop(.afterApplying, cut: true))
        _ = layer.answerInstead(of: Self.chatSend(id: "r3"), profile: .current)
        #expect(layer.rewrite(Self.ack("r3")).last == .abort("c1"))
    }

    @Test func anInvalidChatSendUsesUpNoAckDrop() {
        var layer = FaultLayer()
        _ = layer.arm(.chatAckDrop(.beforeApplying, cut: true))
        #expect(layer.answerInstead(of: Self.chatSend(message: "  "), profile: .current) == nil)
        #expect(layer.answerInstead(of: Self.chatSend(key: ""), profile: .current) == nil)
        #expect(layer.plan.chatAckDrops.count == 1)
        #expect(layer.answerInstead(of: Self.chatSend(), profile: .current) != nil)
    }

    @Test func theMidFlushCutFollowsTheCountedAckAndNoOther() {
        var layer = FaultLayer()
        #expect(layer.arm(.chatCut(afterSends: 2))
            == [.noteFault("cut the connection after the next 2 acknowledged chat.send", on: "-")])
        #expect(layer.answerInstead(of: Self.chatSend(id: "r1", key: "a"), profile: .current) == nil)
        #expect(layer.rewrite(Self.ack("r1")) == [Self.ack("r1")])
        #expect(layer.answerInstead(of: Self.chatSend(id: "r2", key: "b"), profile: .current) == nil)
        #expect(layer.rewrite(Self.ack("r2")) == [
            Self.ack("r2"), .noteFault("cut the connection after acknowledging chat.send b (mid-flush)", on: "c1"), .abort("c1"),
        ])
        #expect(layer.plan.chatCutAfterSends == nil)
        // An ack drop in force takes the send out of the count.
        _ = layer.arm(.chatCut(afterSends: 1))
        _ = layer.arm(.chatAckDrop(.afterApplying, cut: false))
        _ = layer.answerInstead(of: Self.chatSend(id: "r4"), profile: .current)
        #expect(layer.plan.chatCutAfterSends == 1)
        _ = layer.arm(.chatCut(afterSends: 0))
        #expect(layer.plan.chatCutAfterSends == nil)
    }

    static func event(_ seq: Int?, on connectionId: String = "c1") -> GatewayEffect {
        .send(.event(EventFrame(event: GatewayEventName.presence.rawValue, seq: seq)), to: connectionId)
    }

    @Test func aSeqGapShiftsThisAndEveryLaterEventOfItsConnection() {
        var layer = FaultLayer()
        #expect(layer.arm(.seqSkip(3, connections: ["c1"])) == [.noteFault("skip 3 seq numbers", on: "-")])
        // An event without seq (a challenge, a targeted event) neither uses the gap nor moves.
        #expect(layer.rewrite(Self.event(nil)) == [Self.event(nil)])
        #expect(layer.rewrite(Self.event(5)) == [Self.event(8)])
        #expect(layer.rewrite(Self.event(6)) == [Self.event(9)])
        // A connection not armed keeps its numbers.
        #expect(layer.rewrite(Self.event(1, on: "c2")) == [Self.event(1, on: "c2")])
        _ = layer.arm(.seqSkip(2, connections: ["c1", "c2"]))
        #expect(layer.rewrite(Self.event(7)) == [Self.event(12)])
        #expect(layer.rewrite(Self.event(2, on: "c2")) == [Self.event(4, on: "c2")])
        layer.forget(connectionId: "c1")
        #expect(layer.rewrite(Self.event(1)) == [Self.event(1)])
    }

    @Test func startingUpIsTheAdmissionsInputFromTheLayer() {
        var layer = FaultLayer(startingUp: true, startingUpRetryAfterMs: 750)
        let base = ConnectAdmission.Configuration(auth: .none, profile: .current, isStartingUp: false)
        #expect(layer.admission(base).isStartingUp)
        #expect(layer.admission(base).startingUpRetryAfterMs == 750)
        #expect(layer.arm(.startingUp(false)) == [.noteFault("started", on: "-")])
        #expect(layer.admission(base).isStartingUp == false)
        #expect(layer.arm(.startingUp(true)) == [.noteFault("starting up (UNAVAILABLE, 1013)", on: "-")])
        #expect(layer.startingUp)
    }
}
