import GatewayProtocol

/// An authenticated session as the operator surface addresses it: who may receive its events.
struct OperatorListener: Sendable, Hashable {
    /// The connection.
    var connectionId: String
    /// The session's role (`operator`, `node`, ...).
    var role: String
    /// The session's scopes.
    var scopes: [String]
    /// The session's device, when it has one.
    var deviceId: String?
}

/// Approvals and questions (``OperatorState``, pure), and the requests and subscriptions of the
/// operator sessions around them: the operator surface's state, and a state machine over it.
/// The handlers of `OperatorState` decide a request (an ``OperatorOutcome``); ``handle(_:to:)``
/// turns outcomes, settlements, the clock and closed connections into ``GatewayEffect``s: the
/// answer, parked requests and their later answers, the operator events to the sessions that may
/// see them.
struct OperatorSurface: Sendable {
    /// Approvals, questions and their handlers.
    var state: OperatorState
    /// Requests parked until a record resolves (`waitAnswer`, two-phase exec approvals).
    var waiters: [PendingOperatorWaiter] = []
    /// Races armed by the scripting API (`Gateway.armRace`).
    var armedRaces: [RaceArm] = []
    /// Who replays which approvals (`sessions.messages.subscribe`).
    var approvalSubscriptions = ApprovalSubscriptions()

    /// What moves the operator surface.
    enum Input: Sendable {
        /// A handler decided `request` (of `method`, on `connectionId`): its answer now, or the
        /// request parked (with an interim answer for a two-phase request), then its effects.
        case answered(OperatorOutcome, requestId: String, method: String, connectionId: String)
        /// Effects of a scripted operation (the scripting API, a race's other surface, a replay's
        /// expiry).
        case effects([OperatorEffect])
        /// The clock reached `nowMs`: records expire, then parked requests whose deadline passed
        /// get their timeout answer.
        case clock(nowMs: Int64)
        /// A connection closed: its parked requests and approval subscriptions go.
        case connectionClosed(String)
        /// The Gateway restarts (a new process epoch): pending approvals are cancelled
        /// (`gateway-restart`, docs/protocol.md §7.5), questions (memory only) are gone with a
        /// fresh store drawing from `questionRandom`, and nobody is left waiting.
        case restart(nowMs: Int64, questionRandom: SeededRandom)
        /// The Gateway stops: parked requests are dropped unanswered.
        case shutdown
    }

    /// The earliest deadline of the surface after `floor` (when given): the records' next
    /// expiry, and each parked request's deadline. Read in place; allocates nothing.
    func nextDeadlineMs(after floor: Int64?) -> Int64? {
        var earliest = EarliestDeadline(after: floor)
        earliest.consider(state.nextDeadlineMs)
        for pending in waiters { earliest.consider(pending.waiter.deadlineMs) }
        return earliest.value
    }

    /// Applies an input; `listeners` are the sessions open now, by connection id (who events go
    /// to).
    mutating func handle(_ input: Input, to listeners: [OperatorListener]) -> [GatewayEffect] {
        switch input {
        case .answered(let outcome, let requestId, let method, let connectionId):
            var effects: [GatewayEffect] = []
            switch outcome.reply {
            case .success(let payload):
                effects.append(.respond(.success(id: requestId, payload: payload), method: method, to: connectionId))
            case .failure(let error):
                effects.append(.respond(.failure(id: requestId, error: error), method: method, to: connectionId))
            case .deferred(let waiter):
                if let interim = waiter.interimReply {
                    effects.append(.respond(.success(id: requestId, payload: interim), method: method, to: connectionId))
                }
                waiters.append(PendingOperatorWaiter(connectionId: connectionId, requestId: requestId, method: method, waiter: waiter))
            }
            return effects + apply(outcome.effects, to: listeners)
        case .effects(let operatorEffects):
            return apply(operatorEffects, to: listeners)
        case .clock(let nowMs):
            var effects = apply(state.expire(nowMs: nowMs), to: listeners)
            let (due, rest) = waiters.partitioned { $0.waiter.deadlineMs.map { $0 <= nowMs } ?? false }
            waiters = rest
            for pending in due {
                effects.append(.respond(.success(id: pending.requestId, payload: pending.waiter.timeoutReply ?? .null),
                                        method: pending.method, to: pending.connectionId))
            }
            return effects
        case .connectionClosed(let connectionId):
            waiters.removeAll { $0.connectionId == connectionId }
            approvalSubscriptions.drop(connectionId: connectionId)
            return []
        case .restart(let nowMs, let questionRandom):
            let effects = apply(state.approvals.cancelAllPendingForRestart(nowMs: nowMs), to: listeners)
            state.questions = QuestionStore(random: questionRandom)
            waiters = []
            return effects
        case .shutdown:
            waiters = []
            return []
        }
    }

    /// Operator effects as Gateway effects: events to their audience, parked requests answered
    /// when their record settles, record changes logged.
    private mutating func apply(_ operatorEffects: [OperatorEffect], to listeners: [OperatorListener]) -> [GatewayEffect] {
        var effects: [GatewayEffect] = []
        for effect in operatorEffects {
            switch effect {
            case .publish(let event):
                for listener in listeners where receives(event, listener) {
                    effects.append(.sendSequenced(event: event.name, payload: event.payload, to: listener.connectionId))
                }
            case .settled(let settlement):
                let subject: OperatorWaiter.Subject
                switch settlement {
                case .approval(let record): subject = .approval(id: record.id)
                case .question(let record, _): subject = .question(id: record.id)
                }
                let (due, rest) = waiters.partitioned { $0.waiter.subject == subject }
                waiters = rest
                for pending in due {
                    guard let reply = pending.waiter.finalReply(for: settlement) else { continue }
                    effects.append(.respond(.success(id: pending.requestId, payload: reply), method: pending.method,
                                            to: pending.connectionId))
                }
            case .observed(let recordEvent):
                effects.append(.log(.operatorRecord(recordEvent)))
            }
        }
        return effects
    }

    /// Whether a session gets an operator event: the scope gate (docs/protocol.md §2.6), then
    /// the event's audience.
    private func receives(_ event: OperatorEvent, _ listener: OperatorListener) -> Bool {
        guard EventScopeGate.allows(event: event.name, role: listener.role, scopes: listener.scopes) else { return false }
        switch event.audience {
        case .broadcast, .sessionOrBroadcast:
            return true
        case .adminOrDevices(let deviceIds):
            return listener.scopes.contains(OperatorScope.admin.rawValue) || listener.deviceId.map(deviceIds.contains) == true
        case .approvalSubscribers(let sessionKey):
            // Only sessions subscribed to the key with `includeApprovals:true` that may see
            // approvals get it (docs/protocol.md §7.3, ApprovalSubscriptions).
            return approvalSubscriptions.isSubscribed(connectionId: listener.connectionId, key: sessionKey)
                && ApprovalSubscriptions.mayReceiveApprovals(scopes: listener.scopes, deviceId: listener.deviceId)
        }
    }
}
