import Foundation
import GatewayProtocol
import Testing

/// Node surface approval as an independent client written in Python sees it on the wire
/// (`Tests/Interop/gateway_surface_peer.py`; docs/protocol.md §6.7): a paired iPhone node that
/// reconnects with a widened command surface keeps only its approved commands in effect, the
/// widening reaches operators as `node.pair.requested` and `node.pair.list`, an invoke of the
/// withheld command gets upstream's pending-approval refusal, another widened surface supersedes
/// the waiting request (`node.pair.resolved` `rejected`, then a new `node.pair.requested`), and
/// `node.pair.reject` / `node.pair.approve` resolve it. Breaks tried: reusing the waiting request
/// whatever the surface (the rule before supersession) fails `superseded` and `superseded-unknown`;
/// registering the declared commands uncut fails `withheld-refused`; registering them uncut
/// when nothing waits fails `effective-listed`.
@Suite(.enabled(if: InteropPython.shouldRun, "Python with websockets and cryptography not found (.venv or OPENCLAW_PYTHON)"))
struct NodeSurfaceInteropTests {
    @Test func pythonPeerSeesSurfaceApprovalAndSupersession() async throws {
        try await ServeProcess.withServe(["--pairing", "auto"]) { serve, url in
            try await InteropPython.withPeer("gateway_surface_peer.py", [url, "--timeout", "60"]) { peer in
                func context() -> Comment { Comment(rawValue: serve.transcript + "\n" + peer.transcript) }
                let checks = ["widened-requested", "listed", "withheld-refused", "approved-served", "same-surface-kept",
                              "superseded", "superseded-unknown", "rejected", "approved", "approved-effective",
                              "effective-listed"]
                try await peer.expectChecksPass(checks, context: context)
                try await peer.expectDoneAndExit(context: context)
            }
        }
    }
}
