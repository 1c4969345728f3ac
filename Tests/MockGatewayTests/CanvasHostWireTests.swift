import Foundation
import GatewayProtocol
import MockGateway
import TestSupport
import Testing
import WebSocketTransport

/// The canvas host on the Gateway's port, checked with an independent HTTP client (Python's
/// `http.client`, `Tests/Interop/http_peer.py`). Breaks tried, each failing a check here:
/// authorizing any capability (the unknown-capability 401), keeping a capability after its
/// session ended (the session-end 401), not sliding the expiry on use (the 9+9-minute 200),
/// keeping the old capability after a refresh (the old-URL 401), charging nothing for a wrong
/// Bearer secret (the 429).
@Suite(.enabled(if: HTTPPeer.shouldRun, "Python not found (.venv or OPENCLAW_PYTHON)"))
struct CanvasHostWireTests {
    private static func configuration(auth: GatewayAuthMode = .none, limit: AuthRateLimitConfiguration = .upstreamDefault)
        -> GatewayConfiguration {
        var configuration = GatewayConfiguration(profile: .current, clock: .manual(startMs: 1_000_000))
        configuration.autoApproval = .auto
        configuration.auth = auth
        configuration.authRateLimit = limit
        return configuration
    }

    /// A node session and the path part of its advertised canvas URL (`/__openclaw__/cap/<c>`).
    private static func node(_ gateway: Gateway, seed: UInt8) async throws -> (ConnectedSession, String) {
        let session = try await TestSessions.connect(gateway, identity: try TestIdentities.make(seed)) { $0.connectParams() }
        let url = try #require(session.hello.pluginSurfaceUrls?["canvas"])
        let origin = "http://127.0.0.1:\(gateway.port)"
        #expect(url.hasPrefix(origin + "/__openclaw__/cap/"))
        return (session, String(url.dropFirst(origin.count)))
    }

    @Test func theAdvertisedURLServesThePageAndAssetsAndRefusesTheRest() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let (session, scoped) = try await Self.node(gateway, seed: 0xD1)
            let results = try await HTTPPeer.run(base: "http://127.0.0.1:\(gateway.port)", [
                .request(path: scoped + "/__openclaw__/canvas/"),
                .request(path: scoped + "/__openclaw__/canvas/page.js"),
                .request(path: scoped + "/__openclaw__/a2ui/"),
                .request(path: scoped + "/__openclaw__/a2ui/a2ui.bundle.js"),
                .request(path: scoped + "/__openclaw__/canvas/missing.txt"),
                .request(method: "POST", path: scoped + "/__openclaw__/canvas/", body: "x"),
                .request(path: "/__openclaw__/canvas/"),
                .request(path: "/__openclaw__/cap/broken"),
                .request(path: "/__openclaw__/cap/AAAAAAAAAAAAAAAAAAAAAAAA/__openclaw__/canvas/"),
                .request(path: scoped + "/elsewhere"),
                .request(path: "/nothing/here"),
            ])
            #expect(results.count == 11)
            guard results.count == 11 else { return }
            #expect(results[0].status == 200 && results[0].body.contains("<title>OpenClaw Canvas</title>"), "\(results[0])")
            #expect(results[0].headers["content-type"] == "text/html; charset=utf-8")
            #expect(results[0].headers["cache-control"] == "no-store")
            #expect(results[1].status == 200 && results[1].body.contains("canvas script ran"))
            #expect(results[2].status == 200 && results[2].body.contains("a2ui-root"))
            #expect(results[3].status == 200)
            #expect(results[4].status == 404)
            #expect(results[5].status == 405)
            #expect(results[6].status == 401, "unscoped without a Bearer secret")
            #expect(results[7].status == 401, "malformed capability path")
            #expect(results[8].status == 401, "unknown capability")
            #expect(results[8].body == #"{"error":{"message":"Unauthorized","type":"unauthorized"}}"#)
            #expect(results[9].status == 404, "authorized, but not a canvas host path")
            #expect(results[10].status == 404)
            await session.client.close()
        }
    }

    @Test func expiryRefreshAndSessionEnd() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let (session, scoped) = try await Self.node(gateway, seed: 0xD2)
            let base = "http://127.0.0.1:\(gateway.port)"
            let page = "/__openclaw__/canvas/"
            // Used within its TTL, the capability lives on: 9 + 9 minutes after minting it still works.
            await gateway.advance(by: .seconds(9 * 60))
            #expect(try await HTTPPeer.run(base: base, [.request(path: scoped + page)]).first?.status == 200)
            await gateway.advance(by: .seconds(9 * 60))
            #expect(try await HTTPPeer.run(base: base, [.request(path: scoped + page)]).first?.status == 200)
            await gateway.advance(by: .seconds(11 * 60))
            #expect(try await HTTPPeer.run(base: base, [.request(path: scoped + page)]).first?.status == 401, "expired by time")
            // Refresh: a new URL that works; the old one stays refused.
            let refreshed = try await session.client.request("node.pluginSurface.refresh", params: ["surface": "canvas"])
            let url = try #require(refreshed.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue)
            let fresh = String(url.dropFirst(base.count))
            #expect(fresh != scoped)
            var results = try await HTTPPeer.run(base: base, [.request(path: fresh + page), .request(path: scoped + page)])
            #expect(results.map(\.status) == [200, 401])
            // Scripted expiry.
            #expect(await gateway.expireCanvasCapabilities() == 1)
            results = try await HTTPPeer.run(base: base, [.request(path: fresh + page)])
            #expect(results.first?.status == 401, "expired by script")
            // A session that ended takes its capability with it.
            let again = try await session.client.request("node.pluginSurface.refresh", params: ["surface": "canvas"])
            let last = String(try #require(again.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue).dropFirst(base.count))
            #expect(try await HTTPPeer.run(base: base, [.request(path: last + page)]).first?.status == 200)
            let cursor = gateway.events.count
            await session.client.close()
            let closed = await gateway.events.first(from: cursor, timeout: .seconds(30)) { event in
                if case .connectionClosed = event { return true }
                return false
            }
            #expect(closed != nil)
            #expect(try await HTTPPeer.run(base: base, [.request(path: last + page)]).first?.status == 401, "session ended")
        }
    }

    @Test func aBearerSecretServesUnscopedAndRepeatedFailuresGet429() async throws {
        let limit = AuthRateLimitConfiguration(maxAttempts: 2, windowMs: 60_000, lockoutMs: 90_500, exemptLoopback: false)
        try await Gateway.withGateway(Self.configuration(auth: .token("s3cret"), limit: limit)) { gateway in
            let results = try await HTTPPeer.run(base: "http://127.0.0.1:\(gateway.port)", [
                .request(path: "/__openclaw__/canvas/", headers: ["Authorization": "Bearer s3cret"]),
                .request(path: "/__openclaw__/canvas/", headers: ["Authorization": "Bearer wrong"]),
                .request(path: "/__openclaw__/canvas/", headers: ["Authorization": "Bearer wrong"]),
                .request(path: "/__openclaw__/canvas/", headers: ["Authorization": "Bearer s3cret"]),
            ])
            #expect(results.map(\.status) == [200, 401, 401, 429], "\(results)")
            guard results.count == 4 else { return }
            #expect(results[3].headers["retry-after"] == "91")
            #expect(results[3].body
                == #"{"error":{"message":"Too many failed authentication attempts. Please try again later.","type":"rate_limited"}}"#)
            // The lockout ends on the Gateway's clock.
            await gateway.advance(by: .seconds(91))
            let after = try await HTTPPeer.run(base: "http://127.0.0.1:\(gateway.port)", [
                .request(path: "/__openclaw__/canvas/", headers: ["Authorization": "Bearer s3cret"]),
            ])
            #expect(after.first?.status == 200)
        }
    }

    @Test func withoutA2UIAssetsTheA2UIPathIs503() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let (session, scoped) = try await Self.node(gateway, seed: 0xD3)
            await gateway.setA2UIAvailable(false)
            let results = try await HTTPPeer.run(base: "http://127.0.0.1:\(gateway.port)", [
                .request(path: scoped + "/__openclaw__/a2ui/"), .request(path: scoped + "/__openclaw__/canvas/"),
            ])
            #expect(results.map(\.status) == [503, 200])
            #expect(results.first?.body == "A2UI assets not found\n")
            await session.client.close()
        }
    }
}

/// The canvas host on the in-memory network (what a simulated run uses), without Python.
struct CanvasHostInMemoryTests {
    @Test func theCanvasHostAnswersOnTheInMemoryNetwork() async throws {
        let network = InMemoryNetwork()
        var configuration = GatewayConfiguration(profile: .current)
        configuration.auth = .token("s3cret")
        configuration.network = network
        try await Gateway.withGateway(configuration) { gateway in
            let base = "http://127.0.0.1:\(gateway.port)"
            let page = try await network.send(HTTPRequest(method: "GET", target: "/", headers: ["Authorization": "Bearer s3cret"]),
                                              to: base + "/__openclaw__/canvas/")
            #expect(page.status == 200)
            #expect(String(decoding: page.body, as: UTF8.self).contains("OpenClaw Canvas"))
            let refused = try await network.send(HTTPRequest(method: "GET", target: "/"),
                                                 to: base + "/__openclaw__/cap/unknown/__openclaw__/canvas/")
            #expect(refused.status == 401)
            #expect(try await network.send(HTTPRequest(method: "GET", target: "/"), to: base + "/nope").status == 404)
        }
    }
}
