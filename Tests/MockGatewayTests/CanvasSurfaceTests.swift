import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// The canvas URLs a node is told about: built from the bound address, capability-scoped, per
/// Gateway generation and negotiated node protocol; the protocol-3-era refresh shape.
@Suite struct CanvasSurfaceTests {
    // MARK: - Pure rules

    @Test func urlsCarryTheBoundPortAndBracketIPv6() {
        let surface = CanvasSurface(host: "127.0.0.1", port: 43_210)
        #expect(surface.origin == "http://127.0.0.1:43210")
        #expect(surface.scopedURL(capability: "abc_-9") == "http://127.0.0.1:43210/__openclaw__/cap/abc_-9")
        #expect(CanvasSurface(host: "::1", port: 7).origin == "http://[::1]:7")
        // A capability is a single path segment even if it held a slash.
        #expect(surface.scopedURL(capability: "a/b").hasSuffix("/__openclaw__/cap/a%2Fb"))
        #expect(surface.scopedURL(capability: "AbZ-_09").hasSuffix("/__openclaw__/cap/AbZ-_09"))
    }

    @Test func aMintedCapabilityIs24Base64URLCharacters() {
        let capability = CanvasSurface.mintCapability(Array(repeating: 0xFF, count: 18))
        #expect(capability.count == 24)
        #expect(capability == String(repeating: "_", count: 24))
    }

    @Test func helloFieldsFollowTheGenerationAndTheNodeProtocol() {
        let surface = CanvasSurface(host: "127.0.0.1", port: 9)
        let scoped = surface.scopedURL(capability: "c")
        let current = surface.helloFields(isNode: true, newerNodeMethods: true, legacyNodeProtocol: false, capability: { "c" })
        #expect(current.pluginSurfaceUrls == ["canvas": scoped])
        #expect(current.canvasHostUrl == nil)
        let legacyNode = surface.helloFields(isNode: true, newerNodeMethods: true, legacyNodeProtocol: true, capability: { "c" })
        #expect(legacyNode.pluginSurfaceUrls == nil)
        #expect(legacyNode.canvasHostUrl == nil)
        let oldGateway = surface.helloFields(isNode: true, newerNodeMethods: false, legacyNodeProtocol: true, capability: { "c" })
        #expect(oldGateway.pluginSurfaceUrls == nil)
        #expect(oldGateway.canvasHostUrl == scoped)
        let operatorSession = surface.helloFields(isNode: false, newerNodeMethods: true, legacyNodeProtocol: false, capability: { "c" })
        // Operators get the scoped URL from a current Gateway (upstream connect-hello.ts@6eec7e0e
        // sends pluginSurfaceUrls whatever the role), nothing from a protocol-3-era one.
        #expect(operatorSession.pluginSurfaceUrls == ["canvas": scoped] && operatorSession.canvasHostUrl == nil)
        var minted = 0
        let oldOperator = surface.helloFields(isNode: false, newerNodeMethods: false, legacyNodeProtocol: false) {
            minted += 1
            return "c"
        }
        #expect(oldOperator.pluginSurfaceUrls == nil && oldOperator.canvasHostUrl == nil && minted == 0)
        #expect(CanvasSurface.usesLegacyNodeProtocol(maxProtocol: 3, currentProtocol: 4))
        #expect(!CanvasSurface.usesLegacyNodeProtocol(maxProtocol: 4, currentProtocol: 4))
    }

    @Test func theRefreshPayloadHasTheProtocol3Shape() {
        let payload = CanvasSurface(host: "127.0.0.1", port: 9).capabilityRefreshPayload(capability: "cap", nowMs: 1_000)
        #expect(payload["canvasCapability"]?.stringValue == "cap")
        let expires: Int64? = payload["canvasCapabilityExpiresAtMs"]?.int64Value
        #expect(expires == Int64(601_000))
        #expect(payload["canvasHostUrl"]?.stringValue == "http://127.0.0.1:9/__openclaw__/cap/cap")
    }

    // MARK: - On the wire

    private static func config(_ profile: GatewayProfile) -> GatewayConfiguration {
        var configuration = GatewayConfiguration(profile: profile)
        configuration.autoApproval = .auto
        return configuration
    }

    @Test func aGatewayOnPortZeroAdvertisesItsRealPort() async throws {
        for profile in [GatewayProfile.current, .legacy] {
            try await Gateway.withGateway(Self.config(profile)) { gateway in
                #expect(gateway.port != 0)
                let session = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xC1)) { $0.connectParams() }
                let advertised = [session.hello.pluginSurfaceUrls?["canvas"], session.hello.canvasHostUrl].compactMap { $0 }
                #expect(advertised.count == 1, "\(profile.name): \(advertised)")
                for url in advertised {
                    #expect(url.hasPrefix("http://127.0.0.1:\(gateway.port)/__openclaw__/cap/"), "\(profile.name): \(url)")
                    #expect(!url.contains(":0/"), "\(profile.name): \(url)")
                }
                await session.client.close()
            }
        }
    }

    @Test func aNodeOfferingOnlyProtocol3GetsNoPluginSurfaceFromACurrentGateway() async throws {
        try await Gateway.withGateway(Self.config(.current)) { gateway in
            let session = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xC2)) {
                $0.connectParams(minProtocol: 3, maxProtocol: 3)
            }
            #expect(session.hello.pluginSurfaceUrls == nil)
            #expect(session.hello.canvasHostUrl == nil)
            await session.client.close()
        }
    }

    @Test func theLegacyRefreshRotatesTheCapabilityWithTheProtocol3Shape() async throws {
        try await Gateway.withGateway(Self.config(.legacy)) { gateway in
            let session = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xC3)) { $0.connectParams() }
            let first = try await session.client.request("node.canvas.capability.refresh", params: [:])
            let second = try await session.client.request("node.canvas.capability.refresh", params: [:])
            for response in [first, second] {
                #expect(response.ok)
                let capability = try #require(response.payload?["canvasCapability"]?.stringValue)
                #expect(capability.count == 24)
                #expect(response.payload?["canvasHostUrl"]?.stringValue
                        == "http://127.0.0.1:\(gateway.port)/__openclaw__/cap/\(capability)")
                let expires = try #require(response.payload?["canvasCapabilityExpiresAtMs"]?.int64Value)
                #expect(expires > gateway.clock.nowMs && expires <= gateway.clock.nowMs + 600_000)
            }
            #expect(first.payload?["canvasCapability"] != second.payload?["canvasCapability"])
            await session.client.close()
        }
    }
}
