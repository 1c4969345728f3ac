import GatewayProtocol

// The scripting API of the session tree and of session creation: each acts as the wire method
// from another device does (the same rules, answers and `sessions.changed` events).
extension Gateway {
    /// Rewinds `sessionKey` to before the user message `entryId` as `sessions.rewind` does: the
    /// active path ends at the message's parent, the old tip stays as a second branch
    /// (`sessions.branches.list`), and `sessions.changed {reason: "rewind"}` goes to the
    /// `sessions.subscribe` subscribers.
    /// - Returns: the cut message's text (upstream's `editorText`; `nil` when empty).
    /// - Throws: the wire's refusal (`session not found: …`, `message entry not found: …`, …).
    @discardableResult
    public func rewindChatSession(sessionKey: String, toBefore entryId: String) async throws(GatewayError) -> String? {
        recordOperatorAction("rewind chat session \(sessionKey) to before \(entryId)")
        switch await core.scriptRewind(sessionKey: sessionKey, entryId: entryId) {
        case .failure(let refusal): throw GatewayError(refusal.shape)
        case .success(let editorText): return editorText
        }
    }

    /// Makes the branch ending at `leafEntryId` the active path of `sessionKey`, as
    /// `sessions.branches.switch` does (`sessions.changed {reason: "branch-switch"}`).
    /// - Throws: the wire's refusal (`entry is not a branch tip: …`, `branch is already active: …`, …).
    public func switchChatBranch(sessionKey: String, to leafEntryId: String) async throws(GatewayError) {
        recordOperatorAction("switch chat session \(sessionKey) to the branch ending at \(leafEntryId)")
        if case .failure(let refusal) = await core.scriptSwitchBranch(sessionKey: sessionKey, leafEntryId: leafEntryId) {
            throw GatewayError(refusal.shape)
        }
    }

    /// The transcript branches of `sessionKey` as `sessions.branches.list` answers them:
    /// `{branches: [{leafEntryId, headline, messageCount, updatedAt, active}]}`, the active one first.
    public func chatBranches(sessionKey: String) async -> JSONValue {
        await core.chat.store.branchesListing(sessionKey)
    }

    /// Creates a session as `sessions.create` does: `params` are the method's params (closed
    /// schema: `{key?, label?, category?, model?, message?, parentSessionKey?, fork?, …}`); a
    /// first `message` (or `task`) goes through the scripted agent as a `chat.send`;
    /// `sessions.changed {reason: "create"}` (and `"send"` when a run started) follows.
    /// - Returns: the method's answer, `{ok, key, sessionId, entry, runStarted, runId?, status?, resolved}`.
    /// - Throws: the wire's refusal (a params error, `unknown parent session: …`, …).
    @discardableResult
    public func createChatSession(_ params: JSONValue = [:]) async throws(GatewayError) -> JSONValue {
        recordOperatorAction("create chat session \(params.jsonString)")
        let request = try SessionCreateRequest.parse(params).get()
        switch await core.scriptCreate(request) {
        case .failure(let error): throw error
        case .success(let answer): return answer
        }
    }
}
