import Foundation
import GatewayProtocol
import MockGateway
import TestSupport
import Testing
import WebSocketTransport

/// `node.pluginSurface.refresh {surface}` on the wire (docs/protocol.md §6.10; upstream
/// src/gateway/server-methods/nodes.ts@009f87da): `surface` required, a surface the session has no
/// URL for unavailable, the answer `{surface, pluginSurfaceUrls, expiresAtMs}`; and `https` canvas
/// URLs when the Gateway serves TLS. Breaks tried: answering every surface with the canvas (the
/// rule before) fails the `surface required` and `screen` checks; dropping the legacy-protocol
/// check fails `legacyNodeHasNoSurfaceToRefresh`; an `http` origin under TLS fails the TLS test.
struct PluginSurfaceRefreshWireTests {
    private static func configuration() -> GatewayConfiguration {
        var configuration = GatewayConfiguration(profile: .current, clock: .manual(startMs: 1_000_000))
        configuration.autoApproval = .auto
        return configuration
    }

    @Test func theSurfaceParamIsRequiredAndOnlyTheCanvasRefreshes() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let session = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xE1)) { $0.connectParams() }
            let advertised = try #require(session.hello.pluginSurfaceUrls?["canvas"])
            for params: JSONValue? in [nil, [:], ["surface": "  "], ["surface": 5]] {
                let refused = try await session.client.request("node.pluginSurface.refresh", params: params)
                #expect(!refused.ok && refused.error?.code == "INVALID_REQUEST" && refused.error?.message == "surface required",
                        "\(String(describing: params)): \(refused)")
            }
            let other = try await session.client.request("node.pluginSurface.refresh", params: ["surface": "screen"])
            #expect(!other.ok && other.error?.code == "UNAVAILABLE" && other.error?.message == "screen plugin surface unavailable",
                    "\(other)")
            let refreshed = try await session.client.request("node.pluginSurface.refresh", params: ["surface": " canvas "])
            #expect(refreshed.ok, "\(refreshed)")
            let url = try #require(refreshed.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue)
            #expect(refreshed.payload?["surface"] == "canvas")
            #expect(refreshed.payload?["expiresAtMs"] == .int(1_000_000 + 600_000))
            #expect(refreshed.payload?.objectValue.map { Set($0.keys) } == ["surface", "pluginSurfaceUrls", "expiresAtMs"])
            #expect(url.hasPrefix("http://127.0.0.1:\(gateway.port)/__openclaw__/cap/") && url != advertised)
            await session.client.close()
        }
    }

    /// `plugin.surface.refresh`, the operator's name for the same handler: an operator gets
    /// `pluginSurfaceUrls` in `hello-ok` and renews it; the refusals are the node variant's; an
    /// operator without `operator.read` or `operator.write` is refused by scope; a node calling the
    /// operator name is refused by role; the protocol-3-era profile neither advertises a URL to an
    /// operator nor serves the method. Breaks tried: keeping operators out of the canvas members
    /// of `hello-ok` (the rule before) fails the first expectation and the refresh (UNAVAILABLE);
    /// registering the method with `operator.write` fails the reader's refresh.
    @Test func anOperatorRenewsItsOwnSurfaceWithPluginSurfaceRefresh() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE4),
                                                                scopes: ["operator.read"])
            let advertised = try #require(reader.hello.pluginSurfaceUrls?["canvas"], "\(reader.hello)")
            #expect(advertised.hasPrefix("http://127.0.0.1:\(gateway.port)/__openclaw__/cap/"))
            #expect(reader.hello.canvasHostUrl == nil)
            #expect(reader.hello.features.methods.contains("plugin.surface.refresh"))
            for params: JSONValue? in [nil, [:], ["surface": ""], ["surface": true]] {
                let refused = try await reader.client.request("plugin.surface.refresh", params: params)
                #expect(refused.error == ErrorShape(code: "INVALID_REQUEST", message: "surface required"), "\(refused)")
            }
            let other = try await reader.client.request("plugin.surface.refresh", params: ["surface": "screen"])
            #expect(other.error == ErrorShape(code: "UNAVAILABLE", message: "screen plugin surface unavailable"), "\(other)")
            let refreshed = try await reader.client.request("plugin.surface.refresh", params: ["surface": "canvas"])
            #expect(refreshed.payload?.objectValue.map { Set($0.keys) } == ["surface", "pluginSurfaceUrls", "expiresAtMs"],
                    "\(refreshed)")
            #expect(refreshed.payload?["surface"] == "canvas" && refreshed.payload?["expiresAtMs"] == .int(1_000_000 + 600_000))
            let url = try #require(refreshed.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue)
            #expect(url.hasPrefix("http://127.0.0.1:\(gateway.port)/__openclaw__/cap/") && url != advertised)
            // The renewed URL opens the canvas page.
            let page = try await HTTPClient.send(HTTPRequest(method: "GET", target: "/"), to: url + "/__openclaw__/canvas/")
            #expect(page.status == 200, "\(page)")

            let unscoped = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE5), scopes: [])
            let noScope = try await unscoped.client.request("plugin.surface.refresh", params: ["surface": "canvas"])
            #expect(noScope.error?.message == "missing scope: operator.read", "\(noScope)")
            let node = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xE6)) { $0.connectParams() }
            let byNode = try await node.client.request("plugin.surface.refresh", params: ["surface": "canvas"])
            #expect(!byNode.ok && byNode.error?.message.contains("unauthorized role") == true, "\(byNode)")
            for session in [reader, unscoped, node] { await session.client.close() }
        }
        var legacy = Self.configuration()
        legacy.profile = .legacy
        try await Gateway.withGateway(legacy) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE7),
                                                                scopes: ["operator.read"])
            #expect(reader.hello.pluginSurfaceUrls == nil && reader.hello.canvasHostUrl == nil)
            let unknown = try await reader.client.request("plugin.surface.refresh", params: ["surface": "canvas"])
            #expect(unknown.error?.message == "unknown method: plugin.surface.refresh", "\(unknown)")
            await reader.client.close()
        }
    }

    /// `observedUrl` (newer upstream; the Control UI's canvas lease sends it): a refresh that
    /// observed the current URL rotates it; one that observed a URL an earlier refresh already
    /// replaced gets the current URL back without `expiresAtMs` and without a rotation; once the
    /// current capability has expired, it rotates again. The same rule for the node variant.
    /// Break tried: ignoring `observedUrl` (the rule before) fails the stale answers.
    @Test func aRefreshThatObservedAReplacedURLGetsTheCurrentOne() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE8),
                                                                scopes: ["operator.read"])
            let node = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xE9)) { $0.connectParams() }
            for (session, method) in [(reader, "plugin.surface.refresh"), (node, "node.pluginSurface.refresh")] {
                let first = try #require(session.hello.pluginSurfaceUrls?["canvas"])
                let rotated = try await session.client.request(method, params: ["surface": "canvas", "observedUrl": .string(first)])
                let second = try #require(rotated.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue, "\(rotated)")
                #expect(second != first && rotated.payload?["expiresAtMs"] != nil, "\(method): \(rotated)")
                let stale = try await session.client.request(method, params: ["surface": "canvas", "observedUrl": .string(" \(first) ")])
                #expect(stale.payload == ["surface": "canvas", "pluginSurfaceUrls": ["canvas": .string(second)]], "\(method): \(stale)")
                // An observed URL without a capability segment does not conflict: it rotates.
                let plain = try await session.client.request(method, params: ["surface": "canvas", "observedUrl": "http://127.0.0.1/"])
                let third = try #require(plain.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue)
                #expect(third != second && plain.payload?["expiresAtMs"] != nil, "\(method): \(plain)")
            }
            await gateway.advance(by: .seconds(601))
            let expired = try await reader.client.request("plugin.surface.refresh",
                                                          params: ["surface": "canvas", "observedUrl": .string(reader.hello.pluginSurfaceUrls?["canvas"] ?? "")])
            #expect(expired.payload?["expiresAtMs"] != nil, "after expiry the stale observation rotates: \(expired)")
            for session in [reader, node] { await session.client.close() }
        }
    }

    @Test func legacyNodeHasNoSurfaceToRefresh() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let session = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xE2)) {
                $0.connectParams(maxProtocol: 3)
            }
            #expect(session.hello.pluginSurfaceUrls == nil)
            let refused = try await session.client.request("node.pluginSurface.refresh", params: ["surface": "canvas"])
            #expect(!refused.ok && refused.error?.code == "UNAVAILABLE" && refused.error?.message == "canvas plugin surface unavailable",
                    "\(refused)")
            await session.client.close()
        }
    }

    @Test(.enabled(if: WebSocketTLS.isAvailable, "TLS needs OpenSSL"))
    func canvasURLsAreHTTPSWhenTheGatewayServesTLS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("surface-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try WebSocketTLS.makeSelfSignedCertificate(commonName: "surface test", subjectAlternativeNames: ["IP:127.0.0.1"])
        let certificate = directory.appendingPathComponent("cert.pem"), key = directory.appendingPathComponent("key.pem")
        try Data(made.certificatePEM.utf8).write(to: certificate)
        try Data(made.privateKeyPEM.utf8).write(to: key)
        var configuration = Self.configuration()
        configuration.tls = WebSocketTLSServerConfiguration(certificateFile: certificate.path, privateKeyFile: key.path)
        let fingerprint = try WebSocketTLS.sha256Fingerprint(certificatePEM: made.certificatePEM)
        try await Gateway.withGateway(configuration) { gateway in
            let pinned = WebSocketConfiguration(tls: WebSocketTLSClientConfiguration(pinnedCertificateSHA256: fingerprint))
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xE3), configuration: pinned)
            let hello = try #require(try await client.connect(client.connectParams()).payload?.decode(as: HelloOK.self))
            let origin = "https://127.0.0.1:\(gateway.port)/__openclaw__/cap/"
            #expect(hello.pluginSurfaceUrls?["canvas"]?.hasPrefix(origin) == true, "\(String(describing: hello.pluginSurfaceUrls))")
            let refreshed = try await client.request("node.pluginSurface.refresh", params: ["surface": "canvas"])
            #expect(refreshed.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue?.hasPrefix(origin) == true, "\(refreshed)")
            // The page itself answers over https on the same port (the refresh replaced the first capability).
            let page = try #require(refreshed.payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue) + "/__openclaw__/canvas/"
            let response = try await HTTPClient.send(HTTPRequest(method: "GET", target: "/"), to: page, configuration: pinned)
            #expect(response.status == 200, "\(response)")
            await client.close()
        }
    }
}
