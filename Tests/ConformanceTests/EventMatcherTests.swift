import Conformance
import GatewayProtocol
import MockGateway
import Testing

@Suite struct EventMatcherTests {
    static func session(_ id: String, role: GatewayRole, device: String?) -> GatewayEvent {
        .sessionOpened(SessionInfo(connectionId: id, role: role, scopes: [], deviceId: device, clientId: "c", clientMode: "node",
                                   protocolVersion: 4, authMethod: "none", signatureVersion: nil, presentedToken: nil,
                                   issuedDeviceToken: nil))
    }

    @Test func aSessionMatcherTakesOnlyItsRoleAndDevice() {
        let matcher = EventMatcher.session(.node, device: "d1")
        #expect(matcher.description == "the client's node session of d1 (hello-ok)")
        #expect(matcher.match(Self.session("c1", role: .node, device: "d1"))?.connectionId == "c1")
        #expect(matcher.match(Self.session("c2", role: .operator, device: "d1")) == nil)
        #expect(matcher.match(Self.session("c3", role: .node, device: "d2")) == nil)
        #expect(matcher.match(.connectionOpened(connectionId: "c1", remoteAddress: "127.0.0.1", nonce: "n")) == nil)
    }

    @Test func filterMapAndNamedKeepOrChangeWhatTheyShould() {
        let base = EventMatcher.session(.node)
        let narrowed = base.filter { $0.connectionId != "c1" }
        #expect(narrowed.description == base.description)
        #expect(narrowed.match(Self.session("c1", role: .node, device: nil)) == nil)
        #expect(narrowed.match(Self.session("c2", role: .node, device: nil))?.connectionId == "c2")
        let device = base.map(\.deviceId).named("a node session's device")
        #expect(device.description == "a node session's device")
        #expect(device.match(Self.session("c1", role: .node, device: "d1")) == "d1")
        // A transform that yields nil skips the event.
        #expect(device.match(Self.session("c2", role: .node, device: nil)) == nil)
    }

    @Test func typedMatchersReadTheTypedEventFields() {
        #expect(EventMatcher.superseded(of: "r1").match(.pairingSuperseded(oldRequestIds: ["r0", "r1"], newRequestId: "r2",
                                                                          deviceId: "d")) == "r2")
        #expect(EventMatcher.superseded(of: "r9").match(.pairingSuperseded(oldRequestIds: ["r1"], newRequestId: "r2", deviceId: "d")) == nil)
        let resolved = EventMatcher.pairingResolved("r1", .approved)
        #expect(resolved.match(.pairingResolved(requestId: "r1", deviceId: "d", decision: .approved)) != nil)
        #expect(resolved.match(.pairingResolved(requestId: "r1", deviceId: "d", decision: .withdrawn)) == nil)
        let relay = EventMatcher.pushRegistered(.relay)
        #expect(relay.match(.pushRegistered(nodeId: "n", transport: .relay, accepted: true, gatewayDeviceId: "g"))?.gatewayDeviceId == "g")
        #expect(relay.match(.pushRegistered(nodeId: "n", transport: .direct, accepted: true, gatewayDeviceId: nil)) == nil)
        let beacon = EventMatcher.nodeEvent(.presenceAlive, node: "n")
        #expect(beacon.match(.nodeEvent(nodeId: "n", event: "node.presence.alive", payloadJSON: #"{"trigger":"manual"}"#,
                                        connectionId: "c"))?.payload?["trigger"]?.stringValue == "manual")
        #expect(beacon.match(.nodeEvent(nodeId: "n", event: "node.presence.activity", payloadJSON: nil, connectionId: "c")) == nil)
    }

    @Test func typedFieldsPrintAsTheirWireValues() {
        #expect(GatewayEvent.pairingResolved(requestId: "r", deviceId: "d", decision: .approved).description == "pairing request r of d approved")
        #expect(GatewayEvent.deviceToken(deviceId: "d", role: .node, action: .revoked).description == "node token of d revoked")
        #expect(Self.session("c", role: .operator, device: "d").description == "operator session on c of d (none)")
        #expect(GatewayEvent.presenceHandled(nodeId: "n", trigger: nil, handled: false, reason: .pairingChanged).description
                == "node.presence.alive answered handled:false pairing_changed")
        #expect(GatewayEvent.pushSent(nodeId: "n", transport: .direct, pushType: "background", accepted: true).description
                == "background push sent over direct")
    }

    @Test func waitsAndAbsenceChecksQuoteTheMatcher() async throws {
        let waiting = InProcessRunnerTests.scenario("PAIR-002") { run in
            try await run.waitForEvent(.pairingRequest(device: "d1"), within: .milliseconds(100))
        }
        let absent = InProcessRunnerTests.scenario("PAIR-003") { run in
            _ = try await run.gateway.createQuestion("Deploy?", options: ["yes", "no"], expiresIn: .seconds(60))
            try await run.expectNoEvent(.event("a question record") { if case .operatorRecord = $0 { true } else { false } },
                                        within: .zero, from: .start)
        }
        let report = try await runScenarios([waiting, absent], driver: InProcessDriver(name: "fake") { FakeNode() })
        let stuck = try #require(report.result("PAIR-002@current"))
        #expect(stuck.verdict == .fail)
        #expect(stuck.message == "a pairing request of d1 never came: nothing more can happen in the run")
        let unexpected = try #require(report.result("PAIR-003@current"))
        #expect(unexpected.verdict == .fail)
        #expect(unexpected.message == "unexpected a question record")
        #expect(unexpected.expected == "no a question record within 0 ms")
    }
}
