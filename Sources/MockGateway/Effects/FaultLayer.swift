import GatewayProtocol
import WebSocketTransport

/// Faults that change how the Gateway answers, consumed as they apply. Only ``FaultLayer``
/// reads them.
struct FaultPlan: Sendable, Hashable {
    /// Methods whose next response is dropped, with whether the connection is then cut.
    var dropNextResponse: [String: Bool] = [:]
    /// A delay added before every response (real time).
    var responseDelay: Duration?
    /// Ticks are not sent while `true`.
    var ticksStopped = false
    /// How many of the next outbound event frames are sent as binary messages.
    var nextEventsAsBinary = 0
    /// How many of the next outbound event frames are sent in three fragments.
    var nextEventsFragmented = 0
    /// The reply the next `node.presence.alive` gets instead of the server algorithm.
    var forcedPresenceReply: PresenceForcedReply?
    /// How many of the next connections get a `connect.challenge` without `ts`.
    var challengesWithoutTs = 0
    /// The drain in force: requests other than continuations are refused (`GatewayDrain`).
    var drain: GatewayDrain?
    /// How the push transport answers the next send instead of accepting it
    /// (`Gateway.refuseNextPush(status:reason:)`).
    var pushRefusal: PushRefusal?
}

/// A fault the scripting API arms (``FaultLayer/arm(_:)``).
enum FaultArm: Sendable, Hashable {
    /// Drop the next response to a method, then cut the connection when `cut`.
    case dropNextResponse(method: String, cut: Bool)
    /// Delay every response (`nil`: no delay).
    case responseDelay(Duration?)
    /// Stop or resume ticks.
    case ticksStopped(Bool)
    /// Send the next `count` events as binary messages.
    case eventsAsBinary(Int)
    /// Send the next `count` events in three fragments with pings between them.
    case eventsFragmented(Int)
    /// Send the next `count` challenges without `ts`.
    case challengesWithoutTs(Int)
    /// Answer the next `node.presence.alive` so.
    case presenceReply(PresenceForcedReply)
    /// The push transport refuses the next send so.
    case pushRefusal(PushRefusal)
    /// Start (or end, `nil`) a drain.
    case drain(GatewayDrain?)
}

/// The one place faults act: a value that holds the armed ``FaultPlan`` and rewrites what the
/// rules decided (``GatewayEffect``s) before `GatewayCore.perform(_:)` runs it: a response
/// dropped (and the connection cut) or delayed, events sent as binary or fragmented, a challenge
/// without `ts`, ticks held back, a request refused by a drain, a presence beacon answered with a
/// scripted reply, a push refused. No rule reads the plan; the rules stay what a healthy Gateway
/// does.
struct FaultLayer: Sendable {
    /// The armed faults.
    private(set) var plan = FaultPlan()

    // MARK: - Arming

    /// Arms a fault; returns the announcement (a `fault` transcript line and event), nothing when
    /// the fault was already so (a drain).
    mutating func arm(_ fault: FaultArm) -> [GatewayEffect] {
        let text: String
        switch fault {
        case .dropNextResponse(let method, let cut):
            plan.dropNextResponse[method] = cut
            text = "drop the next response to \(method)\(cut ? " and cut the connection" : "")"
        case .responseDelay(let delay):
            plan.responseDelay = delay
            text = delay.map { "delay responses by \($0)" } ?? "respond without delay"
        case .ticksStopped(let stopped):
            plan.ticksStopped = stopped
            text = stopped ? "ticks stopped" : "ticks resumed"
        case .eventsAsBinary(let count):
            plan.nextEventsAsBinary = max(0, count)
            text = "send the next \(count) event\(count == 1 ? "" : "s") as binary messages"
        case .eventsFragmented(let count):
            plan.nextEventsFragmented = max(0, count)
            text = "fragment the next \(count) event\(count == 1 ? "" : "s") into 3 frames with pings between"
        case .challengesWithoutTs(let count):
            plan.challengesWithoutTs = max(0, count)
            text = "send the next \(count) \(GatewayEventName.connectChallenge)\(count == 1 ? "" : "s") without ts"
        case .presenceReply(let reply):
            plan.forcedPresenceReply = reply
            text = "answer the next \(NodeEventName.presenceAlive) with handled:\(reply.handled) reason:\(reply.reason)"
        case .pushRefusal(let refusal):
            plan.pushRefusal = refusal
            text = "the push transport refuses the next send with \(refusal.status) \(refusal.reason)"
        case .drain(let drain):
            guard plan.drain != drain else { return [] }
            plan.drain = drain
            text = drain.map { "drain (\($0.reason)): refuse new work with UNAVAILABLE, retryAfterMs \(GatewayDrain.retryAfterMs)" }
                ?? "drain ended: serving requests again"
        }
        return [.noteFault(text, on: "-")]
    }

    /// The drain in force, if any.
    var drain: GatewayDrain? { plan.drain }

    /// Whether ticks are held back: the tick schedule leaves them out of the next deadline, so
    /// that virtual time does not stop at ticks nobody gets.
    var holdsTicks: Bool { plan.ticksStopped }

    // MARK: - Rewriting effects

    /// What actually happens for `effect` under the armed faults (consuming the one-off ones it
    /// uses). A `send` reaches the layer only when its connection is open.
    mutating func rewrite(_ effect: GatewayEffect) -> [GatewayEffect] {
        switch effect {
        case .send(.event(let event), let connectionId, var wire):
            if event.event == GatewayEventName.connectChallenge.rawValue {
                guard plan.challengesWithoutTs > 0 else { return [effect] }
                // A malformed challenge (a client must treat a challenge without an integer `ts`
                // as invalid: docs gateway/protocol.md "Handshake").
                plan.challengesWithoutTs -= 1
                var stripped = event
                if case .object(var members)? = event.payload {
                    members.removeValue(forKey: "ts")
                    stripped.payload = .object(members)
                }
                return [.noteFault("\(GatewayEventName.connectChallenge) without ts", on: connectionId),
                        .send(.event(stripped), to: connectionId, wire: wire)]
            }
            if plan.nextEventsAsBinary > 0 {
                plan.nextEventsAsBinary -= 1
                wire.binary = true
            }
            if plan.nextEventsFragmented > 0 {
                plan.nextEventsFragmented -= 1
                wire.fault = SendFault.fragmented(into: 3, interleavingPings: true)
            }
            return [.send(.event(event), to: connectionId, wire: wire)]
        case .respond(let response, let method, let connectionId, var wire):
            if let cut = plan.dropNextResponse.removeValue(forKey: method) {
                return [.dropResponse(response, method: method, to: connectionId),
                        .log(.faultInjected(description: "dropped the response to \(method) on \(connectionId)"))]
                    + (cut ? [.abort(connectionId)] : [])
            }
            if let delay = plan.responseDelay { wire.fault = SendFault(delay: delay) }
            return [.respond(response, method: method, to: connectionId, wire: wire)]
        case .respondJSON(let json, let method, let errorCode, let connectionId, var wire):
            if let delay = plan.responseDelay { wire.fault = SendFault(delay: delay) }
            return [.respondJSON(json, method: method, errorCode: errorCode, to: connectionId, wire: wire)]
        case .broadcast(let event, _, _) where event == GatewayEventName.tick.rawValue && plan.ticksStopped:
            return []
        default:
            return [effect]
        }
    }

    // MARK: - Answering instead of the rules

    /// A request of an authenticated session the fault layer answers before it is routed: a
    /// drain refuses new work (``GatewayDrain``); `nil` lets the request through.
    func intercept(_ request: RequestFrame, on connectionId: String) -> [GatewayEffect]? {
        guard let drain = plan.drain, !drain.admits(method: request.method) else { return nil }
        return [.respond(.failure(id: request.id, error: drain.refusal(method: request.method)),
                         method: request.method, to: connectionId)]
    }

    /// A routed call the fault layer answers instead of its handler: a `node.presence.alive`
    /// beacon while a scripted reply is armed (`Gateway.forceNextPresenceReply`) gets that reply
    /// and changes nothing (`replyStyle`: the profile's `node.event` replies). `nil` lets the
    /// handler run.
    mutating func answerInstead(of call: MethodCall, replyStyle: GatewayProfile.NodeEventReply) -> [GatewayEffect]? {
        guard call.method == GatewayMethod.nodeEvent.rawValue, let forced = plan.forcedPresenceReply,
              let request = NodeEventRequest(params: call.params), request.event == NodeEventName.presenceAlive.rawValue
        else { return nil }
        plan.forcedPresenceReply = nil
        let reply: JSONValue = replyStyle == .structured
            ? ["ok": true, "event": .string(request.event), "handled": .bool(forced.handled), "reason": .string(forced.reason)]
            : ["ok": true]
        return [
            .log(.nodeEvent(nodeId: call.nodeId, event: request.event, payloadJSON: request.payloadJSON,
                            connectionId: call.connectionId)),
            .log(.presenceHandled(nodeId: call.nodeId, trigger: request.payload?["trigger"]?.stringValue,
                                  handled: forced.handled, reason: NodeEventReason(rawValue: forced.reason))),
            .respond(.success(id: call.request.id, payload: reply), method: call.method, to: call.connectionId),
        ]
    }

    /// A push as the transport answers it: an armed refusal (`Gateway.refuseNextPush`) turns
    /// the next accepted push into a refused one, as APNs answers a token no longer valid.
    mutating func rewrite(_ delivery: PushDelivery) -> PushDelivery {
        guard delivery.accepted, let refusal = plan.pushRefusal else { return delivery }
        plan.pushRefusal = nil
        var refused = delivery
        refused.accepted = false
        refused.status = refusal.status
        refused.reason = refusal.reason
        return refused
    }
}
