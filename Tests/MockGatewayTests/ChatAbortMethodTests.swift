import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// `chat.abort` over real sockets (upstream handler `src/gateway/server-methods/chat.ts@00d42041`,
/// the abort helpers and the `aborted` event `src/gateway/chat-abort.ts@00da33b4`,
/// `ChatAbortParamsSchema` in `packages/gateway-protocol/src/schema/logs-chat.ts@058f7b07`).
/// A run is active while the scripted agent's reply is scheduled (`ChatAutoReply.echo` with a delay).
///
/// Break tried: `ChatStore.abortRun` leaving the scheduled reply in place (the run stays active):
/// the session-wide abort answers the already aborted run again and the echo row appears once the
/// clock moves, so three expectations of `aborts` fail.
/// A write operator (identity `byte`) of a Gateway whose scripted agent answers a send after
/// 5 s; expects its `hello-ok` to advertise `method`.
private func echoingWriter(_ gateway: Gateway, byte: UInt8, advertising method: GatewayMethod,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws -> ConnectedSession {
    await gateway.setChatAutoReply(.echo(delay: .seconds(5)))
    let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(byte),
                                                        scopes: [OperatorScope.write.rawValue])
    #expect(writer.hello.features.methods.contains(method.rawValue), sourceLocation: sourceLocation)
    return writer
}

@Suite("chat.abort")
struct ChatAbortMethodTests {
    @Test("stops one run by id or every run of a session; the reply is never written; chat aborted goes out")
    func aborts() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await echoingWriter(gateway, byte: 0xD1, advertising: .chatAbort)
            for (key, session) in [("run-a1", "a"), ("run-a2", "a"), ("run-b1", "b")] {
                let ack = try await writer.client.request(GatewayMethod.chatSend.rawValue,
                                                          params: ["sessionKey": .string(session), "message": "hi",
                                                                   "idempotencyKey": .string(key)])
                #expect(ack.payload?["status"] == "started")
            }
            let mismatch = try await writer.client.request(GatewayMethod.chatAbort.rawValue,
                                                           params: ["sessionKey": "b", "runId": "run-a1"])
            #expect(mismatch.error == invalidRequest("runId does not match sessionKey"))
            let unknown = try await writer.client.request(GatewayMethod.chatAbort.rawValue,
                                                          params: ["sessionKey": "a", "runId": "ghost"])
            #expect(unknown.payload == ["ok": true, "aborted": false, "runIds": []])

            let one = try await writer.client.request(GatewayMethod.chatAbort.rawValue,
                                                      params: ["sessionKey": "a", "runId": "run-a1"])
            #expect(one.payload == ["ok": true, "aborted": true, "runIds": ["run-a1"]])
            // No `chat` event came before: the user rows send none, the replies are not due.
            let event = try await writer.client.event(GatewayEventName.chat.rawValue)
            #expect(event.payload == ["runId": "run-a1", "sessionKey": "a", "seq": 1, "state": "aborted", "stopReason": "rpc"])

            let all = try await writer.client.request(GatewayMethod.chatAbort.rawValue, params: ["sessionKey": "a"])
            #expect(all.payload == ["ok": true, "aborted": true, "runIds": ["run-a2"]])
            let again = try await writer.client.request(GatewayMethod.chatAbort.rawValue, params: ["sessionKey": "a"])
            #expect(again.payload == ["ok": true, "aborted": false, "runIds": []])

            // The aborted runs never answer; the run of session b still does.
            await gateway.advance(by: .seconds(6))
            #expect(await gateway.chatMessages(sessionKey: "a").map(\.role) == [.user, .user])
            #expect(await gateway.chatMessages(sessionKey: "b").map(\.text) == ["hi", "echo: hi"])
        }
    }

    @Test("closed params with a required non-empty sessionKey; a read-only operator is refused")
    func refuses() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD2),
                                                                scopes: [OperatorScope.write.rawValue])
            let cases: [(JSONValue?, String)] = [
                (nil, "invalid chat.abort params: at root: must have required property 'sessionKey'"),
                (["sessionKey": "main", "reason": "x"], "invalid chat.abort params: at root: unexpected property 'reason'"),
                (["sessionKey": ""], "invalid chat.abort params: at /sessionKey: must NOT have fewer than 1 characters"),
                (["sessionKey": "main", "runId": 7], "invalid chat.abort params: at /runId: must be string"),
            ]
            for (params, message) in cases {
                let response = try await writer.client.request(GatewayMethod.chatAbort.rawValue, params: params)
                #expect(response.error == invalidRequest(message), "\(String(describing: params))")
            }
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD3),
                                                                scopes: [OperatorScope.read.rawValue])
            let refused = try await reader.client.request(GatewayMethod.chatAbort.rawValue, params: ["sessionKey": "main"])
            #expect(refused.error?.message == "missing scope: operator.write")
        }
    }
}

/// `agent.wait` over real sockets (upstream handler `src/gateway/server-methods/agent.ts@001014f7`,
/// the chat run's terminal snapshot `agent-wait-dedupe.ts@05650168`, `AgentWaitParamsSchema` in
/// `packages/gateway-protocol/src/schema/agent.ts@8316db29`). Waits are parked on the Gateway
/// clock; a later request on the same socket (answered first) shows the wait is parked before
/// the clock moves, so nothing depends on how frames race.
///
/// Break tried: the same `ChatStore.abortRun` leaving the aborted run's reply scheduled, so the
/// run is still going: the wait on the aborted run parks instead of answering and `waits` fails
/// (timed out waiting for a frame).
@Suite("agent.wait")
struct AgentWaitMethodTests {
    @Test("parks until the run's reply is written, or until its deadline; answers ended and aborted runs at once")
    func waits() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await echoingWriter(gateway, byte: 0xD4, advertising: .agentWait)
            for key in ["run-1", "run-2"] {
                _ = try await writer.client.request(GatewayMethod.chatSend.rawValue,
                                                    params: ["sessionKey": "main", "message": "hi", "idempotencyKey": .string(key)])
            }
            // A wait on a going run parks; the reply (5 s later) ends it.
            try await writer.client.send(.request(RequestFrame(id: "w1", method: GatewayMethod.agentWait.rawValue,
                                                               params: ["runId": "run-1"])))
            // Immediate answers: timeoutMs 0 on a going run, and an unknown run.
            let now = try await writer.client.request(GatewayMethod.agentWait.rawValue, params: ["runId": "run-2", "timeoutMs": 0])
            #expect(now.payload == ["runId": "run-2", "status": "timeout", "timeoutPhase": "gateway_draining"])
            let ghost = try await writer.client.request(GatewayMethod.agentWait.rawValue, params: ["runId": "ghost", "timeoutMs": 0])
            #expect(ghost.payload == ["runId": "ghost", "status": "timeout", "timeoutPhase": "queue", "providerStarted": false])
            let abort = try await writer.client.request(GatewayMethod.chatAbort.rawValue, params: ["sessionKey": "main", "runId": "run-2"])
            #expect(abort.payload?["aborted"] == true)
            let aborted = try await writer.client.request(GatewayMethod.agentWait.rawValue, params: ["runId": "run-2"])
            let abortedAt = try #require(aborted.payload?["endedAt"]?.int64Value)
            #expect(aborted.payload == ["runId": "run-2", "status": "timeout", "endedAt": .int(abortedAt), "stopReason": "rpc"])

            await gateway.advance(by: .seconds(5))
            let ended = try await writer.client.response(to: "w1")
            let endedAt = try #require(ended.payload?["endedAt"]?.int64Value)
            #expect(ended.payload == ["runId": "run-1", "status": "ok", "endedAt": .int(endedAt)])
            #expect(endedAt == abortedAt + 5_000)
            let again = try await writer.client.request(GatewayMethod.agentWait.rawValue, params: ["runId": "run-1"])
            #expect(again.payload == ended.payload)

            // A wait that nothing ends answers at its deadline.
            try await writer.client.send(.request(RequestFrame(id: "w2", method: GatewayMethod.agentWait.rawValue,
                                                               params: ["runId": "never", "timeoutMs": 2_000])))
            _ = try await writer.client.request(GatewayMethod.chatAbort.rawValue, params: ["sessionKey": "main"])
            await gateway.advance(by: .seconds(2))
            let expired = try await writer.client.response(to: "w2")
            #expect(expired.payload == ["runId": "never", "status": "timeout", "timeoutPhase": "queue", "providerStarted": false])
        }
    }

    @Test("closed params: runId required and non-empty, timeoutMs a non-negative integer; read-only is refused")
    func refuses() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD5),
                                                                scopes: [OperatorScope.write.rawValue])
            let cases: [(JSONValue?, String)] = [
                (nil, "invalid agent.wait params: at root: must have required property 'runId'"),
                (["runId": ""], "invalid agent.wait params: at /runId: must NOT have fewer than 1 characters"),
                (["runId": "r", "timeoutMs": -1], "invalid agent.wait params: at /timeoutMs: must be >= 0"),
                (["runId": "r", "timeoutMs": 1.5], "invalid agent.wait params: at /timeoutMs: must be integer"),
                (["runId": "r", "sessionKey": "main"], "invalid agent.wait params: at root: unexpected property 'sessionKey'"),
            ]
            for (params, message) in cases {
                let response = try await writer.client.request(GatewayMethod.agentWait.rawValue, params: params)
                #expect(response.error == invalidRequest(message), "\(String(describing: params))")
            }
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xD6),
                                                                scopes: [OperatorScope.read.rawValue])
            let refused = try await reader.client.request(GatewayMethod.agentWait.rawValue, params: ["runId": "r"])
            #expect(refused.error?.message == "missing scope: operator.write")
        }
    }
}
