import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// A connect refusal is a response like any other: `request.handled` is logged for it and
/// `delayResponses` holds it back (LIFE-003 can slow a refusal).
@Suite struct RefusalResponseTests {
    @Test func aDelayedRefusalIsLoggedAndHeldBackLikeAnyResponse() async throws {
        try await Gateway.withGateway { gateway in
            await gateway.delayResponses(by: .milliseconds(300))
            let cursor = gateway.events.count
            let client = try await TestClient.open(gateway.url, identity: try TestIdentities.make(0xC4))
            // A node with a wrong protocol range is refused.
            let response = try await client.connect(client.connectParams(minProtocol: 1, maxProtocol: 2))
            #expect(!response.ok)
            let handled = await gateway.waitForEvent(from: cursor, timeout: .seconds(10)) { event in
                if case .requestHandled(_, "connect", false, _) = event { return true }
                return false
            }
            #expect(handled != nil, "no request.handled event for the refused connect")
            let refusal = gateway.transcript.entries.first { entry in
                entry.kind == .outbound && entry.message?["ok"]?.boolValue == false
            }
            #expect(refusal?.fault?.delayMs == 300, "the refusal was not held back: \(String(describing: refusal?.fault))")
            _ = try await client.closed()
        }
    }
}
