import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// The surface state values of the Gateway core as state machines: each input's transition and
/// the effects it returns, without an actor or a socket.
@Suite struct SurfaceStateTests {
    static let tick = GatewayEventName.tick.rawValue

    @Test func aTickIsDueOneIntervalAfterTheStartAndNotBefore() {
        var ticks = TickSchedule(intervalMs: 1_000, nowMs: 10_000)
        #expect(ticks.nextTickMs == 11_000)
        #expect(ticks.handle(.clock(nowMs: 10_999)).isEmpty)
        #expect(ticks.handle(.clock(nowMs: 11_000)) == [.broadcast(event: Self.tick, payload: ["ts": 11_000], stateVersion: nil)])
        #expect(ticks.nextTickMs == 12_000)
        // Nothing more is due at the same instant.
        #expect(ticks.handle(.clock(nowMs: 11_000)).isEmpty)
    }

    @Test func severalMissedIntervalsGiveOneTickAndKeepTheGrid() {
        var ticks = TickSchedule(intervalMs: 1_000, nowMs: 0)
        // 3.5 intervals late: one tick at the current time, the next one back on the grid.
        #expect(ticks.handle(.clock(nowMs: 4_500)) == [.broadcast(event: Self.tick, payload: ["ts": 4_500], stateVersion: nil)])
        #expect(ticks.nextTickMs == 5_000)
    }

    @Test func aRestartMovesTheNextTickOneIntervalFromNow() {
        var ticks = TickSchedule(intervalMs: 1_000, nowMs: 0)
        #expect(ticks.handle(.restart(nowMs: 7_300)).isEmpty)
        #expect(ticks.nextTickMs == 8_300)
        #expect(ticks.handle(.clock(nowMs: 8_000)).isEmpty)
    }

    @Test func aPushRegistrationCountsOnlyForThisGatewayOrWithAToken() {
        var push = PushState()
        let foreign: JSONValue = ["transport": "relay", "gatewayDeviceId": "other", "relayHandle": "h"]
        #expect(push.handle(.register(nodeId: "n1", payload: foreign, gatewayDeviceId: "gw"))
            == [.log(.pushRegistered(nodeId: "n1", transport: PushTransport(rawValue: "relay"), accepted: false, gatewayDeviceId: "other"))])
        #expect(push.registrations.isEmpty)
        let relay: JSONValue = ["transport": "relay", "gatewayDeviceId": "gw", "relayHandle": "h"]
        _ = push.handle(.register(nodeId: "n1", payload: relay, gatewayDeviceId: "gw"))
        #expect(push.registrations["n1"] == relay)
        // A direct registration needs a token.
        _ = push.handle(.register(nodeId: "n2", payload: ["token": ""], gatewayDeviceId: "gw"))
        #expect(push.registrations["n2"] == nil)
        _ = push.handle(.register(nodeId: "n2", payload: ["token": "abc"], gatewayDeviceId: "gw"))
        #expect(push.registrations["n2"] == ["token": "abc"])
    }

    @Test func aDeliveryIsKeptAndAnnounced() {
        var push = PushState()
        let delivery = PushDelivery(nodeId: "n", transport: "direct", pushType: "alert", bodyJSON: "{}", gatewayDeviceId: nil,
                                    signedAtMs: nil, signature: nil, sendGrant: nil, accepted: true)
        #expect(push.handle(.delivered(delivery))
            == [.log(.pushSent(nodeId: "n", transport: PushTransport(rawValue: "direct"), pushType: "alert", accepted: true))])
        #expect(push.deliveries == [delivery])
    }
}
