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
    /// How long the next `node.invoke` wake sequence holds its dispatch once it finds the node
    /// (`Gateway.holdNextWakeDispatch(for:)`), 0 for none.
    var wakeDispatchHoldMs: Int64 = 0
    /// How the next valid `chat.send` requests lose their ack, oldest first (`cut`: the
    /// connection is cut too).
    var chatAckDrops: [ChatAckDropArm] = []
    /// After this many more acknowledged `chat.send`s the connection is cut (mid-flush).
    var chatCutAfterSends: Int?
    /// What happens to the answer of a request already routed (by connection and request id):
    /// a `chat.send` whose ack is lost or followed by the mid-flush cut.
    var answerFates: [AnsweredRequest: AnswerFate] = [:]
    /// Connects are refused `UNAVAILABLE` (with `retryAfterMs`) and closed 1013 while `true`.
    var startingUp = false
    /// The `retryAfterMs` of those refusals.
    var startingUpRetryAfterMs = ConnectAdmission.defaultStartingUpRetryAfterMs
    /// `seq` numbers to skip before each connection's next sequenced event (a one-off gap).
    var pendingSeqSkips: [String: Int] = [:]
    /// How far each connection's `seq` is ahead of the Gateway's count, after its gaps.
    var seqOffsets: [String: Int] = [:]
}

/// An armed `chat.send` ack drop.
struct ChatAckDropArm: Sendable, Hashable {
    /// Before or after the request is applied.
    var drop: ChatAckDrop
    /// Whether the connection is cut after the lost ack.
    var cut: Bool
}

/// A request on one connection.
struct AnsweredRequest: Sendable, Hashable {
    /// The connection it came on.
    var connectionId: String
    /// Its request id.
    var requestId: String
}

/// What the fault layer does to the answer of a request it marked when it was routed.
enum AnswerFate: Sendable, Hashable {
    /// The answer is lost (`text` says so in the transcript), the connection cut when `cut`.
    case lose(text: String, cut: Bool)
    /// The answer goes out, then the connection is cut (`text`: the fault line).
    case cutAfter(text: String)
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
    /// The next `node.invoke` wake sequence holds its dispatch this long once it finds the node.
    case wakeDispatchHold(ms: Int64)
    /// Start (or end, `nil`) a drain.
    case drain(GatewayDrain?)
    /// Lose the ack of the next valid `chat.send` (after applying it, or the whole request
    /// before), then cut the connection when `cut` (always before applying).
    case chatAckDrop(ChatAckDrop, cut: Bool)
    /// Cut the connection right after the `count`th next acknowledged `chat.send` (0: no cut).
    case chatCut(afterSends: Int)
    /// Skip `count` `seq` numbers before the next sequenced event of each of `connections`.
    case seqSkip(Int, connections: [String])
    /// Refuse connects as starting up, or stop doing so.
    case startingUp(Bool)
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

    /// A layer with nothing armed; `startingUp` as the Gateway starts (`GatewayConfiguration`).
    init(startingUp: Bool = false, startingUpRetryAfterMs: Int = ConnectAdmission.defaultStartingUpRetryAfterMs) {
        plan.startingUp = startingUp
        plan.startingUpRetryAfterMs = startingUpRetryAfterMs
    }

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
        case .wakeDispatchHold(let ms):
            plan.wakeDispatchHoldMs = max(0, ms)
            text = "the next node.invoke that finds its woken node holds the dispatch for \(ms) ms"
        case .pushRefusal(let refusal):
            plan.pushRefusal = refusal
            text = "the push transport refuses the next send with \(refusal.status) \(refusal.reason)"
        case .drain(let drain):
            guard plan.drain != drain else { return [] }
            plan.drain = drain
            text = drain.map { "drain (\($0.reason)): refuse new work with UNAVAILABLE, retryAfterMs \(GatewayDrain.retryAfterMs)" }
                ?? "drain ended: serving requests again"
        case .chatAckDrop(let drop, let cut):
            plan.chatAckDrops.append(ChatAckDropArm(drop: drop, cut: cut || drop == .beforeApplying))
            switch drop {
            case .afterApplying: text = "apply the next chat.send but drop its ack\(cut ? " and cut the connection" : "")"
            case .beforeApplying: text = "lose the next chat.send before applying it and cut the connection"
            }
        case .chatCut(let count):
            plan.chatCutAfterSends = count > 0 ? count : nil
            text = count > 0 ? "cut the connection after the next \(count) acknowledged chat.send" : "no mid-flush cut"
        case .seqSkip(let count, let connections):
            for connectionId in connections { plan.pendingSeqSkips[connectionId] = max(0, count) }
            text = "skip \(count) seq numbers"
        case .startingUp(let on):
            plan.startingUp = on
            text = on ? "starting up (UNAVAILABLE, 1013)" : "started"
        }
        return [.noteFault(text, on: "-")]
    }

    /// The drain in force, if any.
    var drain: GatewayDrain? { plan.drain }

    /// Whether ticks are held back: the tick schedule leaves them out of the next deadline, so
    /// that virtual time does not stop at ticks nobody gets.
    var holdsTicks: Bool { plan.ticksStopped }

    /// Whether connects are refused as starting up.
    var startingUp: Bool { plan.startingUp }

    /// The admission's configuration with the Gateway's start-up state: while starting up, the
    /// admission refuses a schema-valid connect `UNAVAILABLE` with `retryAfterMs` before it
    /// negotiates anything (`ConnectAdmission`, stage 2).
    func admission(_ configuration: ConnectAdmission.Configuration) -> ConnectAdmission.Configuration {
        var configuration = configuration
        configuration.isStartingUp = plan.startingUp
        configuration.startingUpRetryAfterMs = plan.startingUpRetryAfterMs
        return configuration
    }

    /// Forgets what was armed for a connection that closed.
    mutating func forget(connectionId: String) {
        plan.pendingSeqSkips.removeValue(forKey: connectionId)
        plan.seqOffsets.removeValue(forKey: connectionId)
        for key in plan.answerFates.keys where key.connectionId == connectionId { plan.answerFates.removeValue(forKey: key) }
    }

    // MARK: - Rewriting effects

    /// What actually happens for `effect` under the armed faults (consuming the one-off ones it
    /// uses). A `send` reaches the layer only when its connection is open.
    mutating func rewrite(_ effect: GatewayEffect) -> [GatewayEffect] {
        rewritten(effect) ?? [effect]
    }

    /// ``rewrite(_:)`` without building an array for the common case: `nil` when `effect` goes
    /// out as it is (the one-off faults it uses are consumed all the same). The effect runner
    /// calls this for every frame.
    mutating func rewritten(_ effect: GatewayEffect) -> [GatewayEffect]? {
        switch effect {
        case .send(.event(let event), let connectionId, var wire):
            if event.event == GatewayEventName.connectChallenge.rawValue {
                guard plan.challengesWithoutTs > 0 else { return nil }
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
            var event = event
            var changed = false
            if let seq = event.seq {
                // A gap: this and every later sequenced event of the connection is numbered
                // `skip` higher than the Gateway counted.
                if !plan.pendingSeqSkips.isEmpty, let skip = plan.pendingSeqSkips.removeValue(forKey: connectionId), skip > 0 {
                    plan.seqOffsets[connectionId, default: 0] += skip
                }
                if !plan.seqOffsets.isEmpty, let offset = plan.seqOffsets[connectionId] {
                    event.seq = seq + offset
                    changed = true
                }
            }
            if plan.nextEventsAsBinary > 0 {
                plan.nextEventsAsBinary -= 1
                wire.binary = true
                changed = true
            }
            if plan.nextEventsFragmented > 0 {
                plan.nextEventsFragmented -= 1
                wire.fault = SendFault.fragmented(into: 3, interleavingPings: true)
                changed = true
            }
            return changed ? [.send(.event(event), to: connectionId, wire: wire)] : nil
        case .respond(let response, let method, let connectionId, let wire):
            let fate = plan.answerFates.isEmpty ? nil
                : plan.answerFates.removeValue(forKey: AnsweredRequest(connectionId: connectionId, requestId: response.id))
            switch fate {
            case .lose(let text, let cut)?:
                return [.loseAnswer(method: method, to: connectionId, text: text)] + (cut ? [.abort(connectionId)] : [])
            case .cutAfter(let text)?:
                return (rewriteResponse(response, method: method, to: connectionId, wire: wire) ?? [effect])
                    + [.noteFault(text, on: connectionId), .abort(connectionId)]
            case nil:
                return rewriteResponse(response, method: method, to: connectionId, wire: wire)
            }
        case .respondJSON(let json, let method, let errorCode, let connectionId, var wire):
            guard let delay = plan.responseDelay else { return nil }
            wire.fault = SendFault(delay: delay)
            return [.respondJSON(json, method: method, errorCode: errorCode, to: connectionId, wire: wire)]
        case .broadcast(let event, _, _) where event == GatewayEventName.tick.rawValue && plan.ticksStopped:
            return []
        default:
            return nil
        }
    }

    /// A response under the response faults: dropped (and the connection cut) or delayed; `nil`
    /// when it goes out as it is.
    private mutating func rewriteResponse(_ response: ResponseFrame, method: String, to connectionId: String,
                                          wire: WireTreatment) -> [GatewayEffect]? {
        var wire = wire
        if !plan.dropNextResponse.isEmpty, let cut = plan.dropNextResponse.removeValue(forKey: method) {
            return [.dropResponse(response, method: method, to: connectionId),
                    .log(.faultInjected(description: "dropped the response to \(method) on \(connectionId)"))]
                + (cut ? [.abort(connectionId)] : [])
        }
        guard let delay = plan.responseDelay else { return nil }
        wire.fault = SendFault(delay: delay)
        return [.respond(response, method: method, to: connectionId, wire: wire)]
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
    mutating func answerInstead(of call: MethodCall, profile: GatewayProfile) -> [GatewayEffect]? {
        if call.method == GatewayMethod.chatSend.rawValue,
           case .success(let send) = ChatSendRequest.parse(call.params, generation: ChatGeneration(profile)) {
            return chatSendFate(send, call: call)
        }
        let replyStyle = profile.nodeEventReply
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

    /// A valid `chat.send` under the chat faults: lost whole before it is applied (answered here,
    /// the handler never runs), or marked so that its ack is lost, or followed by the mid-flush
    /// cut (``rewrite(_:)`` of its answer). An invalid one uses up nothing: the Gateway would not
    /// apply it.
    private mutating func chatSendFate(_ send: ChatSendRequest, call: MethodCall) -> [GatewayEffect]? {
        let request = AnsweredRequest(connectionId: call.connectionId, requestId: call.request.id)
        let key = send.idempotencyKey
        if !plan.chatAckDrops.isEmpty {
            let armed = plan.chatAckDrops.removeFirst()
            switch armed.drop {
            case .beforeApplying:
                return [.loseAnswer(method: call.method, to: call.connectionId, text: "chat.send \(key) lost before it was applied (fault)")]
                    + (armed.cut ? [.abort(call.connectionId)] : [])
            case .afterApplying:
                plan.answerFates[request] = .lose(text: "ack of chat.send \(key) dropped after it was applied (fault)", cut: armed.cut)
                return nil
            }
        }
        if let remaining = plan.chatCutAfterSends {
            plan.chatCutAfterSends = remaining > 1 ? remaining - 1 : nil
            if remaining <= 1 {
                plan.answerFates[request] = .cutAfter(text: "cut the connection after acknowledging chat.send \(key) (mid-flush)")
            }
        }
        return nil
    }

    /// The dispatch hold an operator's `node.invoke` to an absent node gets (its wake sequence
    /// starts: ``NodeState/Input/operatorInvoke(_:timeoutMs:deadlineMs:dispatchHoldMs:nowMs:)``), consuming
    /// an armed hold; 0 when none is armed or the node is connected (no wake, the hold waits).
    mutating func wakeDispatchHold(nodeConnected: Bool) -> Int64 {
        guard !nodeConnected, plan.wakeDispatchHoldMs > 0 else { return 0 }
        defer { plan.wakeDispatchHoldMs = 0 }
        return plan.wakeDispatchHoldMs
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
