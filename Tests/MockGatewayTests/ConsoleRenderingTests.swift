import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// How replies and gateway events are written: one JSON object per line, or text.
@Suite("Console rendering")
struct ConsoleRenderingTests {
    @Test func repliesRenderAsCommandOkOrCommandError() {
        let ok = ConsoleReply(command: "advance", outcome: .success(.advanced(seconds: 901, nowMs: 1_767_226_501_000)))
        #expect(ok.rendered(.json) == #"{"command":"advance","event":"command.ok","result":{"nowMs":1767226501000,"seconds":901}}"#)
        #expect(ok.rendered(.text) == "advanced 901 s; gateway time is now 1767226501000")
        let failed = ConsoleReply(command: "approve", outcome: .failure(ConsoleError("no pending pairing request")))
        #expect(failed.rendered(.json) == #"{"command":"approve","event":"command.error","message":"no pending pairing request"}"#)
        #expect(failed.rendered(.text) == "error: no pending pairing request")
    }

    @Test func setupCodeResultCarriesTheCodeAndTheURL() {
        let code = SetupCode(url: "ws://127.0.0.1:18789", bootstrapToken: "tok", expiresAtMs: 600_000)
        let json = ConsoleResult.setupCode(IssuedSetupCode(code: code, setupId: "setup-1", access: .limited, expiresAtMs: 600_000),
                                           profile: "limited", qr: nil).json
        #expect(json["setupId"] == "setup-1")
        #expect(json["access"] == "limited")
        #expect(json["profile"] == "limited")
        #expect(json["setupCode"]?.stringValue == code.encoded)
        #expect(json["url"] == "ws://127.0.0.1:18789")
        #expect(json["link"]?.stringValue == code.link)
    }

    @Test func recordResultsCarryTheRecordId() throws {
        let approval = ApprovalRecord(id: "a1", presentation: .exec(ExecApprovalPresentation(commandText: "ls")),
                                      allowedDecisions: [.allowOnce], createdAtMs: 0, expiresAtMs: 1_000)
        #expect(ConsoleResult.approvalCreated(approval).json["id"] == "a1")
        #expect(ConsoleResult.approvalResolved(applied: false, record: approval).json["applied"] == false)
        let question = QuestionRecord(id: "q-7", questions: [QuestionItem(questionId: "q1", header: "Q", question: "?")],
                                      createdAtMs: 0, expiresAtMs: 900_000)
        #expect(ConsoleResult.questionCreated(question).json["id"] == "q-7")
        #expect(ConsoleResult.questionResolved(question).json["status"] == "pending")
    }

    @Test func pairingEventsRenderWithTheirFields() throws {
        let info = PairingRequestInfo(requestId: "r1", deviceId: "d1", role: "node", roles: ["node"], scopes: [], createdAtMs: 5)
        let requested = try #require(ConsoleEventLine.describing(.pairingRequested(info)))
        #expect(requested.rendered(.json)
            == #"{"deviceId":"d1","event":"pairing.requested","requestId":"r1","role":"node","roles":["node"],"scopes":[]}"#)
        #expect(requested.rendered(.text) == #"pairing.requested requestId=r1 deviceId=d1 role=node roles=["node"] scopes=[]"#)
        let resolved = try #require(ConsoleEventLine.describing(.pairingResolved(requestId: "r1", deviceId: "d1", decision: .rejected)))
        #expect(resolved.json == ["event": "pairing.resolved", "requestId": "r1", "deviceId": "d1", "decision": "rejected"])
    }

    @Test func nodeInvokeAndPresenceEventsRenderWithTheirFields() throws {
        let connected = try #require(ConsoleEventLine.describing(.nodeConnected(nodeId: "n1", connectionId: "c1")))
        #expect(connected.json == ["event": "node.connected", "nodeId": "n1", "connectionId": "c1"])
        let disconnected = try #require(ConsoleEventLine.describing(.nodeDisconnected(nodeId: "n1", connectionId: "c1")))
        #expect(disconnected.name == "node.disconnected")
        let result = try #require(ConsoleEventLine.describing(.invokeResult(id: "i1", nodeId: "n1", ok: true, matched: true,
                                                                           connectionId: "c1")))
        #expect(result.json == ["event": "invoke.result", "id": "i1", "nodeId": "n1", "ok": true, "matched": true, "connectionId": "c1"])
        let presence = try #require(ConsoleEventLine.describing(.presenceHandled(nodeId: "n1", trigger: "silent_push",
                                                                                handled: true, reason: "persisted")))
        #expect(presence.json == ["event": "presence.alive", "nodeId": "n1", "trigger": "silent_push", "handled": true,
                                  "reason": "persisted"])
        #expect(presence.rendered(.text) == "presence.alive nodeId=n1 trigger=silent_push handled=true reason=persisted")
    }

    @Test func operatorRecordEventsRenderAsApprovalAndQuestionEvents() throws {
        let requested = ConsoleEventLine.describing(.operatorRecord(OperatorRecordEvent(kind: .approval, id: "a1",
                                                                                       action: .requested, status: .approval(.pending))))
        #expect(requested?.json == ["event": "approval.requested", "id": "a1", "status": "pending"])
        let resolved = ConsoleEventLine.describing(.operatorRecord(OperatorRecordEvent(
            kind: .approval, id: "a1", action: .resolved, status: .approval(.allowed), decision: "allow-once", surface: "console")))
        #expect(resolved?.json == ["event": "approval.resolved", "id": "a1", "status": "allowed", "decision": "allow-once",
                                   "surface": "console"])
        let expired = ConsoleEventLine.describing(.operatorRecord(OperatorRecordEvent(kind: .approval, id: "a2",
                                                                                     action: .resolved, status: .approval(.expired))))
        #expect(expired?.json == ["event": "approval.resolved", "id": "a2", "status": "expired", "decision": nil])
        let answered = ConsoleEventLine.describing(.operatorRecord(OperatorRecordEvent(
            kind: .question, id: "q1", action: .resolved, status: .question(.answered), decision: #"{"answers":{"q1":["a"]}}"#)))
        #expect(answered?.json == ["event": "question.resolved", "id": "q1", "status": "answered", "answers": ["q1": ["a"]]])
        let questionExpired = ConsoleEventLine.describing(.operatorRecord(OperatorRecordEvent(
            kind: .question, id: "q2", action: .resolved, status: .question(.expired))))
        #expect(questionExpired?.json == ["event": "question.resolved", "id": "q2", "status": "expired"])
    }

    @Test func frameLevelEventsAppearOnlyWhenVerboseWithSecretsRedacted() throws {
        let frame = Frame.response(ResponseFrame.success(id: "1", payload: ["auth": ["deviceToken": "secret-token"]]))
        #expect(ConsoleEventLine.describing(.frameOut(connectionId: "c1", frame: frame)) == nil)
        #expect(ConsoleEventLine.describing(.frameIn(connectionId: "c1", frame: nil, binary: false)) == nil)
        #expect(ConsoleEventLine.describing(.requestHandled(connectionId: "c1", method: "node.event", ok: true, errorCode: nil)) == nil)
        let verbose = try #require(ConsoleEventLine.describing(.frameOut(connectionId: "c1", frame: frame), verbose: true))
        #expect(verbose.name == "frame.out")
        #expect(!verbose.rendered(.json).contains("secret-token"))
        let shown = try #require(ConsoleEventLine.describing(.frameOut(connectionId: "c1", frame: frame), verbose: true,
                                                            redactSecrets: false))
        #expect(shown.rendered(.json).contains("secret-token"))
    }

    @Test func listeningLineNamesTheURL() {
        let line = ConsoleEventLine.listening(url: "ws://127.0.0.1:18789", host: "127.0.0.1", port: 18789, profile: "current")
        #expect(line.json == ["event": "listening", "url": "ws://127.0.0.1:18789", "host": "127.0.0.1", "port": 18789,
                              "profile": "current"])
    }
}
