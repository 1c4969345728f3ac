import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// `health` over real sockets (upstream handler `src/gateway/server-methods/health.ts@0084ff27`,
/// `HealthSummary` in `src/commands/health.types.ts@0d4128c1`, the disabled heartbeat of
/// `src/infra/heartbeat-summary.ts@07a486b1`).
///
/// Break tried: leaving the chat sessions out of the summary (`count` 0, no `recent`): `summarises`
/// fails on the payload comparison.
@Suite("health")
struct HealthMethodTests {
    @Test("the summary names the agents, the default agent and the chat sessions, newest first; heartbeats off")
    func summarises() async throws {
        var configuration = GatewayConfiguration()
        configuration.agents = AgentRoster(agents: [AgentFixture(id: "main", name: "Main"), AgentFixture(id: "ops")],
                                           defaultId: "main")
        try await Gateway.withGateway(configuration) { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD7),
                                                                scopes: [OperatorScope.write.rawValue])
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD8),
                                                                scopes: [OperatorScope.read.rawValue])
            #expect(reader.hello.features.methods.contains(GatewayMethod.health.rawValue))
            _ = try await writer.client.request(GatewayMethod.chatSend.rawValue,
                                                params: ["sessionKey": "older", "message": "a", "idempotencyKey": "h1"])
            await gateway.advance(by: .seconds(3))
            _ = try await writer.client.request(GatewayMethod.chatSend.rawValue,
                                                params: ["sessionKey": "newer", "message": "b", "idempotencyKey": "h2"])
            await gateway.advance(by: .seconds(2))
            let response = try await reader.client.request(GatewayMethod.health.rawValue, params: ["probe": true])
            let payload = try #require(response.payload)
            let ts = try #require(payload["ts"]?.int64Value)
            let sessions: JSONValue = ["path": "(in memory)", "count": 2, "recent": [
                ["key": "newer", "updatedAt": .int(ts - 2_000), "age": 2_000],
                ["key": "older", "updatedAt": .int(ts - 5_000), "age": 5_000],
            ]]
            let heartbeat: JSONValue = ["enabled": false, "every": "disabled", "everyMs": .null,
                                        "prompt": "Mock Gateway: heartbeats are off.", "target": "none", "ackMaxChars": 300]
            #expect(payload == [
                "ok": true, "ts": .int(ts), "durationMs": 0, "channels": [:], "channelOrder": [], "channelLabels": [:],
                "heartbeatSeconds": 0, "defaultAgentId": "main",
                "agents": [
                    ["agentId": "main", "name": "Main", "isDefault": true, "heartbeat": heartbeat, "sessions": sessions],
                    ["agentId": "ops", "isDefault": false, "heartbeat": heartbeat,
                     "sessions": ["path": "(in memory)", "count": 0, "recent": []]],
                ],
                "sessions": sessions,
            ])
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0xD9))
            let refused = try await node.client.request(GatewayMethod.health.rawValue, params: nil)
            #expect(refused.error?.message == "unauthorized role: node")
        }
    }
}
