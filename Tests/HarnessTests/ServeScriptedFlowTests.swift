import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// `harness serve --port 0 --json` driven as a script would: read its lines live, type console
/// commands, and connect a node over real sockets.
@Suite("harness serve: scripted node flow")
struct ServeScriptedFlowTests {
    @Test func nodeIsPairedFromTheConsoleThenInvokedThroughIt() async throws {
        try await ServeProcess.withServe { serve, url in
            let first = try #require(serve.objects.all.first, "no output")
            #expect(first["event"] == "listening", "the listening line comes first")
            let port = try #require(first["port"]?.int64Value)
            #expect(port > 0, "port 0 prints the bound port")
            #expect(url == "ws://127.0.0.1:\(port)")

            // Unpaired: refused, and the console sees the request.
            let identity = try DeviceIdentity(seed: Data(repeating: 0x5A, count: 32))
            let refusedNode = try await WireNode.open(url, identity: identity)
            let refused = try await refusedNode.connect()
            #expect(refused.error?.detailCode == "PAIRING_REQUIRED")
            let requestId = try #require(refused.error?.details?["requestId"]?.stringValue)
            let requested = try #require(await serve.object("event", "pairing.requested"), "\(serve.transcript)")
            #expect(requested["requestId"]?.stringValue == requestId)
            #expect(requested["deviceId"]?.stringValue == identity.deviceId)
            #expect(requested["role"] == "node")
            #expect(requested["scopes"] == [])

            // approve latest
            let cursor = serve.objects.count
            try serve.send("approve latest")
            let approved = try #require(await serve.object(after: cursor, "event", "command.ok") { $0["command"] == "approve" },
                                        "\(serve.transcript)")
            #expect(approved["result"]?["requestId"]?.stringValue == requestId)
            let resolved = try #require(await serve.object("event", "pairing.resolved"))
            #expect(resolved["requestId"]?.stringValue == requestId)
            #expect(resolved["decision"] == "approved")

            // Reconnect: hello-ok with a device token.
            let node = try await WireNode.open(url, identity: identity)
            let hello = try await node.connect()
            let helloOK = try #require(try hello.payload?.decode(as: HelloOK.self), "\(hello)")
            #expect(helloOK.auth.deviceToken != nil)
            let connected = try #require(await serve.object("event", "node.connected"))
            #expect(connected["nodeId"]?.stringValue == identity.deviceId)

            // invoke latest: the node answers, the console reports the result.
            let invokeCursor = serve.objects.count
            try serve.send(#"invoke latest device.info {"verbose": true}"#)
            let request = try await node.event("node.invoke.request")
            let invoke = try #require(try request.payload?.decode(as: NodeInvokeRequest.self))
            #expect(invoke.command == "device.info")
            #expect(invoke.paramsJSON == #"{"verbose":true}"#)
            let ack = try await node.request("node.invoke.result", params: try JSONValue(encoding: NodeInvokeResult(
                id: invoke.id, nodeId: identity.deviceId, ok: true, payloadJSON: #"{"model":"iPhone17,1"}"#)))
            #expect(ack.payload == ["ok": true])
            let reply = try #require(await serve.object(after: invokeCursor, "event", "command.ok") { $0["command"] == "invoke" },
                                     "\(serve.transcript)")
            #expect(reply["result"]?["ok"] == true)
            #expect(reply["result"]?["id"]?.stringValue == invoke.id)
            #expect(reply["result"]?["payloadJSON"] == #"{"model":"iPhone17,1"}"#)
            let result = try #require(await serve.object(after: invokeCursor, "event", "invoke.result"))
            #expect(result["id"]?.stringValue == invoke.id)
            #expect(result["nodeId"]?.stringValue == identity.deviceId)
            #expect(result["ok"] == true)
            await node.close()
        }
    }

    @Test func consoleErrorsAreOneLineAndTheServerKeepsGoing() async throws {
        try await ServeProcess.withServe { serve, _ in
            for (line, command) in [("frobnicate", "frobnicate"), ("approve", "approve"), ("invoke latest device.info", "invoke"),
                                    ("advance soon", "advance"), (#"approval "unterminated"#, "approval")] {
                let cursor = serve.objects.count
                try serve.send(line)
                let error = try #require(await serve.object(after: cursor) { $0["event"] != nil && $0["command"] != nil },
                                         "no reply to \(line)\n\(serve.transcript)")
                #expect(error["event"] == "command.error", "\(line)")
                #expect(error["command"]?.stringValue == command, "\(line)")
                #expect(error["message"]?.stringValue?.isEmpty == false)
            }
            let cursor = serve.objects.count
            try serve.send("pending")
            let pending = try #require(await serve.object(after: cursor, "event", "command.ok"))
            #expect(pending["result"] == ["requests": []])
        }
    }

    @Test func setupCodeAnswersWithTheCodeAndTheURL() async throws {
        try await ServeProcess.withServe(["--show-secrets"]) { serve, url in
            try serve.send("setup-code")
            let reply = try #require(await serve.object("event", "command.ok") { $0["command"] == "setup-code" })
            #expect(reply["result"]?["url"]?.stringValue == url)
            let code = try #require(reply["result"]?["setupCode"]?.stringValue)
            let decoded = try SetupCode(decoding: code)
            #expect(decoded.url == url)
        }
    }
}
