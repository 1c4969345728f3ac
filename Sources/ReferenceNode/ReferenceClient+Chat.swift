import Foundation
import GatewayProtocol
import Simulation

// The chat view of the reference client: an outbox per Gateway that flushes in order with stable
// idempotency keys and retires a message only when canonical `chat.history` shows it, and a
// transcript cache per Gateway shown at once on a cold start (rules: ChatBook.swift).
extension ReferenceClient {
    // MARK: - Stimuli

    /// `send-message`: queue, then (when online) reconcile and flush before answering.
    func sendMessage(text: String, sessionKey: String?) async -> StimulusOutcome {
        guard let store else { return .error("the client is not started") }
        let session = sessionKey ?? ChatBook.defaultSessionKey
        let prefix = String(store.identity.deviceId.prefix(12))
        switch chat.enqueue(text: text, sessionKey: session, gateway: gatewayKey, keyPrefix: prefix, configuration: configuration) {
        case .full:
            observations.append(.chatChanged("refused \(text): outbox full"))
            return .error("outbox full: \(ChatBook.outboxLimit) messages are already waiting for this Gateway")
        case .droppedSilently:
            return .ok
        case .queued(let message):
            observations.append(.chatChanged("queued \(message.key)"))
            saveChat()
        }
        if !chatOffline { await syncChat() }
        return .ok
    }

    /// `go-offline`: both sessions close and stay closed.
    func goOffline() async -> StimulusOutcome {
        chatOffline = true
        await node?.stop()
        await operatorSession?.stop()
        currentNode = nil
        currentOperator = nil
        return .ok
    }

    /// `go-online`: reconnect, then reconcile and flush; answers when the chat is in sync (or the
    /// operator session could not be reached).
    func goOnline() async -> StimulusOutcome {
        chatOffline = false
        let outcome = await connectNow()
        guard await connection(for: .operator) != nil else {
            return outcome == .ok ? .error("the operator session did not connect") : outcome
        }
        await syncChat()
        return .ok
    }

    /// `cold-start`: the process dies and launches again from the state directory.
    func coldStart(offline: Bool) async -> StimulusOutcome {
        await stopSessions()
        chatOffline = offline
        do { try await start() } catch { return .error("\(error)") }
        return .ok
    }

    /// `expect-transcript`: what the chat view shows now (cache or refreshed history); when it
    /// differs, waits up to ``chatSettleTimeout`` of client time for a refresh in flight.
    func expectTranscript(texts: [String], sessionKey: String?) async -> StimulusOutcome {
        let key = sessionKey ?? ChatBook.defaultSessionKey
        let refreshed = "history \(key)"
        let deadlineMs = configuration.clock.nowMs + Self.chatSettleTimeout.milliseconds
        // Each history read of the session is a chance; a read that only learned of a reset
        // (`history <key> reset`) is followed by the fresh tail, so the check runs again.
        while chat.transcript(gateway: gatewayKey, sessionKey: key).map(\.text) != texts {
            let remainingMs = deadlineMs - configuration.clock.nowMs
            guard remainingMs > 0 else { break }
            let cursor = observations.count
            let seen = await observations.first(from: cursor, timeout: .milliseconds(remainingMs), on: configuration.clock.waitTimeline) { observation in
                if case .chatChanged(let what) = observation { return what.hasPrefix(refreshed) }
                return false
            }
            if seen == nil { break }
        }
        let shown = chat.transcript(gateway: gatewayKey, sessionKey: key).map(\.text)
        return shown == texts ? .ok : .error("the transcript shows \(Self.list(shown)), not \(Self.list(texts))")
    }

    /// How long `expect-transcript` waits (client time) for a refresh in flight.
    static let chatSettleTimeout: Duration = .seconds(5)

    /// `expect-outbox`: the queued or unconfirmed bubbles the chat view shows now.
    func expectOutbox(texts: [String]) -> StimulusOutcome {
        let shown = chat.bubbles(gateway: gatewayKey).map(\.text)
        return shown == texts ? .ok : .error("the outbox shows \(Self.list(shown)), not \(Self.list(texts))")
    }

    private static func list(_ texts: [String]) -> String {
        JSONValue.array(texts.map(JSONValue.string)).jsonString
    }

    // MARK: - Lifecycle hooks

    /// Reads the chat book at launch; a send that was in flight when the process died is ambiguous.
    func loadChat() {
        chat = ChatBook.load(from: stateFiles)
        savedChat = nil  // what the disk holds is not known to this launch
        chat.recoverAfterLaunch()
        chat.coldStarted(configuration: configuration)
    }

    /// Where the chat book is kept: the state directory, or the run's memory.
    private var stateFiles: StateFiles {
        StateFiles(directory: configuration.stateDirectory, memory: configuration.memoryState, durable: configuration.durableState)
    }

    func saveChat() {
        guard chat != savedChat else { return }
        chat.save(to: stateFiles)
        savedChat = chat
    }

    /// A reset (reinstall): the outbox and the transcript cache go with the identity.
    func forgetChat() {
        chat.forget(configuration: configuration)
        saveChat()
    }

    /// A live `session.message`.
    func applyChatEvent(_ event: EventFrame) {
        guard event.event == GatewayEventName.sessionMessage.rawValue else { return }
        chat.applyLive(event.payload, gateway: gatewayKey)
        observations.append(.chatChanged("live message"))
        saveChat()
    }

    // MARK: - Sync

    /// Reconciles with history and flushes the outbox, one sync at a time (a sync that starts
    /// while another runs waits for it, so no message is ever sent by two flushes).
    func syncChat() async {
        let previous = chatSync
        let task = spawnTask { [weak self] in
            await previous?.value
            await self?.runChatSync()
        }
        chatSync = task
        await task.value
    }

    private func runChatSync() async {
        guard !chatOffline, let store else { return }
        guard let connection = currentOperator, !connection.isEnded else { return }
        let gateway = gatewayKey
        chat.forgetAmbiguity(gateway: gateway, keyPrefix: String(store.identity.deviceId.prefix(12)), configuration: configuration)
        // History first: an acknowledged or ambiguous message that history shows is retired, so
        // it is never sent again; one it does not show is resent under its own key.
        for sessionKey in chat.sessionsToReconcile(gateway: gateway) {
            guard await refreshHistory(sessionKey, gateway: gateway, on: connection) else { return }
        }
        var sent: Set<String> = []
        for message in chat.flushPlan(gateway: gateway, configuration: configuration) {
            guard gatewayKey == gateway, !connection.isEnded else { break }
            chat.mark(message.key, .sending)
            let params: JSONValue = ["sessionKey": .string(message.sessionKey), "message": .string(message.text),
                                     "idempotencyKey": .string(message.key)]
            observations.append(.chatChanged("sending \(message.key)"))
            switch await Self.result(of: connection, GatewayMethod.chatSend.rawValue, params) {
            case .success:
                chat.acknowledged(message.key, configuration: configuration)
                sent.insert(message.sessionKey)
            case .failure(.notConnected):
                chat.mark(message.key, .queued)
            case .failure(.gateway(let error)):
                chat.mark(message.key, .failed)
                observations.append(.chatChanged("refused \(message.key): \(error.code)"))
            case .failure:
                // The request may have been applied: history decides after the next connect.
                chat.mark(message.key, .unconfirmed)
            }
            saveChat()
            if chat.bubbles(gateway: gateway).first(where: { $0.key == message.key })?.status == .unconfirmed { break }
        }
        // Acknowledged is not persisted: read history to retire what it shows.
        for sessionKey in sent.sorted() where !connection.isEnded {
            _ = await refreshHistory(sessionKey, gateway: gateway, on: connection)
        }
    }

    /// A reset or compaction of `sessionKey` elsewhere (`sessions.changed`): the cached rows and
    /// cursor are dropped and a fresh tail is read, in turn with the other syncs.
    func refreshSessionTranscript(_ sessionKey: String) async {
        let previous = chatSync
        let task = spawnTask { [weak self] in
            await previous?.value
            await self?.runTranscriptRefresh(sessionKey)
        }
        chatSync = task
        await task.value
    }

    private func runTranscriptRefresh(_ sessionKey: String) async {
        guard !chatOffline, let connection = currentOperator, !connection.isEnded else { return }
        let gateway = gatewayKey
        observations.append(.chatChanged("session \(sessionKey) reset elsewhere"))
        chat.historyReset(gateway: gateway, sessionKey: sessionKey, configuration: configuration)
        _ = await refreshHistory(sessionKey, gateway: gateway, on: connection)
    }

    /// Reads `chat.history` for `sessionKey`: with the session's cursor when there is one (a
    /// `reset` answer drops the merged rows and reads a fresh tail), with `inputRunIds` for the
    /// messages whose custody is open; `false` when it could not be read.
    private func refreshHistory(_ sessionKey: String, gateway: String, on connection: GatewayConnection) async -> Bool {
        var params: [String: JSONValue] = ["sessionKey": .string(sessionKey)]
        let runIds = chat.inputRunIds(gateway: gateway, sessionKey: sessionKey, configuration: configuration)
        if !runIds.isEmpty { params["inputRunIds"] = .array(runIds.map(JSONValue.string)) }
        if let cursor = chat.cursor(gateway: gateway, sessionKey: sessionKey) {
            params[configuration.has(.deltaCursorMember) ? "deltaCursor" : "cursor"] = .string(cursor)
        }
        guard case .success(var payload) = await Self.result(of: connection, GatewayMethod.chatHistory.rawValue, .object(params)),
              gatewayKey == gateway else { return false }
        if payload["kind"]?.stringValue == "reset" {
            observations.append(.chatChanged("history \(sessionKey) reset"))
            chat.historyReset(gateway: gateway, sessionKey: sessionKey, configuration: configuration)
            if configuration.has(.ignoreHistoryReset) {
                saveChat()
                return true
            }
            params["cursor"] = nil
            params["deltaCursor"] = nil
            guard case .success(let tail) = await Self.result(of: connection, GatewayMethod.chatHistory.rawValue, .object(params)),
                  gatewayKey == gateway else { return false }
            payload = tail
        }
        let retired = chat.applyHistory(payload, gateway: gateway, sessionKey: sessionKey, configuration: configuration)
        observations.append(.chatChanged("history \(sessionKey)" + (retired.isEmpty ? "" : ", retired \(retired.joined(separator: ","))")))
        saveChat()
        return true
    }
}

extension ChatBook {
    /// After a launch, a message that was being sent when the process died is ambiguous.
    mutating func recoverAfterLaunch() {
        for message in outbox where message.status == .sending { mark(message.key, .unconfirmed) }
    }
}
