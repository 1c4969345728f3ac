import GatewayProtocol

/// A `node.event` as the node machine takes it: the request, where to answer, and the facts it
/// does not hold itself (the profile's reply style, the session's pairing generations from the
/// pairing store, the Gateway's own device id for push registrations).
struct NodeEventCall: Sendable, Hashable {
    /// The sending node.
    var nodeId: String
    /// The event and its payload.
    var request: NodeEventRequest
    /// Where the answer goes (its connection is the one the event came on).
    var reply: ReplyAddress
    /// How this Gateway generation answers `node.event`.
    var replyStyle: GatewayProfile.NodeEventReply
    /// The session's device id.
    var deviceId: String?
    /// The node pairing generation the session was admitted with.
    var sessionPairingGeneration: String?
    /// The device's node pairing generation now (`nil`: no node pairing any more).
    var currentPairingGeneration: String?
    /// The Gateway's device id (a relay push registration must name it).
    var gatewayDeviceId: String
}

/// A beacon's last-seen write that the node machine asks for (``GatewayEffect/persistLastSeen(_:)``):
/// the pairing store is the access surface's, so the actor writes it and reports the outcome with
/// ``NodeState/Input/lastSeenPersisted(_:stored:)``, which completes the reply.
struct LastSeenWrite: Sendable, Hashable {
    /// The device.
    var deviceId: String
    /// The normalised trigger (`lastSeenReason`).
    var reason: String
    /// When it was seen (Gateway time).
    var atMs: Int64
    /// The event being answered.
    var call: NodeEventCall
    /// The facts it was decided on.
    var facts: NodeEventFacts
}

/// `node.event` in the node machine: ``NodeEventRules`` decides, the machine applies what is
/// node state (the beacon throttle, input activity, push registrations), broadcasts
/// `node.presence`, logs, asks for the last-seen write and answers. A scripted beacon reply
/// (`Gateway.forceNextPresenceReply`) is a fault: ``FaultLayer/answerInstead(of:profile:)``
/// answers such a beacon before it reaches the machine.
extension NodeState {
    /// What the rules read about the sending session and node.
    func eventFacts(_ call: NodeEventCall, nowMs: Int64) -> NodeEventFacts {
        let current = registry.nodes[call.nodeId]
        let onCurrent = current?.connectionId == call.reply.connectionId
        var facts = NodeEventFacts(
            replyStyle: call.replyStyle, deviceId: call.deviceId, sessionPairingGeneration: call.sessionPairingGeneration,
            currentPairingGeneration: call.currentPairingGeneration, isCurrentConnection: onCurrent,
            accessibilityGranted: onCurrent && current?.permissions["accessibility"] == true,
            lastPresencePersistMs: nil, hasActivity: nodeActivity[call.nodeId] != nil, nowMs: nowMs)
        facts.lastPresencePersistMs = facts.presenceThrottleKey.flatMap { presencePersistStamps[$0] }
        return facts
    }

    /// Takes a `node.event`: logged, decided, applied; answered now, or after the last-seen write
    /// a beacon asks for (then that write is the last effect).
    mutating func nodeEvent(_ call: NodeEventCall, nowMs: Int64) -> [GatewayEffect] {
        let request = call.request
        var effects: [GatewayEffect] = [.log(.nodeEvent(nodeId: call.nodeId, event: request.event, payloadJSON: request.payloadJSON,
                                                        connectionId: call.reply.connectionId))]
        let facts = eventFacts(call, nowMs: nowMs)
        let decision = NodeEventRules.decide(event: request.event, payload: request.payload, facts: facts)
        for effect in decision.effects {
            if case .persistLastSeen(let deviceId, let reason) = effect {
                // The rules put the write last: the reply waits for its outcome.
                return effects + [.persistLastSeen(LastSeenWrite(deviceId: deviceId, reason: reason, atMs: nowMs, call: call,
                                                                 facts: facts))]
            }
            effects += apply(effect, call: call, nowMs: nowMs)
        }
        return effects + conclude(call, decision)
    }

    /// The last-seen write's outcome decides the beacon's reply (``NodeEventRules/afterPersist(_:facts:event:)``).
    mutating func lastSeenPersisted(_ write: LastSeenWrite, stored: Bool?) -> [GatewayEffect] {
        let decision = NodeEventRules.afterPersist(stored, facts: write.facts, event: write.call.request.event)
        var effects: [GatewayEffect] = []
        for effect in decision.effects { effects += apply(effect, call: write.call, nowMs: write.facts.nowMs) }
        return effects + conclude(write.call, decision)
    }

    /// One effect of the rules other than the write.
    private mutating func apply(_ effect: NodeEventEffect, call: NodeEventCall, nowMs: Int64) -> [GatewayEffect] {
        let nodeId = call.nodeId
        switch effect {
        case .persistLastSeen:
            return []
        case .stampPresenceThrottle(let key, let atMs):
            presencePersistStamps[key] = atMs
            return []
        case .recordActivity(let idleSeconds, let saturated):
            let activity = NodeActivity.updated(nodeActivity[nodeId], idleSeconds: idleSeconds, saturated: saturated, nowMs: nowMs)
            nodeActivity[nodeId] = activity
            return [.broadcast(event: GatewayEventName.nodePresence.rawValue, payload: activity.presencePayload(nodeId: nodeId),
                               stateVersion: nil)]
        case .clearActivity:
            nodeActivity.removeValue(forKey: nodeId)
            return [.broadcast(event: GatewayEventName.nodePresence.rawValue, payload: NodeActivity.clearedPresencePayload(nodeId: nodeId),
                               stateVersion: nil)]
        case .registerPush(let payload):
            // `push.apns.register` (docs/protocol.md §9.1): relay registrations count only when
            // they name this Gateway's identity.
            return push.handle(.register(nodeId: nodeId, payload: payload, gatewayDeviceId: call.gatewayDeviceId))
        }
    }

    /// A beacon's `presenceHandled` entry, then the answer.
    private func conclude(_ call: NodeEventCall, _ decision: NodeEventDecision) -> [GatewayEffect] {
        var effects: [GatewayEffect] = []
        if call.request.event == NodeEventName.presenceAlive.rawValue, let handled = decision.handledFlag, let reason = decision.reason {
            effects.append(.log(.presenceHandled(nodeId: call.nodeId, trigger: call.request.payload?["trigger"]?.stringValue,
                                                 handled: handled, reason: NodeEventReason(rawValue: reason))))
        }
        return effects + [call.reply.success(decision.reply)]
    }
}
