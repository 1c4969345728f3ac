import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing
import WebSocketTransport

/// The fault layer as a pure value: each armed fault rewrites the effects the rules decided, and
/// one-off faults are used up by exactly the effect they apply to. (Breaking a rewrite, for
/// example letting binary events consume no count, fails the matching test here and the socket
/// tests in `GatewayFaultTests`.)
@Suite struct FaultLayerTests {
    static let ok = ResponseFrame(id: "r1", ok: true, payload: ["ok": true])
    static let respond = GatewayEffect.respond(ok, method: "health", to: "c1")
    static let event = GatewayEffect.send(.event(EventFrame(event: GatewayEventName.presence.rawValue, seq: 1)), to: "c1")
    static let challenge = GatewayEffect.send(.event(ConnectChallenge(nonce: "n1", ts: 42).eventFrame), to: "c1")

    @Test func withNothingArmedEveryEffectPassesUnchanged() {
        var layer = FaultLayer()
        for effect in [Self.respond, Self.event, Self.challenge, .close("c1", code: 1000, reason: ""),
                       .broadcast(event: GatewayEventName.tick.rawValue, payload: nil, stateVersion: nil)] {
            #expect(layer.rewrite(effect) == [effect])
        }
        #expect(layer.intercept(RequestFrame(id: "r", method: "health"), on: "c1") == nil)
    }

    @Test func aDroppedResponseIsLostOnceAndTheConnectionCut() {
        var layer = FaultLayer()
        #expect(layer.arm(.dropNextResponse(method: "health", cut: true))
            == [.noteFault("drop the next response to health and cut the connection", on: "-")])
        // Another method's response is not touched.
        let other = GatewayEffect.respond(Self.ok, method: "status", to: "c1")
        #expect(layer.rewrite(other) == [other])
        #expect(layer.rewrite(Self.respond) == [
            .dropResponse(Self.ok, method: "health", to: "c1"),
            .log(.faultInjected(description: "dropped the response to health on c1")),
            .abort("c1"),
        ])
        #expect(layer.rewrite(Self.respond) == [Self.respond])
    }

    @Test func aDroppedResponseWithoutCutKeepsTheConnection() {
        var layer = FaultLayer()
        _ = layer.arm(.dropNextResponse(method: "health", cut: false))
        #expect(layer.rewrite(Self.respond).contains(.abort("c1")) == false)
        #expect(layer.plan.dropNextResponse.isEmpty)
    }

    @Test func aResponseDelayHoldsBackEveryAnswerButNoEvent() {
        var layer = FaultLayer()
        _ = layer.arm(.responseDelay(.milliseconds(250)))
        let delayed = WireTreatment(fault: SendFault(delay: .milliseconds(250)))
        #expect(layer.rewrite(Self.respond) == [.respond(Self.ok, method: "health", to: "c1", wire: delayed)])
        #expect(layer.rewrite(Self.respond) == [.respond(Self.ok, method: "health", to: "c1", wire: delayed)])
        let json = GatewayEffect.respondJSON(["id": 7], method: "connect", errorCode: "X", to: "c1")
        #expect(layer.rewrite(json) == [.respondJSON(["id": 7], method: "connect", errorCode: "X", to: "c1", wire: delayed)])
        #expect(layer.rewrite(Self.event) == [Self.event])
        _ = layer.arm(.responseDelay(nil))
        #expect(layer.rewrite(Self.respond) == [Self.respond])
    }

    @Test func binaryAndFragmentedEventsAreCountedAndSkipTheChallenge() {
        var layer = FaultLayer()
        _ = layer.arm(.eventsAsBinary(1))
        _ = layer.arm(.eventsFragmented(2))
        // The challenge and responses use up nothing.
        #expect(layer.rewrite(Self.challenge) == [Self.challenge])
        #expect(layer.rewrite(Self.respond) == [Self.respond])
        guard case .send(let frame, _, _) = Self.event else { Issue.record("not a send"); return }
        let fragmented = SendFault.fragmented(into: 3, interleavingPings: true)
        #expect(layer.rewrite(Self.event) == [.send(frame, to: "c1", wire: WireTreatment(fault: fragmented, binary: true))])
        #expect(layer.rewrite(Self.event) == [.send(frame, to: "c1", wire: WireTreatment(fault: fragmented, binary: false))])
        #expect(layer.rewrite(Self.event) == [Self.event])
    }

    @Test func aChallengeWithoutTsLosesOnlyTsAndIsAnnounced() {
        var layer = FaultLayer()
        _ = layer.arm(.challengesWithoutTs(1))
        #expect(layer.rewrite(Self.event) == [Self.event])
        let stripped = EventFrame(event: GatewayEventName.connectChallenge.rawValue, payload: ["nonce": "n1"])
        #expect(layer.rewrite(Self.challenge) == [
            .noteFault("connect.challenge without ts", on: "c1"), .send(.event(stripped), to: "c1"),
        ])
        #expect(layer.rewrite(Self.challenge) == [Self.challenge])
    }

    @Test func stoppedTicksDropOnlyTheTickBroadcast() {
        var layer = FaultLayer()
        let tick = GatewayEffect.broadcast(event: GatewayEventName.tick.rawValue, payload: ["ts": 1], stateVersion: nil)
        let presence = GatewayEffect.broadcast(event: GatewayEventName.presence.rawValue, payload: nil, stateVersion: nil)
        _ = layer.arm(.ticksStopped(true))
        #expect(layer.holdsTicks)
        #expect(layer.rewrite(tick).isEmpty)
        #expect(layer.rewrite(presence) == [presence])
        _ = layer.arm(.ticksStopped(false))
        #expect(layer.rewrite(tick) == [tick])
    }

    @Test func aDrainRefusesNewWorkAndAdmitsContinuations() {
        var layer = FaultLayer()
        #expect(layer.arm(.drain(.restarting)).count == 1)
        // The same drain again announces nothing.
        #expect(layer.arm(.drain(.restarting)).isEmpty)
        let refused = layer.intercept(RequestFrame(id: "r", method: "health"), on: "c1")
        #expect(refused == [.respond(.failure(id: "r", error: GatewayDrain.restarting.refusal(method: "health")),
                                     method: "health", to: "c1")])
        #expect(layer.intercept(RequestFrame(id: "r", method: GatewayMethod.nodeInvokeResult.rawValue), on: "c1") == nil)
        _ = layer.arm(.drain(nil))
        #expect(layer.intercept(RequestFrame(id: "r", method: "health"), on: "c1") == nil)
    }

    static func nodeEventCall(_ event: String) -> MethodCall {
        let client = ClientInfo(id: "openclaw-ios", version: "1", platform: "iOS", mode: "node")
        let session = Session(role: "node", scopes: [], deviceId: "dev", publicKey: nil, nodeId: "dev", client: client,
                              protocolVersion: 3, authMethod: "token", deviceToken: nil, sharedAuthGeneration: nil)
        let params: JSONValue = ["event": .string(event), "payloadJSON": "{\"trigger\":\"SILENT_PUSH\"}"]
        return MethodCall(request: RequestFrame(id: "r9", method: GatewayMethod.nodeEvent.rawValue, params: params),
                          session: session, connectionId: "c1")
    }

    @Test func aForcedPresenceReplyAnswersOneBeaconInsteadOfTheRules() {
        var layer = FaultLayer()
        let beacon = Self.nodeEventCall(NodeEventName.presenceAlive.rawValue)
        #expect(layer.answerInstead(of: beacon, profile: .current) == nil)
        _ = layer.arm(.presenceReply(PresenceForcedReply(handled: false, reason: "persist_failed")))
        // Another node event is left to the rules, and the reply stays armed.
        #expect(layer.answerInstead(of: Self.nodeEventCall("voice.transcript"), profile: .current) == nil)
        let reply: JSONValue = ["ok": true, "event": .string(NodeEventName.presenceAlive.rawValue), "handled": false,
                                "reason": "persist_failed"]
        #expect(layer.answerInstead(of: beacon, profile: .current) == [
            .log(.nodeEvent(nodeId: "dev", event: NodeEventName.presenceAlive.rawValue,
                            payloadJSON: "{\"trigger\":\"SILENT_PUSH\"}", connectionId: "c1")),
            .log(.presenceHandled(nodeId: "dev", trigger: "SILENT_PUSH", handled: false, reason: NodeEventReason(rawValue: "persist_failed"))),
            .respond(.success(id: "r9", payload: reply), method: GatewayMethod.nodeEvent.rawValue, to: "c1"),
        ])
        #expect(layer.answerInstead(of: beacon, profile: .current) == nil)
        // An older Gateway's reply stays bare.
        _ = layer.arm(.presenceReply(PresenceForcedReply(handled: true, reason: "throttled")))
        let bare = layer.answerInstead(of: beacon, profile: .legacy)
        #expect(bare?.last == .respond(.success(id: "r9", payload: ["ok": true]), method: GatewayMethod.nodeEvent.rawValue, to: "c1"))
    }

    @Test func aPushRefusalTurnsTheNextAcceptedPushIntoARefusal() {
        var layer = FaultLayer()
        let accepted = PushDelivery(nodeId: "n", transport: "direct", pushType: "background", bodyJSON: "{}", gatewayDeviceId: nil,
                                    signedAtMs: nil, signature: nil, sendGrant: nil, accepted: true)
        var rejected = accepted
        rejected.accepted = false
        rejected.status = 403
        _ = layer.arm(.pushRefusal(PushRefusal(status: 410, reason: "Unregistered")))
        // A push the relay already refused does not use the armed refusal up.
        #expect(layer.rewrite(rejected) == rejected)
        let refused = layer.rewrite(accepted)
        #expect(refused.accepted == false && refused.status == 410 && refused.reason == "Unregistered")
        #expect(layer.rewrite(accepted) == accepted)
    }

    /// (Consuming the hold when the node is connected fails this test: the hold must wait for a
    /// wake sequence, as `InvokeWakeTests.aReconnectDuringTheHoldBeforeDispatchIsRouteChanged`
    /// needs on the wire.)
    @Test func aWakeDispatchHoldGoesToTheNextWakeSequenceOnly() {
        var layer = FaultLayer()
        #expect(layer.wakeDispatchHold(nodeConnected: false) == 0)
        #expect(layer.arm(.wakeDispatchHold(ms: 500))
            == [.noteFault("the next node.invoke that finds its woken node holds the dispatch for 500 ms", on: "-")])
        // An invoke to a connected node starts no wake sequence: the hold waits.
        #expect(layer.wakeDispatchHold(nodeConnected: true) == 0)
        #expect(layer.wakeDispatchHold(nodeConnected: false) == 500)
        #expect(layer.wakeDispatchHold(nodeConnected: false) == 0)
    }
}
