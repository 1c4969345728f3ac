import GatewayProtocol
import Testing
@testable import MockGateway

/// The protocol-3 Gateway generation (`GatewayProfile.protocol3`, docs/protocol.md §3.6) over real
/// sockets. Broken rule tried: `protocol3` built with `protocolVersion 4` (the `legacy` reading)
/// admits 4..4 and answers 4; both wire tests failed.
@Suite("Protocol-3 Gateway")
struct Protocol3ProfileTests {
    static func configuration() -> GatewayConfiguration {
        var configuration = GatewayConfiguration(autoApproval: .auto)
        configuration.profile = .protocol3
        return configuration
    }

    @Test func aNodeOfferingOnly4IsRefusedWithExpectedProtocol3AndFallsBackTo3() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let identity = try TestIdentities.make(0xC5)
            let client = try await TestClient.open(gateway.url, identity: identity)
            var params = client.connectParams()
            params.minProtocol = 4
            params.maxProtocol = 4
            let refused = try await client.connect(params)
            #expect(refused.error?.code == "INVALID_REQUEST")
            #expect(refused.error?.detailCode == "PROTOCOL_MISMATCH")
            #expect(refused.error?.details?["expectedProtocol"] == 3)
            #expect(refused.error?.details?["minimumProbeProtocol"] == 3)
            #expect(try await client.closed().code.rawValue == 1002)

            // Upstream's node host answers exactly this refusal with its protocol-3 envelope.
            let fallback = try await TestSessions.connect(gateway, identity: identity) { client in
                var params = client.connectParams()
                params.minProtocol = 3
                params.maxProtocol = 3
                return params
            }
            #expect(fallback.hello.protocol == 3)
            await fallback.client.close()
        }
    }

    @Test func aClientOffering3To4GetsHelloProtocol3() async throws {
        try await Gateway.withGateway(Self.configuration()) { gateway in
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0xC6))
            #expect(node.hello.protocol == 3)
            let writer = try await TestSessions.connect(gateway, identity: try TestIdentities.make(0xC7)) { client in
                var params = client.operatorParams(scopes: ["operator.read"])
                params.minProtocol = 3
                return params
            }
            #expect(writer.hello.protocol == 3)
            await node.client.close()
            await writer.client.close()
        }
    }

    @Test func theProfileIsSelectableByNameButNotInTheDefaultRun() {
        #expect(GatewayProfile.named("protocol3") == .protocol3)
        #expect(!GatewayProfile.builtIn.contains(.protocol3))
        #expect(GatewayProfile.legacy.protocolVersion == 4, "the legacy profile keeps admitting today's 4..4 clients")
    }
}
