import Foundation
import GatewayProtocol
import Testing
@testable import ReferenceNode

struct PresenceBeaconTests {
    @Test func onlyHandledTrueIsDurable() {
        let configuration = TestSupport.configuration()
        #expect(PresenceBeaconState.isDurable(reply: ["ok": true, "event": "node.presence.alive", "handled": true, "reason": "persisted"],
                                              configuration: configuration))
        #expect(!PresenceBeaconState.isDurable(reply: ["ok": true], configuration: configuration))
        #expect(!PresenceBeaconState.isDurable(reply: ["ok": true, "handled": false, "reason": "pairing_changed"], configuration: configuration))
        #expect(!PresenceBeaconState.isDurable(reply: nil, configuration: configuration))
    }

    @Test func durabilityMutantsDeviate() {
        #expect(PresenceBeaconState.isDurable(reply: ["ok": true], configuration: TestSupport.configuration([.okTrueIsDurable])))
        #expect(PresenceBeaconState.isDurable(reply: ["ok": true, "handled": false],
                                              configuration: TestSupport.configuration([.handledFalseIsDurable])))
    }

    @Test func aDurableBeaconIsNotRepeatedWithinTenMinutes() {
        let configuration = TestSupport.configuration()
        var state = PresenceBeaconState()
        #expect(state.shouldSend(nowMs: 0, configuration: configuration))
        state.record(reply: ["ok": true, "handled": true, "reason": "persisted"], nowMs: 1_000, configuration: configuration)
        #expect(!state.shouldSend(nowMs: 1_000 + 599_999, configuration: configuration))
        #expect(state.shouldSend(nowMs: 1_000 + 600_000, configuration: configuration))
        #expect(state.shouldSend(nowMs: 2_000, configuration: TestSupport.configuration([.beaconEveryWake])))
    }

    @Test func aNonDurableReplyIsSentAgainOnTheNextWake() {
        let configuration = TestSupport.configuration()
        var state = PresenceBeaconState()
        state.record(reply: ["ok": true], nowMs: 1_000, configuration: configuration)
        #expect(state.shouldSend(nowMs: 1_001, configuration: configuration))
        #expect(state.lastReason == "ok")
    }

    @Test func theBeaconPayloadCarriesAValidTrigger() throws {
        let payload = PresenceBeaconState.payload(trigger: "silent_push", nowMs: 5, persona: .iPhone, pushTransport: nil)
        #expect(payload["trigger"] == "silent_push")
        #expect(payload["sentAtMs"] == 5)
        #expect(PresenceBeaconState.normalizedTrigger("weird") == "background")
    }
}

struct PushPayloadTests {
    @Test func relayRegistrationCarriesTheGatewayIdentity() {
        let wish = PushWish(transport: "relay", environment: "production")
        let payload = wish.payload(gatewayDeviceId: "gw", ownDeviceId: "me", configuration: TestSupport.configuration())
        #expect(payload["transport"] == "relay" && payload["gatewayDeviceId"] == "gw")
        let wrong = wish.payload(gatewayDeviceId: "gw", ownDeviceId: "me", configuration: TestSupport.configuration([.pushWrongGatewayId]))
        #expect(wrong["gatewayDeviceId"] == "me")
    }

    @Test func directRegistrationCarriesAToken() {
        let payload = PushWish(transport: "direct", environment: "sandbox")
            .payload(gatewayDeviceId: nil, ownDeviceId: "me", configuration: TestSupport.configuration())
        #expect(payload["token"]?.stringValue?.count == 64 && payload["environment"] == "sandbox" && payload["transport"] == nil)
    }
}

struct NodeCommandTests {
    private func run(_ command: String, params: JSONValue? = nil, _ configuration: ReferenceConfiguration = TestSupport.configuration())
        async -> NodeInvokeOutcome? {
        await NodeCommands.run(command, paramsJSON: params?.jsonString, persona: .iPhone, deviceId: "me", counter: 0,
                               clock: ManualClientClock(), configuration: configuration)
    }

    @Test func knownCommandsAnswerWithPayloadJSON() async throws {
        for command in ["device.info", "device.status", "location.get", "camera.list", "camera.snap", "canvas.present"] {
            let outcome = try #require(await run(command))
            #expect(outcome.ok, "\(command)")
            #expect(outcome.payloadJSON.flatMap { try? JSONValue(parsing: $0) }?.objectValue != nil)
        }
        #expect(await run("canvas.navigate", params: ["url": "https://example.com"])?.ok == true)
        #expect(await run("system.notify", params: ["title": "hi"])?.ok == true)
        #expect(await run("system.notify")?.errorCode == "INVALID_REQUEST")
    }

    @Test func unknownCommandsGetAnErrorCodeAndTheMutantStaysSilent() async {
        let outcome = await run("teleport.now")
        #expect(outcome?.ok == false && outcome?.errorCode == "INVALID_REQUEST")
        #expect(await run("teleport.now", TestSupport.configuration([.unknownCommandSilence])) == nil)
    }

    @Test func foregroundOnlyCommandsAreRefusedInTheBackground() {
        let configuration = TestSupport.configuration()
        for command in ["canvas.navigate", "camera.snap", "screen.record"] {
            #expect(NodeCommands.backgroundRefusal(for: command, inBackground: true, configuration: configuration)?.errorCode
                == "NODE_BACKGROUND_UNAVAILABLE")
            #expect(NodeCommands.backgroundRefusal(for: command, inBackground: false, configuration: configuration) == nil)
        }
        #expect(NodeCommands.backgroundRefusal(for: "location.get", inBackground: true, configuration: configuration) == nil)
        #expect(NodeCommands.backgroundRefusal(for: "camera.snap", inBackground: true,
                                               configuration: TestSupport.configuration([.ignoreBackground])) == nil)
    }

    @Test func theAnswerDeadlineFallsBeforeTimeoutMs() {
        #expect(NodeCommands.answerDeadlineMs(timeoutMs: nil) == 29_000)
        #expect(NodeCommands.answerDeadlineMs(timeoutMs: 1_000) == 800)
        #expect(NodeCommands.answerDeadlineMs(timeoutMs: 0) == nil)
    }

    @Test func resultParamsCarryCodeAndMessageUnlessTheMutantDropsTheCode() {
        let failure = NodeInvokeOutcome.failure("NODE_BACKGROUND_UNAVAILABLE", "app is in the background")
        let params = failure.resultParams(id: "i", nodeId: "n", configuration: TestSupport.configuration())
        #expect(params["error"]?["code"] == "NODE_BACKGROUND_UNAVAILABLE" && params["error"]?["message"] == "app is in the background")
        #expect(params["ok"] == false && params["nodeId"] == "n" && params["id"] == "i")
        let mutant = failure.resultParams(id: "i", nodeId: "n", configuration: TestSupport.configuration([.errorWithoutCode]))
        #expect(mutant["error"]?["code"] == nil)
        let success = NodeInvokeOutcome.success(["a": 1]).resultParams(id: "i", nodeId: "n", configuration: TestSupport.configuration())
        #expect(success["payloadJSON"] == "{\"a\":1}")
    }
}

struct StimulusParsingTests {
    @Test func wireNamesRoundTrip() throws {
        let samples: [(String, [String: JSONValue])] = [
            ("connect", [:]), ("disconnect", [:]), ("restart", [:]), ("reset-identity", [:]),
            ("background-wake", ["trigger": "silent_push"]), ("enter-background", [:]), ("enter-foreground", [:]),
            ("request-scopes", ["scopes": ["operator.admin"]]), ("push-register", ["transport": "relay"]),
            ("switch-gateway", ["url": "ws://x:1"]), ("resolve-approval", ["id": "a", "decision": "deny"]),
            ("answer-question", ["id": "q", "answer": "Staging"]), ("setup-code", ["code": "abc"]),
            ("send-message", ["text": "hi"]), ("go-offline", [:]), ("go-online", [:]), ("cold-start", ["offline": true]),
            ("expect-transcript", ["texts": ["hi"]]), ("expect-outbox", ["texts": []]), ("watch-pair", ["code": "abc"]),
            ("browse-workspace", [:]), ("open-workspace-file", ["path": "notes/plan.md"]), ("invoke-node", ["nodeId": "n1", "command": "device.info"]),
            ("set-voice-wake-triggers", ["triggers": ["openclaw"]]), ("expect-voice-wake-triggers", ["triggers": []]),
            ("expect-sessions", ["keys": ["main"]]),
        ]
        for (name, params) in samples {
            #expect(try ReferenceStimulus(name: name, params: params).name == name)
        }
        #expect(Set(samples.map(\.0)) == Set(ReferenceStimulus.allNames + ReferenceStimulus.watchNames))
    }

    /// Upstream's `classifyNodeInvokeFailure`: only NOT_CONNECTED with nodeCommandDispatched
    /// false is safe to send again; ROUTE_CHANGED (no provenance) is outcome-unknown.
    @Test func nodeInvokeFailuresAreClassifiedByProvenance() {
        func gateway(_ details: JSONValue) -> RequestFailure {
            .gateway(ErrorShape(code: "UNAVAILABLE", message: "m", details: details))
        }
        #expect(NodeInvokeFailureRule.classify(gateway(["code": "NOT_CONNECTED", "nodeError": ["code": "NOT_CONNECTED"],
                                                        "nodeCommandDispatched": false])) == .notDispatched)
        #expect(NodeInvokeFailureRule.classify(gateway(["code": "NOT_CONNECTED"])) == .outcomeUnknown)
        #expect(NodeInvokeFailureRule.classify(gateway(["code": "ROUTE_CHANGED"])) == .outcomeUnknown)
        #expect(NodeInvokeFailureRule.classify(gateway(["nodeError": ["code": "TIMEOUT"], "nodeCommandDispatched": false]))
                == .preDispatchRejected)
        #expect(NodeInvokeFailureRule.classify(gateway(["nodeError": ["code": "TIMEOUT"], "nodeCommandDispatched": true]))
                == .outcomeUnknown)
        #expect(NodeInvokeFailureRule.classify(.connectionLost) == .outcomeUnknown)
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "invoke-node", params: ["nodeId": "n1"]) }
    }

    @Test func missingParametersAndUnknownNamesAreErrors() {
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "resolve-approval", params: ["id": "a"]) }
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "fly", params: [:]) }
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "send-message", params: ["text": 3]) }
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "expect-outbox", params: ["texts": [1]]) }
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "expect-transcript", params: [:]) }
        #expect((try? ReferenceStimulus(name: "cold-start", params: [:])) == .coldStart(offline: false))
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "open-workspace-file", params: [:]) }
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "set-voice-wake-triggers", params: ["triggers": [1]]) }
        #expect((try? ReferenceStimulus(name: "browse-workspace", params: [:])) == .browseWorkspace(path: "", agentId: nil))
        #expect(throws: StimulusParseError.self) { try ReferenceStimulus(name: "expect-sessions", params: ["keys": [1]]) }
    }

    @Test func setupCodesDecode() throws {
        let code = SetupCodePayload.encode(url: "ws://127.0.0.1:9", bootstrapToken: "boot")
        let decoded = try SetupCodePayload(decoding: "oc-pair://" + code)
        #expect(decoded.url == "ws://127.0.0.1:9" && decoded.bootstrapToken == "boot")
        #expect(throws: StimulusParseError.self) { try SetupCodePayload(decoding: "%%%") }
    }
}
