import GatewayProtocol

// The chat surface's glue: each chat and session method, the scripted agent, the clock and a
// closed connection become one input of the chat machine (``ChatState/handle(_:to:ids:)``,
// State/ChatState+Machine.swift), whose effects the actor runs. The chat faults (lost acks, the
// mid-flush cut) are the fault layer's (Effects/FaultLayer.swift), armed here.
extension GatewayCore {
    /// Moves the chat surface (events go to the sessions open now, a fork's key is drawn from the
    /// core's stream) and runs its effects.
    func handleChat(_ input: ChatState.Input) {
        perform(chat.handle(input, to: operatorListeners, ids: &random))
    }

    // MARK: - Methods (the rules: ChatState.Input)

    func chatSend(_ call: MethodCall) { handleChat(.send(call.params, call.replyAddress, nowMs: nowMs)) }
    func chatHistory(_ call: MethodCall) { handleChat(.history(call.params, call.replyAddress, nowMs: nowMs)) }
    func chatStartup(_ call: MethodCall) { handleChat(.startup(call.params, call.replyAddress, nowMs: nowMs)) }
    func chatMessageGet(_ call: MethodCall) { handleChat(.messageGet(call.params, call.replyAddress)) }
    func chatAbort(_ call: MethodCall) { handleChat(.abort(call.params, call.replyAddress, nowMs: nowMs)) }
    func agentWait(_ call: MethodCall) { handleChat(.wait(call.params, call.replyAddress, nowMs: nowMs)) }
    func sessionsList(_ call: MethodCall) { handleChat(.list(call.replyAddress, nowMs: nowMs)) }
    func sessionsSubscribe(_ call: MethodCall, _ subscribe: Bool) { handleChat(.subscribeSessions(subscribe, call.replyAddress)) }
    func sessionsPatch(_ call: MethodCall) {
        handleChat(.patch(call.params, callerScopes: call.session.scopes, call.replyAddress, nowMs: nowMs))
    }
    func sessionsReset(_ call: MethodCall) { handleChat(.reset(call.params, call.replyAddress, nowMs: nowMs)) }
    func sessionsCompact(_ call: MethodCall) { handleChat(.compact(call.params, call.replyAddress, nowMs: nowMs)) }
    func sessionsDelete(_ call: MethodCall) {
        handleChat(.delete(call.params, callerScopes: call.session.scopes, agentId: appSurfaces.agents.defaultId,
                           call.replyAddress, nowMs: nowMs))
    }
    func sessionsBranchesList(_ call: MethodCall) { handleChat(.branchesList(call.params, call.replyAddress)) }
    func sessionsFork(_ call: MethodCall) {
        handleChat(.fork(call.params, agentId: appSurfaces.agents.defaultId, call.replyAddress, nowMs: nowMs))
    }
    func sessionsRewind(_ call: MethodCall) { handleChat(.rewind(call.params, call.replyAddress, nowMs: nowMs)) }
    func sessionsBranchesSwitch(_ call: MethodCall) { handleChat(.switchBranch(call.params, call.replyAddress, nowMs: nowMs)) }
    func sessionsCreate(_ call: MethodCall) {
        handleChat(.create(call.params, callerScopes: call.session.scopes, agentId: appSurfaces.agents.defaultId,
                           defaultModel: appSurfaces.models.first, call.replyAddress, nowMs: nowMs))
    }
    func sessionsObserverVisibility(_ call: MethodCall) { handleChat(.observerVisibility(call.params, call.replyAddress)) }
    func sessionsGroupsList(_ call: MethodCall) { handleChat(.groupsList(call.params, call.replyAddress)) }
    func sessionsGroupsPut(_ call: MethodCall) { handleChat(.groupsPut(call.params, call.replyAddress, nowMs: nowMs)) }
    func sessionsGroupsRenameOrDelete(_ call: MethodCall, rename: Bool) {
        handleChat(.groupsRenameOrDelete(call.params, rename: rename, call.replyAddress, nowMs: nowMs))
    }

    // MARK: - Scripting

    func scriptPostAssistant(text: String, sessionKey: String, delay: Duration, blocks: [JSONValue] = []) {
        handleChat(.postAssistant(text: text, sessionKey: sessionKey, delayMs: delay.milliseconds, nowMs: nowMs, blocks: blocks))
    }

    func setChatAutoReply(_ reply: ChatAutoReply) { handleChat(.setAutoReply(reply)) }

    func armChatAckDrop(_ drop: ChatAckDrop, cut: Bool) { arm(.chatAckDrop(drop, cut: cut)) }

    func armChatCut(afterSends count: Int) { arm(.chatCut(afterSends: count)) }

    func setChatHistoryLag(omitNewest: Int, reads: Int?) { handleChat(.setHistoryLag(omitNewest: omitNewest, reads: reads)) }

    func scriptHoldRun(sessionKey: String) { handleChat(.holdRun(sessionKey: sessionKey)) }

    func scriptReleaseRun(sessionKey: String, collect: Bool) {
        handleChat(.releaseRun(sessionKey: sessionKey, collect: collect, nowMs: nowMs))
    }

    func scriptInterruptRun(sessionKey: String) { handleChat(.interruptRun(sessionKey: sessionKey)) }

    func scriptCancelQueued(sessionKey: String) { handleChat(.cancelQueued(sessionKey: sessionKey)) }

    func scriptCompact(sessionKey: String, keep: Int) { handleChat(.compactSession(sessionKey: sessionKey, keep: keep, nowMs: nowMs)) }

    /// The scripting API's deletion (`Gateway.deleteChatSession`): as a `sessions.delete` from
    /// another device.
    func scriptDelete(sessionKey: String) -> Result<Bool, GatewayError> {
        let (result, effects) = chat.deleteSession(sessionKey, agentId: appSurfaces.agents.defaultId, nowMs: nowMs,
                                                   to: operatorListeners)
        perform(effects)
        return result
    }

    /// The scripting API's rewind (`Gateway.rewindChatSession`): as a `sessions.rewind` from another device.
    func scriptRewind(sessionKey: String, entryId: String) -> Result<String?, MessageCutRefusal> {
        let (result, notes, events) = chat.rewindSession(sessionKey, entryId: entryId, nowMs: nowMs, to: operatorListeners)
        perform(notes + events)
        return result
    }

    /// The scripting API's branch switch (`Gateway.switchChatBranch`): as a `sessions.branches.switch` from another device.
    func scriptSwitchBranch(sessionKey: String, leafEntryId: String) -> Result<Void, MessageCutRefusal> {
        let (result, notes, events) = chat.switchBranch(sessionKey, leafEntryId: leafEntryId, nowMs: nowMs, to: operatorListeners)
        perform(notes + events)
        return result
    }

    /// The scripting API's creation (`Gateway.createChatSession`): as a `sessions.create` from another device.
    func scriptCreate(_ request: SessionCreateRequest) -> Result<JSONValue, GatewayError> {
        let (result, before, after) = chat.createSession(request, agentId: appSurfaces.agents.defaultId,
                                                         defaultModel: appSurfaces.models.first, nowMs: nowMs,
                                                         ids: &random, to: operatorListeners)
        perform(before + after)
        return result
    }

    /// The scripting API's `sessions.groups.put {names}`.
    func putSessionGroups(_ names: [String], sectionOrder: [String]?) -> Result<JSONValue, SessionGroupError> {
        let (result, effects) = chat.putGroups(names, sectionOrder: sectionOrder, nowMs: nowMs, to: operatorListeners)
        perform(effects)
        return result
    }
}
