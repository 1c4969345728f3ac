import GatewayProtocol
import Testing
@testable import MockGateway

/// The operator `node.invoke` answer shapes (`OperatorInvokeReply`), one outcome at a time.
@Suite("Operator node.invoke replies")
struct OperatorInvokeReplyTests {
    @Test("a success carries ok, nodeId, command, the parsed payload and payloadJSON")
    func successWithPayloadJSON() {
        let result = NodeInvokeResult(id: "i", nodeId: "n", ok: true, payloadJSON: #"{"a":1}"#)
        let reply = OperatorInvokeReply.reply(nodeId: "n", command: "device.info", outcome: .result(result))
        #expect(reply == .success([
            "ok": true, "nodeId": "n", "command": "device.info", "payload": ["a": 1], "payloadJSON": #"{"a":1}"#,
        ]))
    }

    @Test("a success sent as payload has payloadJSON null; text that is not JSON is wrapped")
    func successWithPayloadOrBrokenText() {
        let asPayload = OperatorInvokeReply.reply(nodeId: "n", command: "c",
                                                  outcome: .result(NodeInvokeResult(id: "i", nodeId: "n", ok: true, payload: [1, 2])))
        #expect(asPayload == .success(["ok": true, "nodeId": "n", "command": "c", "payload": [1, 2], "payloadJSON": .null]))
        let broken = OperatorInvokeReply.reply(nodeId: "n", command: "c",
                                               outcome: .result(NodeInvokeResult(id: "i", nodeId: "n", ok: true, payloadJSON: "not json")))
        #expect(broken == .success(["ok": true, "nodeId": "n", "command": "c", "payload": ["payloadJSON": "not json"],
                                    "payloadJSON": "not json"]))
    }

    @Test("a node failure is UNAVAILABLE with the node's error in details.nodeError, never the node's own code")
    func nodeFailure() {
        let result = NodeInvokeResult(id: "i", nodeId: "n", ok: false,
                                      error: NodeInvokeError(code: "NODE_BACKGROUND_UNAVAILABLE", message: "app is in the background"))
        guard case .failure(let error) = OperatorInvokeReply.reply(nodeId: "n", command: "camera.snap", outcome: .result(result)) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == "UNAVAILABLE")
        #expect(error.message == "NODE_BACKGROUND_UNAVAILABLE: app is in the background")
        #expect(error.details?["nodeError"] == ["code": "NODE_BACKGROUND_UNAVAILABLE", "message": "app is in the background"])
        #expect(error.details?["nodeCommandDispatched"] == true)
    }

    @Test("a failure without an error object reads 'node invoke failed' with nodeError null")
    func failureWithoutError() {
        let result = NodeInvokeResult(id: "i", nodeId: "n", ok: false)
        guard case .failure(let error) = OperatorInvokeReply.reply(nodeId: "n", command: "c", outcome: .result(result)) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.message == "node invoke failed")
        #expect(error.details?["nodeError"] == .null)
    }

    @Test("timeouts and disconnects are node errors TIMEOUT and DISCONNECTED, retryable")
    func timeoutAndDisconnect() {
        for (outcome, code) in [(InvokeOutcome.timedOut, "TIMEOUT"), (.nodeDisconnected, "DISCONNECTED")] {
            guard case .failure(let error) = OperatorInvokeReply.reply(nodeId: "n", command: "c", outcome: outcome) else {
                Issue.record("expected a failure for \(outcome)")
                continue
            }
            #expect(error.code == "UNAVAILABLE")
            #expect(error.details?["nodeError"]?["code"]?.stringValue == code)
            #expect(error.retryable == true)
        }
    }

    @Test("a node that is not connected: NOT_CONNECTED, nothing dispatched")
    func notConnected() {
        let error = OperatorInvokeReply.notConnected(nodeId: "n")
        #expect(error.code == "UNAVAILABLE")
        #expect(error.detailCode == "NOT_CONNECTED")
        #expect(error.details?["nodeCommandDispatched"] == false)
        #expect(error.details?["nodeError"]?["code"] == "NOT_CONNECTED")
    }
}
