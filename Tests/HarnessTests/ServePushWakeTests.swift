import Foundation
import GatewayProtocol
import Testing
import TestSupport

/// `harness serve`'s `wake` console command, driven as a script would: a node registers for push
/// over the wire, the console wakes it, and the lines show the silent push and its delivery.
@Suite("harness serve: wake")
struct ServePushWakeTests {
    @Test func wakeSendsASilentPushThroughTheRegistrationAndTheLinesShowIt() async throws {
        try await ServeProcess.withServe(["--pairing", "auto"]) { serve, url in
            // No registration yet: one error line, the server keeps going.
            var cursor = serve.objects.count
            try serve.send("wake latest")
            let none = try #require(await serve.object(after: cursor, "command", "wake"), "\(serve.transcript)")
            #expect(none["event"] == "command.error")
            #expect(none["message"]?.stringValue?.contains("no node has a push registration") == true)

            let identity = try DeviceIdentity(seed: Data(repeating: 0x6B, count: 32))
            let node = try await WireNode.open(url, identity: identity)
            let hello = try await node.connect()
            #expect(hello.ok, "\(hello)")
            let registration: JSONValue = [
                "token": .string(String(repeating: "ab", count: 32)), "topic": "ai.openclaw.ios", "environment": "sandbox",
            ]
            let registered = try await node.request("node.event", params: [
                "event": "push.apns.register", "payloadJSON": .string(registration.jsonString),
            ])
            #expect(registered.ok, "\(registered)")
            let kept = try #require(await serve.object("event", "push.registered"), "\(serve.transcript)")
            #expect(kept["accepted"] == true)

            cursor = serve.objects.count
            try serve.send("wake latest")
            let reply = try #require(await serve.object(after: cursor, "command", "wake"), "\(serve.transcript)")
            #expect(reply["event"] == "command.ok", "\(reply)")
            let result = try #require(reply["result"])
            #expect(result["nodeId"]?.stringValue == identity.deviceId)
            #expect(result["path"] == "sent")
            #expect(result["transport"] == "direct")
            #expect(result["pushType"] == "background")
            #expect(result["priority"] == 5)
            #expect(result["accepted"] == true)
            #expect(result["payload"]?["aps"] == ["content-available": 1])
            #expect(result["payload"]?["openclaw"]?["kind"] == "node.wake")
            let sent = try #require(await serve.object(after: cursor, "event", "push.sent"), "\(serve.transcript)")
            #expect(sent["nodeId"]?.stringValue == identity.deviceId)
            #expect(sent["pushType"] == "background")
            #expect(sent["transport"] == "direct")
            #expect(sent["accepted"] == true)
            // The push does not travel on the node's connection (APNs would carry it): nothing
            // but ticks arrived there before the answer to a later request.
            let before = try await node.barrier()
            #expect(WireNode.eventNames(before).allSatisfy { $0 == "tick" }, "\(WireNode.eventNames(before))")

            // An id that has no registration is an error naming the cause.
            cursor = serve.objects.count
            try serve.send("wake nobody")
            let unknown = try #require(await serve.object(after: cursor, "command", "wake"), "\(serve.transcript)")
            #expect(unknown["event"] == "command.error")
            #expect(unknown["message"]?.stringValue?.contains("it has no push registration") == true)
            await node.close()
        }
    }
}
