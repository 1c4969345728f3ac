import GatewayProtocol
@testable import MockGateway
import Testing

/// The deadlines the Gateway's timer reads from the machines in place (`nextDeadlineMs(after:)`):
/// each candidate is skipped when the floor (what the timer already ran) reaches it. (Break
/// tried: considering every invoke's deadline as a candidate of its own, instead of the earliest
/// one, fails `theNodeStateGivesItsEarliestInvokeTimeoutAfterTheFloor`.)
@Suite struct NextDeadlineTests {
    @Test func theNodeStateGivesItsEarliestInvokeTimeoutAfterTheFloor() throws {
        var state = NodeMachineTests.nodes()
        var ids = SeededRandom(seed: 9)
        #expect(state.nextDeadlineMs(after: nil) == nil)
        _ = try #require(NodeMachineTests.dispatch(&state, timeoutMs: 5_000, ids: &ids))
        _ = try #require(NodeMachineTests.dispatch(&state, timeoutMs: 0, ids: &ids))
        _ = try #require(NodeMachineTests.dispatch(&state, timeoutMs: 9_000, ids: &ids))
        let t0 = NodeMachineTests.t0
        #expect(state.nextDeadlineMs(after: nil) == t0 + 5_000)
        // The earliest invoke timeout is the one candidate: at or under the floor, none.
        #expect(state.nextDeadlineMs(after: t0 + 5_000) == nil)
        #expect(state.nextDeadlineMs(after: t0 + 4_999) == t0 + 5_000)
    }

    @Test func aWatchSessionIsDueAtItsPollTimeoutOrItsIdleExpiry() throws {
        var watch = WatchHarness()
        let token = try watch.connect(WatchTestDevice())
        #expect(watch.machine.nextDeadlineMs == watch.nowMs + WatchDirectRules.sessionIdleMs)
        #expect(watch.send("POST", WatchDirectRules.pollPath, token: token, requestId: 1) == .hold)
        #expect(watch.machine.nextDeadlineMs == watch.nowMs + WatchDirectRules.pollTimeoutMs)
    }
}
