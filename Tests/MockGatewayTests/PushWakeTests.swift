import GatewayProtocol
import Testing
@testable import MockGateway

/// Silent wake pushes (`Gateway.wakeNode`), the push faults, the console's `wake`, and the
/// stale-pairing gate of `push.apns.register`, end to end over real sockets.
@Suite("Silent wake pushes")
struct PushWakeTests {
    /// Sends `push.apns.register` with `payload` and returns the reply's payload.
    static func register(_ node: ConnectedSession, _ payload: JSONValue) async throws -> JSONValue? {
        let reply = try await node.client.request("node.event", params: [
            "event": "push.apns.register", "payloadJSON": .string(payload.jsonString),
        ])
        #expect(reply.ok, "\(reply)")
        return reply.payload
    }

    static func relayRegistration(_ gateway: Gateway, grant: String? = "grant-w") -> JSONValue {
        var object: [String: JSONValue] = [
            "transport": "relay", "relayHandle": "handle-w", "topic": "ai.openclaw.ios", "environment": "production",
            "tokenDebugSuffix": "wxyz", "gatewayDeviceId": .string(gateway.identity.deviceId),
        ]
        if let grant { object["sendGrant"] = .string(grant) }
        return .object(object)
    }

    static let directRegistration: JSONValue = [
        "token": .string(String(repeating: "cd", count: 32)), "topic": "ai.openclaw.ios", "environment": "sandbox",
    ]

    @Test func aWakeIsASignedBackgroundPushThroughTheRelay() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xA1)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            _ = try await Self.register(node, Self.relayRegistration(gateway))
            #expect(await gateway.pushRegisteredNodeIds() == [identity.deviceId])
            let cursor = gateway.events.count

            let attempt = await gateway.wakeNode(nodeId: identity.deviceId)
            #expect(attempt.path == .sent)
            #expect(attempt.isDelivered)
            #expect(attempt.reason == "node.invoke", "upstream's default wake reason")
            let delivery = try #require(attempt.delivery)
            #expect(await gateway.pushDeliveries().last == delivery)
            #expect(delivery.transport == "relay")
            #expect(delivery.pushType == "background")
            #expect(delivery.priority == 5)
            #expect(delivery.status == 200)
            #expect(delivery.sendGrant == "grant-w")
            let body = try #require(delivery.body)
            #expect(body["relayHandle"] == "handle-w")
            #expect(body["pushType"] == "background")
            let payload = try #require(delivery.payload)
            #expect(payload["aps"] == ["content-available": 1], "silent: no alert, sound or badge")
            #expect(payload["openclaw"]?["kind"] == "node.wake")
            #expect(payload["openclaw"]?["nodeId"]?.stringValue == identity.deviceId)
            #expect(payload["openclaw"]?["reason"] == "node.invoke")
            #expect(payload["openclaw"]?["ts"]?.int64Value != nil)
            // Signed by the Gateway's identity over upstream's relay-send payload.
            let signed = PushRelay.signaturePayload(gatewayDeviceId: gateway.identity.deviceId,
                                                    signedAtMs: try #require(delivery.signedAtMs), bodyJSON: delivery.bodyJSON)
            #expect(DeviceIdentity.verify(signature: try #require(delivery.signature), payload: signed,
                                          publicKey: gateway.identity.publicKeyBase64URL))
            let announced = gateway.events.elements(from: cursor).contains { event in
                if case .pushSent(identity.deviceId, "relay", "background", true) = event { true } else { false }
            }
            #expect(announced, "a pushSent event announces the wake")
            await node.client.close()
        }
    }

    @Test func directWakesRefusalsAndMissingRegistrationsAreReportedAsSuch() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xA2)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)

            // No registration yet: nothing is sent.
            let missing = await gateway.wakeNode(nodeId: identity.deviceId)
            #expect(missing.path == .noRegistration)
            #expect(missing.delivery == nil)
            #expect(missing.summary.contains("no push registration"))
            #expect(await gateway.pushDeliveries().isEmpty)

            _ = try await Self.register(node, Self.directRegistration)
            let direct = await gateway.wakeNode(nodeId: identity.deviceId, reason: "scripted")
            #expect(direct.path == .sent)
            #expect(direct.delivery?.transport == "direct")
            #expect(direct.delivery?.body?["token"]?.stringValue == String(repeating: "cd", count: 32))
            #expect(direct.delivery?.payload?["openclaw"]?["reason"] == "scripted")

            // A second wake within 15 s is throttled (upstream `maybeWakeNodeWithApns`); forced, it is sent.
            let throttled = await gateway.wakeNode(nodeId: identity.deviceId)
            #expect(throttled.path == .throttled)
            #expect(throttled.delivery == nil)
            await gateway.advance(by: .milliseconds(14_999))
            #expect(await gateway.wakeNode(nodeId: identity.deviceId).path == .throttled)
            await gateway.advance(by: .milliseconds(1))

            // A scripted refusal applies to one send.
            await gateway.refuseNextPush(status: 410, reason: "Unregistered")
            let refused = await gateway.wakeNode(nodeId: identity.deviceId)
            #expect(refused.path == .sendError)
            #expect(refused.isDelivered == false)
            #expect(refused.delivery?.accepted == false)
            #expect(refused.delivery?.status == 410)
            #expect(refused.delivery?.reason == "Unregistered")
            #expect(refused.summary.hasSuffix("refused with 410 Unregistered"))
            #expect(await gateway.wakeNode(nodeId: identity.deviceId, force: true).path == .sent)
            #expect(await gateway.pushDeliveries().map(\.accepted) == [true, false, true])
            await node.client.close()
        }
    }

    @Test func aRelayRegistrationWithoutAGrantIsRefusedByTheRelay() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0xA3)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            _ = try await Self.register(node, Self.relayRegistration(gateway, grant: nil))
            let attempt = await gateway.wakeNode(nodeId: identity.deviceId)
            #expect(attempt.path == .sendError)
            #expect(attempt.delivery?.status == 403)
            // push.test reports the same refusal.
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xA4), scopes: ["operator.write"])
            let test = try await writer.client.request("push.test", params: ["nodeId": .string(identity.deviceId)])
            #expect(test.payload?["ok"] == false)
            #expect(test.payload?["status"] == 403)
            #expect(test.payload?["reason"] == "InvalidGatewaySignature")
            let alert = try #require(await gateway.pushDeliveries().last?.payload)
            #expect(alert["openclaw"]?["kind"] == "push.test", "push.test carries upstream's metadata")
            #expect(alert["openclaw"]?["nodeId"]?.stringValue == identity.deviceId)
            await node.client.close()
            await writer.client.close()
        }
    }

    /// A session that outlived a re-pair of its device: upstream gates every `node.event` on the
    /// connection's currency, so the registration is answered `pairing_changed` and not kept.
    @Test func pushRegistrationOnAStalePairingGenerationAnswersPairingChanged() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            #expect(gateway.profile == .current)
            let identity = try TestIdentities.make(0xA5)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            let first = try await Self.register(node, Self.directRegistration)
            #expect(first == ["ok": true], "a current session's registration is kept with a bare ok")

            try await gateway.renewPairing(deviceId: identity.deviceId)
            let stale = try await Self.register(node, [
                "token": .string(String(repeating: "ef", count: 32)), "topic": "ai.openclaw.ios", "environment": "production",
            ])
            #expect(stale == ["ok": true, "event": "push.apns.register", "handled": false, "reason": "pairing_changed"])
            // The stale registration was not kept: a wake still uses the first token.
            let wake = await gateway.wakeNode(nodeId: identity.deviceId)
            #expect(wake.delivery?.body?["token"]?.stringValue == String(repeating: "cd", count: 32))
            let registrations = gateway.events.all.compactMap { event -> Bool? in
                if case .pushRegistered(identity.deviceId, _, let accepted, _) = event { accepted } else { nil }
            }
            #expect(registrations == [true], "only the current session's registration was recorded")

            await #expect(throws: GatewayError.self) { try await gateway.renewPairing(deviceId: "no-such-device") }
            await node.client.close()
        }
    }

    @Test func theConsoleWakesTheLatestRegisteredNode() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let console = GatewayConsole(gateway: gateway)
            #expect(await console.handle("wake latest")?.errorMessage == "wake: no node has a push registration (a node registers with node.event push.apns.register)")
            #expect(await console.handle("wake nobody")?.errorMessage?.hasPrefix("wake: no silent push to nobody: it has no push registration") == true)

            let identity = try TestIdentities.make(0xA6)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            _ = try await Self.register(node, Self.relayRegistration(gateway))
            let reply = try #require(await console.handle("wake latest --reason console"))
            guard case .woken(let attempt)? = reply.result else {
                Issue.record("wake did not wake: \(reply.errorMessage ?? "no result")")
                return
            }
            #expect(attempt.nodeId == identity.deviceId)
            let json = try JSONValue(parsing: reply.rendered(.json))
            #expect(json["event"] == "command.ok")
            #expect(json["command"] == "wake")
            let result = try #require(json["result"])
            #expect(result["nodeId"]?.stringValue == identity.deviceId)
            #expect(result["path"] == "sent")
            #expect(result["delivered"] == true)
            #expect(result["transport"] == "relay")
            #expect(result["pushType"] == "background")
            #expect(result["priority"] == 5)
            #expect(result["accepted"] == true)
            #expect(result["wakeReason"] == "console")
            #expect(result["payload"]?["aps"] == ["content-available": 1])
            let text = reply.rendered(.text)
            #expect(text.hasPrefix("silent push (background, priority 5) to \(identity.deviceId) via relay: accepted"))
            #expect(text.contains("no real APNs or relay is contacted"))
            // Within 15 s the wake is throttled (an error says so); --force sends it. A prefix of
            // the node id works, and the confirming line is push.sent.
            let throttled = await console.handle("wake \(identity.deviceId.prefix(10))")
            #expect(throttled?.errorMessage?.contains("less than 15 s ago") == true)
            let cursor = gateway.events.count
            #expect(await console.handle("wake --force \(identity.deviceId.prefix(10))")?.result != nil)
            let line = gateway.events.elements(from: cursor).compactMap { ConsoleEventLine.describing($0) }
                .first { $0.name == "push.sent" }
            #expect(line?.rendered(.text) == "push.sent nodeId=\(identity.deviceId) transport=relay pushType=background accepted=true")
            await node.client.close()
        }
    }

    @Test func wakeArgumentsAreChecked() throws {
        #expect(try ConsoleCommand.parse("wake latest") == ConsoleCommand("wake", ["latest"]))
        #expect(try ConsoleCommand.parse("wake 56475aa7 --reason \"ping me\"")
            == ConsoleCommand("wake", ["56475aa7"], options: ["--reason": ["ping me"]]))
        for line in ["wake", "wake a b", "wake a --reason", "wake a --reason \"\"", "wake a --frobnicate"] {
            #expect(throws: ConsoleError.self, "\(line)") { try ConsoleCommand.parse(line) }
        }
        let help = try #require(ConsoleCommandHelp.named("wake"))
        #expect(help.usage == "wake <nodeId|latest> [--reason TEXT] [--force]")
        #expect(help.summary.contains("no real APNs"))
    }
}
