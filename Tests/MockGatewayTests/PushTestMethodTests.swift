import GatewayProtocol
import Testing
@testable import MockGateway

/// `push.test` over the stored registration, through the fake relay or the APNs stand-in.
@Suite("push.test and the fake relay")
struct PushTestMethodTests {
    static func register(_ node: ConnectedSession, _ payload: JSONValue) async throws {
        let reply = try await node.client.request("node.event", params: [
            "event": "push.apns.register", "payloadJSON": .string(payload.jsonString),
        ])
        #expect(reply.ok)
    }

    @Test func aRelayRegistrationIsTestedWithARequestSignedByTheGatewayIdentity() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0x81)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            try await Self.register(node, [
                "transport": "relay", "relayHandle": "handle-1", "sendGrant": "grant-1", "topic": "ai.openclaw.ios",
                "environment": "production", "tokenDebugSuffix": "abcd", "gatewayDeviceId": .string(gateway.identity.deviceId),
            ])
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x82), scopes: ["operator.write"])
            #expect(!writer.hello.features.methods.contains("push.test"), "push.test is served but not advertised")
            let reply = try await writer.client.request("push.test", params: ["nodeId": .string(identity.deviceId), "title": "Hi"])
            #expect(reply.payload?["ok"] == true)
            #expect(reply.payload?["status"] == 200)
            #expect(reply.payload?["transport"] == "relay")
            #expect(reply.payload?["tokenSuffix"] == "abcd")
            #expect(reply.payload?["topic"] == "ai.openclaw.ios")
            #expect(reply.payload?["environment"] == "production")
            #expect(reply.payload?["apnsId"]?.stringValue?.isEmpty == false)

            let delivery = try #require(await gateway.pushDeliveries().last)
            #expect(delivery.sendGrant == "grant-1")
            let signedAt = try #require(delivery.signedAtMs)
            let signature = try #require(delivery.signature)
            let signed = PushRelay.signaturePayload(gatewayDeviceId: gateway.identity.deviceId, signedAtMs: signedAt, bodyJSON: delivery.bodyJSON)
            #expect(DeviceIdentity.verify(signature: signature, payload: signed, publicKey: gateway.identity.publicKeyBase64URL))
            let body = try JSONValue(parsing: delivery.bodyJSON)
            #expect(body["relayHandle"] == "handle-1")
            #expect(body["pushType"] == "alert")
            #expect(body["payload"]?["aps"]?["alert"]?["title"] == "Hi")
        }
    }

    @Test func directRegistrationsOverrideTheEnvironmentAndUnknownNodesAreRefused() async throws {
        try await Gateway.withGateway(GatewayConfiguration(autoApproval: .auto)) { gateway in
            let identity = try TestIdentities.make(0x83)
            let node = try await TestSessions.nodeSession(gateway, identity: identity)
            try await Self.register(node, ["token": .string(String(repeating: "ab", count: 32)), "topic": "ai.openclaw.ios",
                                           "environment": "production"])
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x84), scopes: ["operator.write"])
            let reply = try await writer.client.request("push.test", params: ["nodeId": .string(identity.deviceId), "environment": "sandbox"])
            #expect(reply.payload?["transport"] == "direct")
            #expect(reply.payload?["environment"] == "sandbox")
            #expect(reply.payload?["tokenSuffix"] == "abababab")
            let unknown = try await writer.client.request("push.test", params: ["nodeId": "nobody"])
            #expect(unknown.error?.message == "node nobody has no APNs registration (connect iOS node first)")
            let badEnvironment = try await writer.client.request("push.test", params: ["nodeId": .string(identity.deviceId), "environment": "beta"])
            #expect(badEnvironment.error?.code == "INVALID_REQUEST")
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0x85), scopes: ["operator.read"])
            let denied = try await reader.client.request("push.test", params: ["nodeId": .string(identity.deviceId)])
            #expect(denied.ok == false, "push.test needs operator.write")
        }
    }
}
