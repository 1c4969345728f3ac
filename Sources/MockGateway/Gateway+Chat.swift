import GatewayProtocol
// MARK: - Chat surface: the scripted agent and its faults

extension Gateway {
    /// The session key of `chat.send` / `chat.history` when a script names none (`main`).
    public static let defaultChatSessionKey = ChatStore.defaultSessionKey

    /// The transcript of `sessionKey` as stored (no history lag applied), oldest first.
    public func chatMessages(sessionKey: String = Gateway.defaultChatSessionKey) async -> [ChatMessage] {
        await core.chat.store.messages(in: sessionKey)
    }

    /// Every session with rows, by key.
    public func chatSessionKeys() async -> [String] {
        await core.chat.store.sessions.keys.sorted()
    }

    /// Posts an assistant row as the scripted agent: `session.message` and a `chat` `final` event
    /// go to operator sessions with `operator.read`.
    /// - Parameters:
    ///   - text: the message text.
    ///   - sessionKey: the session (`main` by default).
    ///   - delay: how long after now (Gateway clock) it is written; zero writes it at once.
    ///   - blocks: content blocks after the text block (e.g. `{type: "image", data, mimeType}`),
    ///     which `artifacts.download` serves.
    public func postAssistantMessage(_ text: String, sessionKey: String = Gateway.defaultChatSessionKey,
                                     after delay: Duration = .zero, blocks: [JSONValue] = []) async {
        recordOperatorAction("post assistant message in \(sessionKey)")
        await core.scriptPostAssistant(text: text, sessionKey: sessionKey, delay: delay, blocks: blocks)
    }

    /// Sets how the scripted agent answers user messages (by default `echo: <text>` at once).
    public func setChatAutoReply(_ reply: ChatAutoReply) async {
        await core.setChatAutoReply(reply)
    }

    /// Arms a lost ack for the next `chat.send` (armed drops apply to successive sends, in order).
    /// - Parameters:
    ///   - drop: `.afterApplying` (the message is stored, the ack never arrives: an ambiguous send)
    ///     or `.beforeApplying` (nothing is stored; the connection is always cut).
    ///   - cutConnection: for `.afterApplying`, also drop the socket without a close frame, so
    ///     the client learns at once that the outcome is unknown.
    public func dropNextChatSendAck(_ drop: ChatAckDrop, cutConnection: Bool = true) async {
        await core.armChatAckDrop(drop, cut: cutConnection)
    }

    /// Cuts the connection (no close frame) right after the `count`-th next `chat.send` was
    /// applied and acknowledged: a reconnect in the middle of an outbox flush. 0 disarms.
    public func cutConnectionAfterChatSends(_ count: Int) async {
        await core.armChatCut(afterSends: count)
    }

    /// Makes `chat.history` lag behind sends: its answers leave out the newest `omitNewest` rows
    /// of the session.
    /// - Parameters:
    ///   - omitNewest: rows left out; 0 makes history current again.
    ///   - reads: for how many history answers (`nil`: until cleared).
    public func lagChatHistory(omitNewest: Int, forReads reads: Int? = nil) async {
        await core.setChatHistoryLag(omitNewest: omitNewest, reads: reads)
    }
}

// MARK: - The scripted agent's runs: queued inputs, collect, interrupt, compaction

extension Gateway {
    /// The agent starts a run in `sessionKey` that does not end until ``releaseChatRun(sessionKey:collect:)``:
    /// later `chat.send`s are accepted but queued (listed in `pendingInputs`, receipt `pending`),
    /// except `queueMode: steer` (folded in at once) and `interrupt` (cancels the run).
    public func holdChatRun(sessionKey: String = Gateway.defaultChatSessionKey) async {
        recordOperatorAction("hold a chat run in \(sessionKey)")
        await core.scriptHoldRun(sessionKey: sessionKey)
    }

    /// The held run ends and the queued inputs take their turns: each its own run, or with
    /// `collect` all of them folded into one run (one user row; every input's receipt is
    /// `consumed` by that row).
    public func releaseChatRun(sessionKey: String = Gateway.defaultChatSessionKey, collect: Bool = false) async {
        recordOperatorAction("release the chat run in \(sessionKey)\(collect ? " (collect)" : "")")
        await core.scriptReleaseRun(sessionKey: sessionKey, collect: collect)
    }

    /// The held run is interrupted: its queued inputs become `interrupted` and never reach history.
    public func interruptChatRun(sessionKey: String = Gateway.defaultChatSessionKey) async {
        recordOperatorAction("interrupt the chat run in \(sessionKey)")
        await core.scriptInterruptRun(sessionKey: sessionKey)
    }

    /// The queued inputs of `sessionKey` are dropped (`cancelled` in `pendingInputs`).
    public func cancelQueuedChatInputs(sessionKey: String = Gateway.defaultChatSessionKey) async {
        recordOperatorAction("cancel the queued chat inputs in \(sessionKey)")
        await core.scriptCancelQueued(sessionKey: sessionKey)
    }

    /// Compacts `sessionKey` as `sessions.compact` does: the newest `keep` rows stay, the rest
    /// leave the visible path, and every cursor into the session answers `{kind:"reset"}`.
    public func compactChatSession(sessionKey: String = Gateway.defaultChatSessionKey, keep: Int = 2) async {
        recordOperatorAction("compact chat session \(sessionKey)")
        await core.scriptCompact(sessionKey: sessionKey, keep: keep)
    }

    /// Deletes `sessionKey` as a `sessions.delete` from another device: the session leaves
    /// `sessions.list` with its transcript, and `sessions.changed {sessionKey, agentId,
    /// reason: "delete", ts}` goes to the `sessions.subscribe` subscribers.
    /// - Returns: whether there was such a session (no event when there was none).
    /// - Throws: the wire's refusal: `INVALID_REQUEST "Cannot delete the main session (main)."`.
    @discardableResult
    public func deleteChatSession(sessionKey: String) async throws(GatewayError) -> Bool {
        recordOperatorAction("delete chat session \(sessionKey)")
        return try await core.scriptDelete(sessionKey: sessionKey).get()
    }

    /// The custom session group catalog, in display order (`sessions.groups.list`).
    public func sessionGroups() async -> [String] {
        await core.chat.store.groupCatalog
    }

    /// Replaces the session group catalog as a `sessions.groups.put {names}` from another device
    /// does: `sessions.changed {reason: "groups", ts}` goes to the `sessions.subscribe` subscribers.
    /// Sessions join a group through their `category` (`sessions.patch`).
    /// - Returns: the catalog now.
    /// - Throws: the wire's refusal when a dropped group still has member sessions.
    @discardableResult
    public func putSessionGroups(_ names: [String]) async throws(GatewayError) -> [String] {
        recordOperatorAction("put session groups \(names)")
        if case .failure(let error) = await core.putSessionGroups(names, sectionOrder: nil) { throw GatewayError(error.shape) }
        return await core.chat.store.groupCatalog
    }
}
