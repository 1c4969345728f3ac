import Foundation
import GatewayProtocol
import Testing

/// `harness serve` against an independent Python client: `node.invoke`'s wake of an absent node
/// (docs/protocol.md §6.9.1) with the clock moved on the console, and the protocol-3 generation
/// (`--profile protocol3`, §3.6). `Tests/Interop/gateway_wake_peer.py`.
///
/// Broken rules tried (both tests failed): no forced second push and the nudge sent as a
/// background push (no second push after `advance 3`); `protocol3` built with protocol version 4,
/// as `legacy` is (4..4 admitted, `hello-ok.protocol 4`).
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct WakeInteropTests {
    @Test func pythonOperatorInvokingAnAbsentNodeSeesPushForcedPushNudgeThenNotConnected() async throws {
        try await ServeProcess.withServe(["--pairing", "auto"]) { serve, url in
            try await InteropPython.withPeer("gateway_wake_peer.py", [url, "--suite", "wake"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                let sent = try #require(await peer.object("step", "invoke_sent"), context())
                let nodeId = try #require(sent["nodeId"]?.stringValue)
                // The first push comes at once; the console then moves the clock past both windows.
                // `harness serve` runs on the wall clock too, so a window may also end by real time:
                // the order of the pushes is judged, not which command released each one.
                _ = try #require(await serve.object("event", "push.sent") { $0["nodeId"]?.stringValue == nodeId }, context())
                try serve.send("advance 3")
                try serve.send("advance 12")
                _ = try #require(await serve.object("event", "push.sent") {
                    $0["nodeId"]?.stringValue == nodeId && $0["pushType"] == "alert"
                }, context())
                let pushes = serve.objects.elements(from: 0).filter {
                    $0["event"] == "push.sent" && $0["nodeId"]?.stringValue == nodeId
                }.map { $0["pushType"]?.stringValue ?? "" }
                #expect(pushes == ["background", "background", "alert"],
                        "the silent push, the forced silent push, then the reopen nudge (an alert)")
                let answered = try #require(await peer.object("step", "invoke_answered"), context())
                #expect(answered["ok"] == false)
                #expect(answered["error"]?["code"] == "UNAVAILABLE")
                #expect(answered["error"]?["details"]?["code"] == "NOT_CONNECTED")
                #expect(answered["error"]?["details"]?["nodeCommandDispatched"] == false)
                try await peer.expectDoneAndExit(context: context)
            }
        }
    }

    @Test func pythonNodeFallsBackToProtocol3OnAProtocol3Gateway() async throws {
        try await ServeProcess.withServe(["--profile", "protocol3", "--pairing", "auto"]) { serve, url in
            try await InteropPython.withPeer("gateway_wake_peer.py", [url, "--suite", "protocol3"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                try await peer.expectChecksPass(["offer-4-refused-expected-3", "fallback-to-3", "operator-3-4-gets-3"], context: context)
                try await peer.expectDoneAndExit(context: context)
            }
        }
    }
}
