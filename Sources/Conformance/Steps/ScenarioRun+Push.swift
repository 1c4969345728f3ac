import GatewayProtocol
import MockGateway

/// Steps of the push scenarios: a real push from the Gateway reaching the client under test.
extension ScenarioRun {
    /// Wakes the client with a real silent push: the Gateway sends a background push through the
    /// node's stored registration (``Gateway/wakeNode(nodeId:reason:force:)``: the fake relay or the
    /// APNs stand-in) and, when the transport accepted it, the push reaches the client as it
    /// would reach a phone: the `background-wake` stimulus with trigger `silent_push` and the
    /// push's APNs payload as `push` (``Stimulus/pushWake(payload:)``), through whichever driver
    /// runs the client (in process, a process speaking the adapter protocol, a person).
    ///
    /// A push the transport refused, or one that could not be sent because the node has no
    /// registration, does not reach the client: the step returns the attempt without a stimulus,
    /// and the scenario decides what that means.
    /// - Parameters:
    ///   - nodeId: the node to wake (its device id).
    ///   - gateway: which Gateway sends it (the run's by default).
    ///   - reason: the wake reason the push names.
    /// - Returns: the attempt (``NodeWakeAttempt/isDelivered`` says whether the client got it).
    /// - Throws: `ScenarioUnsupported` when the client does not support `background-wake`,
    ///   `ScenarioTimedOut` when it does not answer the stimulus, `HarnessError` when it answers
    ///   with an error.
    @discardableResult
    public func wakeThroughPush(nodeId: String, on gateway: Gateway? = nil, reason: String = GatewayMethod.nodeInvoke.rawValue) async throws
        -> NodeWakeAttempt
    {
        let gateway = gateway ?? self.gateway
        let attempt = await gateway.wakeNode(nodeId: nodeId, reason: reason)
        Self.note(attempt.summary, on: gateway)
        guard attempt.isDelivered, let payload = attempt.delivery?.payload else {
            Self.note("the push does not reach the client (\(attempt.path.rawValue))", on: gateway)
            return attempt
        }
        try await client.stimulate(.pushWake(payload: payload))
        return attempt
    }

    /// Hands the next push the Gateway sends to `nodeId` by itself (the wake or the reopen nudge of
    /// an operator's `node.invoke`, docs/protocol.md §6.9.1) to the client, as the device would
    /// receive it: waits from `cursor` for a push of `pushType` that the transport accepted, then
    /// sends the `background-wake` stimulus with its APNs payload (``Stimulus/pushWake(payload:)``).
    /// - Returns: the delivery.
    /// - Throws: `ScenarioTimedOut` when no such push comes within `within`.
    @discardableResult
    public func deliverGatewayPush(nodeId: String, pushType: String, from cursor: EventCursor,
                                   within: Duration = .seconds(20)) async throws -> PushDelivery {
        let matcher = EventMatcher<Bool>("an accepted \(pushType) push to \(nodeId)") { event in
            if case .pushSent(nodeId, _, pushType, true) = event { true } else { nil }
        }
        _ = try await waitForEvent(matcher, within: within, from: cursor)
        let deliveries = await gateway.pushDeliveries()
        guard let delivery = deliveries.last(where: { $0.nodeId == nodeId && $0.pushType == pushType && $0.accepted }),
              let payload = delivery.payload else {
            throw ScenarioFailure("the Gateway recorded the \(pushType) push it announced", expected: "a recorded push",
                                  actual: "none")
        }
        Self.note("the \(pushType) push to \(nodeId) reaches the client", on: gateway)
        try await client.stimulate(.pushWake(payload: payload))
        return delivery
    }
}
