import GatewayProtocol

extension NodeState {
    /// The earliest deadline of nodes and invokes after `floor` (when given): the earliest invoke
    /// timeout and the earliest due step of a `node.invoke` wake sequence, each one candidate.
    /// Read in place, no array built (the Gateway's timer asks after every frame).
    func nextDeadlineMs(after floor: Int64?) -> Int64? {
        var earliest = EarliestDeadline(after: floor)
        earliest.consider(EarliestDeadline.earliest(of: registry.pendingInvokes.values) { $0.deadlineMs })
        earliest.consider(EarliestDeadline.earliest(of: invokeWake.pending.values) { $0.flow.dueMs })
        return earliest.value
    }
}
