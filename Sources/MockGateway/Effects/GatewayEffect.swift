import GatewayProtocol
import WebSocketTransport

/// How one outbound message goes on the wire: as the Gateway sends it (``plain``), or altered by
/// a fault (``FaultLayer``): delayed, fragmented, sent as a binary message.
struct WireTreatment: Sendable, Hashable {
    /// The send fault (delay, fragments, pings between them), `nil` for a plain send.
    var fault: SendFault?
    /// Whether the message goes out as a binary message (the Gateway sends text).
    var binary = false

    /// A plain text message.
    static let plain = WireTreatment()
}

/// What a Gateway rule decided to do, as data: the rules (and the state machines that hold
/// their state) return effects, ``FaultLayer`` rewrites them, and `GatewayCore.perform(_:)` is
/// the one place that runs them (GatewayCore+Effects.swift).
///
/// Rules produce effects with ``WireTreatment/plain``; only the fault layer produces
/// ``dropResponse(_:method:to:)``, ``loseAnswer(method:to:text:)`` and non-plain treatments.
enum GatewayEffect: Sendable, Hashable {
    /// A frame on one connection (an event, or a frame that answers no request).
    case send(Frame, to: String, wire: WireTreatment = .plain)
    /// The answer to a request of `method`: logged as `requestHandled`, then sent.
    case respond(ResponseFrame, method: String, to: String, wire: WireTreatment = .plain)
    /// An answer that is not a well-formed frame (a connect refusal that echoes an odd id):
    /// logged as `requestHandled` with `errorCode`, then sent as text.
    case respondJSON(JSONValue, method: String, errorCode: String?, to: String, wire: WireTreatment = .plain)
    /// A JSON document sent as text, no fault applies (an invalid frame's answer echoing a
    /// non-string id, logged by its rule).
    case sendJSON(JSONValue, to: String)
    /// A response a fault lost: logged as `requestHandled`, recorded as dropped, never sent.
    case dropResponse(ResponseFrame, method: String, to: String)
    /// A request whose answer a fault lost (a `chat.send` ack): logged as `requestHandled`
    /// without a result, a `dropped` transcript line saying `text`, and a `faultInjected` event.
    case loseAnswer(method: String, to: String, text: String)
    /// A close frame after what is already queued on the connection.
    case close(String, code: Int, reason: String)
    /// The connection dropped without a close frame (TCP reset) after what is queued.
    case abort(String)
    /// An event to every session allowed to see it (docs/protocol.md §2.6), each with its
    /// connection's next `seq`.
    case broadcast(event: String, payload: JSONValue?, stateVersion: StateVersion?)
    /// An event to one session with its connection's next `seq` (skipped when the connection
    /// has no session or is closing).
    case sendSequenced(event: String, payload: JSONValue?, to: String)
    /// An entry in the Gateway event log.
    case log(GatewayEvent)
    /// A `note` transcript line on a connection (`-` for the whole Gateway).
    case note(String, on: String)
    /// An injected fault: a `fault` transcript line and a `faultInjected` event.
    case noteFault(String, on: String)
    /// The durable state is written to the state directory (when it has one).
    case persist
    /// The Apple Watch direct-mode session of node `nodeId` ends (its pairing or token went
    /// away), with `reason`.
    case endWatchSession(nodeId: String, reason: String)
    /// An event to one session without `seq` (`node.invoke.request`), or to the Watch session
    /// of a Watch connection.
    case sendTargeted(event: String, payload: JSONValue?, to: String)
    /// A scripting-API caller waiting for invoke `id` (`Gateway.invoke`) gets its outcome
    /// (`queued`: the foreground action a background refusal queued). An operator's
    /// `node.invoke` is answered by the node machine's own effects after this one.
    case finishInvoke(String, outcome: InvokeOutcome, queued: PendingNodeAction?)
    /// A push handed to the node's transport (signed for the relay, through the fault layer's
    /// push refusal); its answer goes back to the node machine (``NodeState/Input/pushAnswered(_:_:nowMs:)``).
    case sendPush(PushSend)
    /// The scripting API's operator `node.invoke` (`Gateway.operatorInvoke`) request
    /// `requestId` gets its answer.
    case answerScriptedInvoke(requestId: String, OperatorInvokeAnswer)
    /// A beacon's last-seen time is written to the device's pairing record; the outcome goes back
    /// to the node machine (``NodeState/Input/lastSeenPersisted(_:stored:)``).
    case persistLastSeen(LastSeenWrite)
}
