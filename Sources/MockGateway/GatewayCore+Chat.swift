import Foundation
import GatewayProtocol

/// The chat surface's state inside the Gateway: the transcripts and the faults armed for them.
struct ChatState: Sendable {
    var store = ChatStore()
    /// How the next `chat.send` requests lose their ack, oldest first.
    var ackDrops: [(drop: ChatAckDrop, cut: Bool)] = []
    /// After this many more applied-and-acked `chat.send`s the connection is cut (mid-flush).
    var cutAfterSends: Int?
    /// Who receives `session.message` for which session (`sessions.messages.subscribe`,
    /// `sessions.subscribe`).
    var messageSubscriptions = SessionMessageSubscriptions()
}

extension GatewayCore {
    /// `chat.send` `{sessionKey, message, idempotencyKey, queueMode?, attachments?, …}` (closed schema of the generation).
    func chatSend(_ call: MethodCall) {
        let (request, connectionId) = (call.request, call.connectionId)
        let params = request.params
        func invalid(_ detail: String) { self.invalid(call, detail) }
        if case .failure(let error) = ChatStore.sendSchema(chatGeneration).validate(params) {
            return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: error.message))
        }
        let mode = params?["queueMode"]?.stringValue.flatMap(ChatQueueMode.init(rawValue:))
        guard let sessionKey = params?["sessionKey"]?.stringValue, !sessionKey.isEmpty else { return invalid("sessionKey required") }
        guard let text = params?["message"]?.stringValue else { return invalid("message must be a string") }
        guard let key = params?["idempotencyKey"]?.stringValue, !key.isEmpty else { return invalid("idempotencyKey required") }
        // Upstream refuses NUL bytes and an empty message without attachments (chat.ts
        // `sanitizeChatSendMessageInput`, openclaw/openclaw@00d420411002f771adc6ec05e834a383e0600f4b).
        if text.contains("\u{0}") {
            return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "message must not contain null bytes"))
        }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, params?["attachments"]?.arrayValue?.isEmpty ?? true {
            return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "message or attachment required"))
        }
        let drop = chat.ackDrops.isEmpty ? nil : chat.ackDrops.removeFirst()
        if let drop, drop.drop == .beforeApplying {
            loseChatAck(request, text: "chat.send \(key) lost before it was applied (fault)", cut: true, on: connectionId)
            return
        }
        let ack: JSONValue
        switch chat.store.send(sessionKey: sessionKey, text: text, idempotencyKey: key, mode: mode, nowMs: nowMs) {
        case .accepted(let messages, let first):
            ack = first
            for message in messages { publishChat(message) }
        case .repeated(let first):
            ack = first
        }
        if let drop {
            loseChatAck(request, text: "ack of chat.send \(key) dropped after it was applied (fault)", cut: drop.cut, on: connectionId)
        } else {
            respond(.success(id: request.id, payload: ack), method: request.method, to: connectionId)
            if let remaining = chat.cutAfterSends {
                chat.cutAfterSends = remaining > 1 ? remaining - 1 : nil
                if remaining <= 1 {
                    noteFault("cut the connection after acknowledging chat.send \(key) (mid-flush)", on: connectionId)
                    abort(connectionId)
                }
            }
        }
        releaseDueChatMessages()
    }

    /// Records a request whose answer is lost and optionally cuts its connection.
    private func loseChatAck(_ request: RequestFrame, text: String, cut: Bool, on connectionId: String) {
        events.append(.requestHandled(connectionId: connectionId, method: request.method, ok: false, errorCode: nil))
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .dropped, text: text, wire: TranscriptWire(frameKind: .text),
                                          fault: TranscriptFault(dropped: true)))
        events.append(.faultInjected(description: text))
        if cut { abort(connectionId) }
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
        chat.ackDrops.append((drop, cut || drop == .beforeApplying))
        switch drop {
        case .afterApplying: noteFault("apply the next chat.send but drop its ack\(cut ? " and cut the connection" : "")")
        case .beforeApplying: noteFault("lose the next chat.send before applying it and cut the connection")
        }
    }

    func armChatCut(afterSends count: Int) {
        chat.cutAfterSends = count > 0 ? count : nil
        noteFault(count > 0 ? "cut the connection after the next \(count) acknowledged chat.send" : "no mid-flush cut")
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
