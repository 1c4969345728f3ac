import Foundation
import GatewayProtocol

/// The chat surface's state inside the Gateway: the transcripts and who follows them. (The
/// chat faults, lost acks and the mid-flush cut, are in the fault layer.)
struct ChatState: Sendable {
    var store = ChatStore()
    /// Who receives `session.message` for which session (`sessions.messages.subscribe`,
    /// `sessions.subscribe`).
    var messageSubscriptions = SessionMessageSubscriptions()
    /// `agent.wait` requests parked until their run ends or their deadline passes.
    var runWaiters: [ChatRunWaiter] = []
}

extension GatewayCore {
    /// `chat.send` `{sessionKey, message, idempotencyKey, queueMode?, attachments?, …}` (closed
    /// schema of the generation, ``ChatSendRequest``). A lost ack or a mid-flush cut is the fault
    /// layer's: this handler answers as a healthy Gateway does.
    func chatSend(_ call: MethodCall) {
        let request: ChatSendRequest
        switch ChatSendRequest.parse(call.params, generation: chatGeneration) {
        case .success(let valid): request = valid
        case .failure(let error): return fail(call, error.shape)
        }
        let ack: JSONValue
        switch chat.store.send(sessionKey: request.sessionKey, text: request.text, idempotencyKey: request.idempotencyKey,
                               mode: request.mode, nowMs: nowMs) {
        case .accepted(let messages, let first):
            ack = first
            for message in messages { publishChat(message) }
        case .repeated(let first):
            ack = first
        }
        reply(call, ack)
        releaseDueChatMessages()
    }

    /// Publishes a new row: `session.message` to the operator sessions subscribed to its session
    /// (``SessionMessageSubscriptions``), and for assistant rows a `chat` `final` event
    /// (upstream `ChatFinalEventSchema`) to every operator session; both need `operator.read`.
    ///
    /// Upstream broadcasts `chat` to every connection the scope gate admits (`broadcast("chat",
    /// payload)` plus the node session subscribers, `emitChatFinal` in src/gateway/server-chat.ts
    /// @006a22e92263992cfb05b9209a46767f7dfd615a), while `session.message` goes to subscribers only
    /// (src/gateway/server-session-events.ts @08eec41769bd918a21e247404ad691d5707a79e1), with
    /// `{sessionKey, message, messageId?, messageSeq?, …session row}`. Newer stored code also
    /// narrows `chat` for clients that declare a session-scoped-events capability; neither that
    /// capability nor the narrowing is in the `openclaw/docs` mirror (its "Client capabilities"
    /// list only `tool-events` and `inline-widgets`), so `chat` stays a broadcast here, the
    /// tolerant reading.
    func publishChat(_ message: ChatMessage) {
        events.append(.chatMessageStored(message))
        let row = message.json
        let sessionMessage: JSONValue = [
            "sessionKey": .string(message.sessionKey), "message": row,
            "messageId": .string(message.id), "messageSeq": .int(Int64(message.seq)),
        ]
        let event = GatewayEventName.sessionMessage.rawValue
        for (connectionId, state) in connections.sorted(by: { $0.key < $1.key }) {
            guard let session = state.session, !state.closing,
                  messageSubscriptions.receives(connectionId: connectionId, sessionKey: message.sessionKey),
                  EventScopeGate.allows(event: event, role: session.role, scopes: session.scopes) else { continue }
            sendSequenced(event: event, payload: sessionMessage, to: connectionId)
        }
        if message.role == .assistant {
            var payload: [String: JSONValue] = [
                "runId": .string(message.runId ?? message.id), "sessionKey": .string(message.sessionKey),
                "seq": .int(Int64(message.seq)), "state": "final", "message": row,
            ]
            if message.runId == nil { payload["stopReason"] = "injected" }
            broadcast(event: GatewayEventName.chat.rawValue, payload: .object(payload))
        }
    }

    /// Appends and publishes the scripted agent's rows that are due now.
    func releaseDueChatMessages() {
        for message in chat.store.releaseDue(nowMs: nowMs) { publishChat(message) }
        settleRunWaiters()
    }

    // MARK: - Scripting

    func scriptPostAssistant(text: String, sessionKey: String, delay: Duration) {
        chat.store.schedule(sessionKey: sessionKey, text: text, dueMs: nowMs + delay.milliseconds)
        releaseDueChatMessages()
    }

    func setChatAutoReply(_ reply: ChatAutoReply) {
        chat.store.autoReply = reply
        switch reply {
        case .off: noteFault("chat agent: no automatic reply")
        case .echo(let delay): noteFault("chat agent: echo reply after \(delay.milliseconds) ms")
        }
    }

    func armChatAckDrop(_ drop: ChatAckDrop, cut: Bool) {
        arm(.chatAckDrop(drop, cut: cut))
    }

    func armChatCut(afterSends count: Int) {
        arm(.chatCut(afterSends: count))
    }

    func setChatHistoryLag(omitNewest: Int, reads: Int?) {
        chat.store.setHistoryLag(omitNewest: omitNewest, reads: reads)
        if omitNewest > 0 {
            noteFault("chat.history omits the newest \(omitNewest) rows" + (reads.map { " for the next \($0) reads" } ?? " until cleared"))
        } else {
            noteFault("chat.history is up to date")
        }
    }
}
