import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// The pure `node.event` reply rules per Gateway generation, and the same rules on the wire.
@Suite struct NodeEventRulesTests {
    static func facts(_ style: GatewayProfile.NodeEventReply = .structured, deviceId: String? = "dev",
                      generation: String? = "g1", current: String? = "g1", currentConnection: Bool = true,
                      accessibility: Bool = true, lastPersist: Int64? = nil, activity: Bool = false,
                      now: Int64 = 100_000) -> NodeEventFacts {
        NodeEventFacts(replyStyle: style, deviceId: deviceId, sessionPairingGeneration: generation,
                       currentPairingGeneration: current, isCurrentConnection: currentConnection,
                       accessibilityGranted: accessibility, lastPresencePersistMs: lastPersist, hasActivity: activity,
                       nowMs: now)
    }

    static func reason(_ decision: NodeEventDecision) -> String? { decision.reply["reason"]?.stringValue }

    // MARK: - node.presence.alive

    @Test func aBeaconIsPersistedThenStampedOnlyAfterThePersist() {
        let facts = Self.facts()
        let first = NodeEventRules.decide(event: "node.presence.alive", payload: ["trigger": "SILENT_PUSH"], facts: facts)
        #expect(first.effects == [.persistLastSeen(deviceId: "dev", reason: "silent_push")])
        #expect(first.awaitsPersist)
        // No stamp before the store answered: a failed persist leaves the window open.
        let failed = NodeEventRules.afterPersist(false, facts: facts)
        #expect(Self.reason(failed) == "persist_failed")
        #expect(failed.reply["handled"] == false)
        #expect(failed.effects.isEmpty)
        let vanished = NodeEventRules.afterPersist(nil, facts: facts)
        #expect(Self.reason(vanished) == "pairing_changed")
        #expect(vanished.effects.isEmpty)
        let persisted = NodeEventRules.afterPersist(true, facts: facts)
        #expect(persisted.reply == ["ok": true, "event": "node.presence.alive", "handled": true, "reason": "persisted"])
        #expect(persisted.effects == [.stampPresenceThrottle(key: "dev\u{0}g1", atMs: 100_000)])
    }

    @Test func theThrottleIsPerDeviceAndPairingGeneration() {
        let throttled = NodeEventRules.decide(event: "node.presence.alive", payload: ["trigger": "background"],
                                              facts: Self.facts(lastPersist: 100_000 - 59_999))
        #expect(Self.reason(throttled) == "throttled")
        #expect(throttled.reply["handled"] == true)
        #expect(throttled.effects.isEmpty)
        let windowOver = NodeEventRules.decide(event: "node.presence.alive", payload: [:], facts: Self.facts(lastPersist: 40_000))
        #expect(windowOver.awaitsPersist)
        // A new pairing generation has its own key, so its stamp starts empty.
        #expect(Self.facts(generation: "g2", current: "g2").presenceThrottleKey == "dev\u{0}g2")
        #expect(Self.facts().presenceThrottleKey != Self.facts(generation: "g2", current: "g2").presenceThrottleKey)
    }

    @Test func beaconRefusalsComeInUpstreamOrder() {
        func reason(_ payload: JSONValue?, _ facts: NodeEventFacts) -> String? {
            Self.reason(NodeEventRules.decide(event: "node.presence.alive", payload: payload, facts: facts))
        }
        #expect(reason(nil, Self.facts(deviceId: nil, generation: nil)) == "invalid_payload")
        #expect(reason("text", Self.facts()) == "invalid_payload")
        #expect(reason([:], Self.facts(deviceId: nil, generation: nil)) == "missing_device_identity")
        #expect(reason([:], Self.facts(generation: nil, current: nil)) == "pairing_changed")
        // The currency gate comes before everything, also for invalid payloads.
        #expect(reason(nil, Self.facts(generation: "g1", current: "g2")) == "pairing_changed")
        #expect(reason(nil, Self.facts(generation: "g1", current: nil)) == "pairing_changed")
        #expect(NodeEventRules.normalizedTrigger(["trigger": "teleport"]) == "background")
    }

    // MARK: - node.presence.activity

    @Test func activityRepliesAreStructured() {
        func decide(_ payload: JSONValue?, _ facts: NodeEventFacts = Self.facts()) -> NodeEventDecision {
            NodeEventRules.decide(event: "node.presence.activity", payload: payload, facts: facts)
        }
        let updated = decide(["idleSeconds": 12, "saturated": true])
        #expect(updated.reply == ["ok": true, "event": "node.presence.activity", "handled": true, "reason": "updated"])
        #expect(updated.effects == [.recordActivity(idleSeconds: 12, saturated: true)])
        #expect(Self.reason(decide(["idleSeconds": 0])) == "updated")
        #expect(Self.reason(decide(["idleSeconds": 2_592_000])) == "updated")
        for bad: JSONValue in [["idleSeconds": 2_592_001], ["idleSeconds": -1], ["idleSeconds": 1.5], ["idleSeconds": "3"],
                               ["idleSeconds": 3, "source": "hid"], ["idleSeconds": 3, "saturated": "yes"], [:], "idle",
                               ["action": "reset"], ["action": "clear", "idleSeconds": 1]] {
            let decision = decide(bad)
            #expect(Self.reason(decision) == "invalid_payload", "\(bad.jsonString)")
            #expect(decision.reply["handled"] == false)
            #expect(decision.effects.isEmpty)
        }
        #expect(Self.reason(decide(nil)) == "invalid_payload")
        #expect(Self.reason(decide(["idleSeconds": 3], Self.facts(accessibility: false))) == "permission_required")
        #expect(Self.reason(decide(["idleSeconds": 3], Self.facts(currentConnection: false))) == "permission_required")

        let cleared = decide(["action": "clear"], Self.facts(activity: true))
        #expect(Self.reason(cleared) == "cleared")
        #expect(cleared.reply["handled"] == true)
        #expect(cleared.effects == [.clearActivity])
        let alreadyClear = decide(["action": "clear"], Self.facts(activity: false))
        #expect(Self.reason(alreadyClear) == "already_clear")
        #expect(alreadyClear.effects.isEmpty)
        #expect(Self.reason(decide(["action": "clear"], Self.facts(currentConnection: false, activity: true))) == "stale_connection")
    }

    // MARK: - Other events and older Gateways

    @Test func otherEventsAndOlderGatewaysGetABareOK() {
        let unknown = NodeEventRules.decide(event: "voice.transcript", payload: ["text": "hi"], facts: Self.facts())
        #expect(unknown.reply == ["ok": true])
        #expect(unknown.handledFlag == nil)
        for event in ["node.presence.alive", "node.presence.activity", "anything"] {
            let old = NodeEventRules.decide(event: event, payload: ["idleSeconds": 3, "trigger": "manual"],
                                            facts: Self.facts(.bareOK, generation: "g1", current: "g2"))
            #expect(old.reply == ["ok": true], "\(event)")
            #expect(!old.effects.contains { if case .persistLastSeen = $0 { true } else { false } })
        }
        let push = NodeEventRules.decide(event: "push.apns.register", payload: ["transport": "direct", "token": "t"],
                                         facts: Self.facts(.bareOK))
        #expect(push.effects == [.registerPush(payload: ["transport": "direct", "token": "t"])])
    }

    // MARK: - On the wire

    private static func nodeParams(_ client: TestClient, accessibility: Bool) -> ConnectParams {
        var params = client.connectParams()
        params.permissions = ["accessibility": accessibility]
        return params
    }

    @Test func theMacActivityEventGetsStructuredReplies() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xD1))
            #expect(try await client.connect(Self.nodeParams(client, accessibility: true)).ok)
            func send(_ payload: String) async throws -> JSONValue? {
                try await client.request("node.event", params: ["event": "node.presence.activity", "payloadJSON": .string(payload)]).payload
            }
            #expect(try await send(#"{"action":"clear"}"#)?["reason"] == "already_clear")
            #expect(try await send(#"{"idleSeconds":4}"#)
                    == ["ok": true, "event": "node.presence.activity", "handled": true, "reason": "updated"])
            #expect(try await send(#"{"action":"clear"}"#)?["reason"] == "cleared")
            #expect(try await send(#"{"idleSeconds":-4}"#)?["reason"] == "invalid_payload")

            let other = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xD2))
            #expect(try await other.connect(Self.nodeParams(other, accessibility: false)).ok)
            let refused = try await other.request("node.event", params: [
                "event": "node.presence.activity", "payloadJSON": #"{"idleSeconds":1}"#,
            ])
            #expect(refused.payload?["reason"] == "permission_required")
            #expect(refused.payload?["handled"] == false)
        }
    }
}
