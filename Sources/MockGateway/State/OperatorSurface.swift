import GatewayProtocol

/// Approvals and questions (``OperatorState``, pure), and the requests and subscriptions of the
/// operator sessions around them: the operator surface's state.
struct OperatorSurface: Sendable {
    /// Approvals, questions and their handlers.
    var state: OperatorState
    /// Requests parked until a record resolves (`waitAnswer`, two-phase exec approvals).
    var waiters: [PendingOperatorWaiter] = []
    /// Races armed by the scripting API (`Gateway.armRace`).
    var armedRaces: [RaceArm] = []
    /// Who replays which approvals (`sessions.messages.subscribe`).
    var approvalSubscriptions = ApprovalSubscriptions()
}
