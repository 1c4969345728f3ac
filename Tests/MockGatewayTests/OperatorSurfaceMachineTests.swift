import GatewayProtocol
@testable import MockGateway
import Testing

/// The operator surface as a state machine: outcomes, operator effects, the clock and closed
/// connections in, Gateway effects out, no socket. (Break tried: sending an `adminOrDevices` event
/// to every operator fails `anAnswerGoesOutThenItsEventsToTheirAudience`.)
@Suite struct OperatorSurfaceMachineTests {
    static func surface() -> OperatorSurface {
        OperatorSurface(state: OperatorState(features: OperatorProfileFeatures(profile: .current), random: SeededRandom(seed: 1)))
    }

    static let admin = OperatorListener(connectionId: "c1", role: "operator", scopes: ["operator.admin"], deviceId: "d1")
    static let reader = OperatorListener(connectionId: "c2", role: "operator", scopes: ["operator.approvals"], deviceId: "d2")
    static let other = OperatorListener(connectionId: "c3", role: "operator", scopes: ["operator.approvals"], deviceId: "d3")

    @Test func anAnswerGoesOutThenItsEventsToTheirAudience() {
        var surface = Self.surface()
        let event = OperatorEvent(name: GatewayEventName.execApprovalRequested.rawValue, payload: ["id": "a1"],
                                  audience: .adminOrDevices(["d2"]))
        let outcome = OperatorOutcome(.success(["ok": true]), effects: [.publish(event)])
        let effects = surface.handle(.answered(outcome, requestId: "r1", method: "exec.approval.request", connectionId: "c2"),
                                     to: [Self.admin, Self.reader, Self.other])
        #expect(effects == [
            .respond(.success(id: "r1", payload: ["ok": true]), method: "exec.approval.request", to: "c2"),
            .sendSequenced(event: event.name, payload: event.payload, to: "c1"),
            .sendSequenced(event: event.name, payload: event.payload, to: "c2"),
        ])
    }

    @Test func aParkedRequestGetsItsInterimAnswerThenItsTimeoutAnswer() {
        var surface = Self.surface()
        let waiter = OperatorWaiter(subject: .question(id: "q1"), purpose: .questionWaitAnswer(includeResolutionId: false),
                                    interimReply: ["status": "accepted"], deadlineMs: 500, timeoutReply: ["status": "pending"])
        let parked = surface.handle(.answered(OperatorOutcome(.deferred(waiter)), requestId: "r1", method: "question.waitAnswer",
                                              connectionId: "c1"), to: [])
        #expect(parked == [.respond(.success(id: "r1", payload: ["status": "accepted"]), method: "question.waitAnswer", to: "c1")])
        #expect(surface.nextDeadlineMs(after: nil) == 500)
        // What the timer at 500 leaves is not due again.
        #expect(surface.nextDeadlineMs(after: 500) == nil)
        #expect(surface.handle(.clock(nowMs: 499), to: []).isEmpty)
        #expect(surface.handle(.clock(nowMs: 500), to: []) == [
            .respond(.success(id: "r1", payload: ["status": "pending"]), method: "question.waitAnswer", to: "c1"),
        ])
        #expect(surface.waiters.isEmpty)
    }

    @Test func aClosedConnectionsParkedRequestsGoUnanswered() {
        var surface = Self.surface()
        let waiter = OperatorWaiter(subject: .approval(id: "a1"), purpose: .execApprovalWaitDecision, deadlineMs: 100,
                                    timeoutReply: .null)
        _ = surface.handle(.answered(OperatorOutcome(.deferred(waiter)), requestId: "r1", method: "exec.approval.waitDecision",
                                     connectionId: "c1"), to: [])
        _ = surface.handle(.answered(OperatorOutcome(.deferred(waiter)), requestId: "r2", method: "exec.approval.waitDecision",
                                     connectionId: "c2"), to: [])
        #expect(surface.handle(.connectionClosed("c1"), to: []).isEmpty)
        #expect(surface.waiters.map(\.connectionId) == ["c2"])
        #expect(surface.handle(.shutdown, to: []).isEmpty)
        #expect(surface.waiters.isEmpty)
    }
}
