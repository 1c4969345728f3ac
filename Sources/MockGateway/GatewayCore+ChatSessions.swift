import Foundation
import GatewayProtocol

/// Why `sessions.changed` was sent (upstream `SessionChangedPayload.reason`).
enum SessionChangeReason: String, Sendable, Hashable {
    /// `sessions.patch`.
    case patch
    /// `sessions.reset`.
    case reset
    /// `sessions.compact` (or a scripted compaction).
    case compact
    /// `sessions.delete` (or a scripted deletion); sent only when a session was removed.
    case delete
    /// `sessions.fork`: the new session (the event names the fork, not its source).
    case fork
    /// A change of the session group catalog (`sessions.groups.*`), without a session key.
    case groups
    /// `sessions.rewind`.
    case rewind
    /// `sessions.branches.switch`.
    case branchSwitch = "branch-switch"
    /// `sessions.create` (the new or adopted session).
    case create
    /// `sessions.create` started a run with its first message.
    case send
}

// Glue of the chat history, single-message, startup and session-control methods: each handler
// validates with a ChatStore schema, asks the store and answers (rules in Sources/MockGateway/Chat).
extension GatewayCore {
    /// The chat generation this Gateway serves.
    var chatGeneration: ChatGeneration { ChatGeneration(configuration.profile) }

    func answerParams<T>(_ call: MethodCall, _ result: Result<T, ChatStore.ParamsError>, _ body: (T) -> Void) {
        switch result {
        case .failure(let error): fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: error.message))
        case .success(let value): body(value)
        }
    }

    /// `chat.history` (closed schema of the generation): a tail page, a cursor delta or a reset.
    func chatHistory(_ call: MethodCall) {
        answerParams(call, ChatStore.historyRequest(call.params, generation: chatGeneration)) { query in
            reply(call, chat.store.history(query, nowMs: nowMs))
        }
    }

    /// `chat.startup`: history params (the same answer as `chat.history`), or a short chat link,
    /// which this Gateway does not have.
    func chatStartup(_ call: MethodCall) {
        if call.params?["shortId"] != nil {
            answerParams(call, ChatStore.startupLinkSchema.validate(call.params)) { _ in
                fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "chat link not found"))
            }
            return
        }
        answerParams(call, ChatStore.historyRequest(call.params, generation: .newest, method: GatewayMethod.chatStartup.rawValue)) { query in
            reply(call, chat.store.history(query, nowMs: nowMs))
        }
    }

    /// `chat.message.get`.
    func chatMessageGet(_ call: MethodCall) {
        answerParams(call, ChatStore.messageGetSchema.validate(call.params)) { members in
            reply(call, chat.store.messageGet(sessionKey: members["sessionKey"]?.stringValue ?? "",
                                              messageId: members["messageId"]?.stringValue ?? "",
                                              maxChars: members["maxChars"]?.int64Value.map { Int($0) }))
        }
    }

    /// `sessions.patch`: writes the settings; `{ok, key, entry}`.
    func sessionsPatch(_ call: MethodCall) {
        // Upstream's `dynamic` scope: fields beyond chat organisation need `operator.admin`.
        if SessionMutationScope.patchRequires(call.params) == .admin, !Set(wire: call.session.scopes).contains(.admin) {
            return fail(call, OperatorMethodPolicy.missingScopeError(.admin, requiredScopes: [.admin], style: profile.missingScopeStyle))
        }
        answerParams(call, ChatStore.patchSchema.validate(call.params)) { members in
            let key = members["key"]?.stringValue ?? ""
            chat.store.patch(sessionKey: key, settings: members.filter { ChatStore.patchableSettings[$0.key] != nil })
            if let category = members["category"]?.stringValue { _ = chat.store.registerGroup(category) }
            reply(call, ["ok": true, "key": .string(key), "entry": chat.store.sessionRow(key)])
            emitSessionsChanged(key, reason: .patch)
        }
    }

    /// `sessions.branches.list {sessionKey, agentId?}` → `{branches}` (no event; the key is
    /// trimmed as upstream's handler does, src/gateway/server-methods/sessions-rewind.ts
    /// @50667d65e3e02e5be767d65d5a590d9bbcd3950d).
    func sessionsBranchesList(_ call: MethodCall) {
        answerParams(call, ChatStore.branchesListSchema.validate(call.params)) { members in
            let key = (members["sessionKey"]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            reply(call, chat.store.branchesListing(key))
        }
    }

    /// `sessions.fork {sessionKey, agentId?, entryId}` → `{sessionKey, editorText?}`, then
    /// `sessions.changed {sessionKey: <fork>, reason: "fork"}`. The fork's key is upstream's
    /// dashboard key `agent:<agentId>:dashboard:<uuid>` (`buildDashboardSessionKey`,
    /// src/gateway/session-create-service.ts), the uuid from the Gateway's seeded random source.
    func sessionsFork(_ call: MethodCall) {
        answerParams(call, ChatStore.forkSchema.validate(call.params)) { members in
            let key = (members["sessionKey"]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let entryId = (members["entryId"]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let target = "agent:\(appSurfaces.agents.defaultId):dashboard:\(random.uuidString().lowercased())"
            switch chat.store.fork(sessionKey: key, entryId: entryId, targetKey: target) {
            case .failure(let refusal): fail(call, refusal.shape)
            case .success(let editorText):
                var payload: [String: JSONValue] = ["sessionKey": .string(target)]
                if let editorText { payload["editorText"] = .string(editorText) }
                reply(call, .object(payload))
                emitSessionsChanged(target, reason: .fork)
            }
        }
    }

    /// `sessions.reset`: a new transcript; `{ok, key, entry}`.
    func sessionsReset(_ call: MethodCall) {
        answerParams(call, ChatStore.resetSchema.validate(call.params)) { members in
            let key = members["key"]?.stringValue ?? ""
            chat.store.reset(sessionKey: key)
            noteFault("session \(key) reset")
            reply(call, ["ok": true, "key": .string(key), "entry": chat.store.sessionRow(key)])
            emitSessionsChanged(key, reason: .reset)
        }
    }

    /// `sessions.compact`: keeps the newest `maxLines` rows (2 without); `{ok, key, compacted, kept?}`.
    func sessionsCompact(_ call: MethodCall) {
        answerParams(call, ChatStore.compactSchema.validate(call.params)) { members in
            let key = members["key"]?.stringValue ?? ""
            let maxLines = members["maxLines"]?.int64Value.map { Int($0) }
            let outcome = chat.store.compact(sessionKey: key, keep: maxLines ?? ChatStore.defaultCompactionKeep)
            noteFault("session \(key) compacted")
            var payload: [String: JSONValue] = ["ok": true, "key": .string(key), "compacted": .bool(outcome.compacted)]
            if maxLines != nil { payload["kept"] = .int(Int64(outcome.kept)) }
            reply(call, .object(payload))
            emitSessionsChanged(key, reason: .compact, compacted: outcome.compacted)
        }
    }

    /// `sessions.delete`: `{ok:true, key, deleted, archived: []}`, then `sessions.changed
    /// {sessionKey, agentId, reason:"delete", ts}` when a session was removed. Upstream's
    /// `dynamic` scope: `operator.admin`, or `operator.write` for an archive-then-delete
    /// (`SessionMutationScope.deleteRequires`), checked before the schema as upstream's dispatcher does.
    func sessionsDelete(_ call: MethodCall) {
        if SessionMutationScope.deleteRequires(call.params) == .admin, !Set(wire: call.session.scopes).contains(.admin) {
            return fail(call, OperatorMethodPolicy.missingScopeError(.admin, requiredScopes: [.admin], style: profile.missingScopeStyle))
        }
        answerParams(call, ChatStore.deleteSchema.validate(call.params)) { members in
            switch deleteSession(members) {
            case .failure(let error): fail(call, error.shape)
            case .success(let outcome):
                reply(call, ["ok": true, "key": .string(outcome.key), "deleted": .bool(outcome.deleted), "archived": []])
                if outcome.deleted { emitSessionsChanged(outcome.key, reason: .delete) }
            }
        }
    }

    /// The refusals and the removal of `sessions.delete` (wire and scripting API), in upstream's
    /// order (src/gateway/server-methods/sessions-delete.ts@082309bd9aa153f3cdc2c289a9f1969454f1288f):
    /// a blank key, the main session, `archivedOnly` on a session that is not archived, an
    /// `expected…` guard that does not match the session; otherwise the session is removed
    /// (`deleted: false` when there was none).
    func deleteSession(_ members: [String: JSONValue]) -> Result<(key: String, deleted: Bool), GatewayError> {
        func refuse(_ message: String, details: JSONValue? = nil) -> Result<(key: String, deleted: Bool), GatewayError> {
            .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message, details: details)))
        }
        let key = (members["key"]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if key.isEmpty { return refuse("key required") }
        if key == ChatStore.defaultSessionKey { return refuse("Cannot delete the main session (\(key)).") }
        let exists = chat.store.sessionStates[key] != nil
        if members["archivedOnly"] == .bool(true), !chat.store.isArchived(key) {
            return refuse("Session \(key) is not archived. Archive it first, then delete it.")
        }
        // The fake's sessions have no lifecycle revision, so an expected one never matches.
        let sessionIdMatches = members["expectedSessionId"].map { exists && $0.stringValue == chat.store.sessionId(key) } ?? true
        let updatedAt = chat.store.sessionRow(key)["updatedAt"]?.doubleValue
        let updatedAtMatches = members["expectedSessionUpdatedAt"].map { exists && $0.doubleValue == updatedAt } ?? true
        if !sessionIdMatches || !updatedAtMatches || members["expectedLifecycleRevision"] != nil {
            return refuse("Session \(key) changed before deletion. Retry.", details: ["reason": .string(Self.sessionChangedReason)])
        }
        let deleted = chat.store.delete(sessionKey: key)
        if deleted { noteFault("session \(key) deleted") }
        return .success((key, deleted))
    }

    /// `details.reason` of a stale lifecycle guard (upstream `SESSION_LIFECYCLE_CHANGED_ERROR_REASON`,
    /// src/config/sessions/lifecycle.ts).
    static let sessionChangedReason = "session-changed"

    /// The scripting API's deletion (`Gateway.deleteChatSession`): as a `sessions.delete` from
    /// another device.
    func scriptDelete(sessionKey: String) -> Result<Bool, GatewayError> {
        switch deleteSession(["key": .string(sessionKey)]) {
        case .failure(let error): return .failure(error)
        case .success(let outcome):
            if outcome.deleted { emitSessionsChanged(outcome.key, reason: .delete) }
            return .success(outcome.deleted)
        }
    }

    // MARK: - Scripting the agent's runs

    func scriptHoldRun(sessionKey: String) {
        chat.store.holdRun(sessionKey: sessionKey)
        noteFault("chat agent: a run in \(sessionKey) holds later sends queued")
    }

    func scriptReleaseRun(sessionKey: String, collect: Bool) {
        let rows = chat.store.releaseRun(sessionKey: sessionKey, collectAll: collect, nowMs: nowMs)
        noteFault("chat agent: the run in \(sessionKey) ended" + (collect ? ", queued inputs collected into one run" : ""))
        for row in rows { publishChat(row) }
        releaseDueChatMessages()
    }

    func scriptInterruptRun(sessionKey: String) {
        chat.store.interruptRun(sessionKey: sessionKey)
        noteFault("chat agent: the run in \(sessionKey) was interrupted")
    }

    func scriptCancelQueued(sessionKey: String) {
        let count = chat.store.cancelQueued(sessionKey: sessionKey)
        noteFault("chat agent: \(count) queued inputs in \(sessionKey) cancelled")
    }

    func scriptCompact(sessionKey: String, keep: Int) {
        let outcome = chat.store.compact(sessionKey: sessionKey, keep: keep)
        noteFault("chat agent: session \(sessionKey) compacted to \(keep) rows")
        emitSessionsChanged(sessionKey, reason: .compact, compacted: outcome.compacted)
    }

    /// `sessions.changed` to the connections subscribed to every session (`sessions.subscribe`)
    /// that hold `operator.read`: `{sessionKey, reason, compacted?, ts, …the session row}`; after a
    /// deletion `{sessionKey, agentId, reason: "delete", ts}` (src/gateway/server-methods/
    /// session-change-event.ts@09741cd22bc30837ed33044c153087af29297269)
    /// (upstream `emitSessionsChanged`, src/gateway/server-methods/sessions.ts).
    func emitSessionsChanged(_ sessionKey: String, reason: SessionChangeReason, compacted: Bool? = nil) {
        // A deleted session has no row: upstream's payload is then `{sessionKey, agentId, reason, ts}`.
        var payload = chat.store.hasSession(sessionKey) ? chat.store.sessionRow(sessionKey).objectValue ?? [:] : [:]
        if reason == .delete || reason == .create || reason == .send { payload["agentId"] = .string(appSurfaces.agents.defaultId) }
        payload["sessionKey"] = .string(sessionKey)
        payload["reason"] = .string(reason.rawValue)
        payload["ts"] = .int(nowMs)
        if let compacted { payload["compacted"] = .bool(compacted) }
        broadcastSessionsChanged(payload)
    }

    /// `sessions.changed {reason: "groups", ts}`: the group catalog changed (no session key).
    func emitSessionGroupsChanged() {
        broadcastSessionsChanged(["reason": .string(SessionChangeReason.groups.rawValue), "ts": .int(nowMs)])
    }

    private func broadcastSessionsChanged(_ payload: [String: JSONValue]) {
        let event = GatewayEventName.sessionsChanged.rawValue
        for (connectionId, state) in connections.sorted(by: { $0.key < $1.key }) {
            guard let session = state.session, !state.closing, messageSubscriptions.everySession.contains(connectionId),
                  EventScopeGate.allows(event: event, role: session.role, scopes: session.scopes) else { continue }
            sendSequenced(event: event, payload: .object(payload), to: connectionId)
        }
    }
}
