import Foundation
import GatewayProtocol

/// The chat surface's state inside the Gateway: the transcripts (``ChatStore``), who follows
/// them, and the `agent.wait` requests parked on a run. It moves only through its state machine
/// (``handle(_:to:ids:)``, below; its setters are private to this file), which keeps ``nextDeadlineMs`` current. (The
/// chat faults, lost acks and the mid-flush cut, are in the fault layer.)
struct ChatState: Sendable {
    /// The transcripts, sessions, groups and the scripted agent's runs.
    private(set) var store = ChatStore()
    /// Who receives `session.message` for which session (`sessions.messages.subscribe`,
    /// `sessions.subscribe`) and `sessions.changed` (`sessions.subscribe`).
    private(set) var messageSubscriptions = SessionMessageSubscriptions()
    /// `agent.wait` requests parked until their run ends or their deadline passes, oldest first.
    private(set) var runWaiters: [ChatRunWaiter] = []
    /// The earliest Gateway-clock instant at which the chat surface has something to do (a
    /// scheduled agent row, a parked wait's deadline), kept by ``handle(_:to:ids:)`` so that the
    /// Gateway's timer reads it without walking the store.
    private(set) var nextDeadlineMs: Int64?
    /// The closed `chat.send` / `chat.history` schemas of the Gateway generation.
    let generation: ChatGeneration
    /// How the generation words a missing `operator.admin` (`sessions.patch`, `sessions.delete`).
    let missingScopeStyle: GatewayProfile.MissingScopeStyle

    /// The chat surface of a Gateway acting as `profile`.
    init(profile: GatewayProfile = .current) {
        generation = ChatGeneration(profile)
        missingScopeStyle = profile.missingScopeStyle
    }

    /// Recomputes ``nextDeadlineMs`` after a transition.
    mutating func refreshDeadline() {
        var earliest = store.nextDueMs
        for waiter in runWaiters where earliest.map({ waiter.deadlineMs < $0 }) ?? true { earliest = waiter.deadlineMs }
        nextDeadlineMs = earliest
    }
}

/// One parked `agent.wait`.
struct ChatRunWaiter: Sendable, Hashable {
    /// The request, answered when the run ends or at ``deadlineMs``.
    var reply: ReplyAddress
    /// The run waited for (trimmed).
    var runId: String
    /// When the wait gives up (Gateway clock).
    var deadlineMs: Int64
}

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

/// Chat as a state machine over ``ChatState``: the chat and session methods (each with the raw
/// params and its ``ReplyAddress``; the machine validates them with the ``ChatStore`` schemas),
/// the scripted agent, the clock and closed connections in, ``GatewayEffect``s out: the answer,
/// `session.message` to the subscribed sessions, `chat` (`final`, `aborted`) broadcasts,
/// `sessions.changed` to the `sessions.subscribe` subscribers, event-log entries and fault
/// notes, and later answers to parked `agent.wait`s. No socket, no clock of its own (inputs carry
/// `nowMs`), no fault plan (a lost `chat.send` ack or the mid-flush cut is the fault layer's
/// rewrite of the answer): the actor feeds inputs and runs the effects (`GatewayCore.handleChat(_:)`).
extension ChatState {
    /// What moves the chat surface. Request inputs carry the request's params as sent.
    enum Input: Sendable {
        /// `chat.send {sessionKey, message, idempotencyKey, queueMode?, attachments?, …}` (closed
        /// schema of the generation, ``ChatSendRequest``): the new rows are published, then the
        /// ack (the first ack again for a known idempotency key), then the agent rows due now.
        case send(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `chat.history` (closed schema of the generation): a tail page, a cursor delta or a reset.
        case history(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `chat.startup`: history params (the same answer as `chat.history`), or a short chat
        /// link, which this Gateway does not have (`chat link not found`).
        case startup(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `chat.message.get {sessionKey, messageId, maxChars?}`.
        case messageGet(JSONValue?, ReplyAddress)
        /// `chat.abort {sessionKey, agentId?, runId?}`: without `runId` every active run of the
        /// session stops; with it, that run (no such run: nothing stops; a run of another session:
        /// `INVALID_REQUEST "runId does not match sessionKey"`). Answers `{ok: true, aborted,
        /// runIds}`; each stopped run's reply is never written and `chat {runId, sessionKey, seq,
        /// state: "aborted", stopReason: "rpc"}` is broadcast.
        case abort(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `agent.wait {runId, timeoutMs?}`: answered at once when the run has ended (or
        /// `timeoutMs` is 0), otherwise parked until the run ends or the wait times out.
        case wait(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `sessions.list`.
        case list(ReplyAddress, nowMs: Int64)
        /// `sessions.subscribe` (`true`) or `sessions.unsubscribe` (`false`): `{subscribed}`.
        case subscribeSessions(Bool, ReplyAddress)
        /// `sessions.messages.subscribe {key}` of `connectionId` (answered by its handler, which
        /// also keeps the approval subscription).
        case followMessages(key: String, connectionId: String)
        /// `sessions.messages.unsubscribe {key}` of `connectionId`.
        case unfollowMessages(key: String, connectionId: String)
        /// `sessions.patch` by a caller holding `callerScopes` (fields beyond chat organisation
        /// need `operator.admin`, upstream's `dynamic` scope): `{ok, key, entry}`, then
        /// `sessions.changed {reason: "patch"}`.
        case patch(JSONValue?, callerScopes: [String], ReplyAddress, nowMs: Int64)
        /// `sessions.reset {key}`: a new transcript; `{ok, key, entry}`, then `sessions.changed`.
        case reset(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `sessions.compact {key, maxLines?}`: keeps the newest `maxLines` rows (2 without);
        /// `{ok, key, compacted, kept?}`, then `sessions.changed`.
        case compact(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `sessions.delete` by a caller holding `callerScopes` (`operator.admin`, or
        /// `operator.write` for an archive-then-delete, checked before the schema as upstream's
        /// dispatcher does): `{ok: true, key, deleted, archived: []}`, then `sessions.changed
        /// {sessionKey, agentId, reason: "delete", ts}` when a session was removed (`agentId`:
        /// the default agent).
        case delete(JSONValue?, callerScopes: [String], agentId: String, ReplyAddress, nowMs: Int64)
        /// `sessions.branches.list {sessionKey, agentId?}` → `{branches}` (the key trimmed as
        /// upstream's handler does, src/gateway/server-methods/sessions-rewind.ts
        /// @50667d65e3e02e5be767d65d5a590d9bbcd3950d).
        case branchesList(JSONValue?, ReplyAddress)
        /// `sessions.fork {sessionKey, agentId?, entryId}` → `{sessionKey, editorText?}`, then
        /// `sessions.changed {sessionKey: <fork>, reason: "fork"}`. The fork's key is upstream's
        /// dashboard key `agent:<agentId>:dashboard:<uuid>` (`buildDashboardSessionKey`,
        /// src/gateway/session-create-service.ts), the uuid drawn from the `ids` stream once the
        /// params are valid.
        case fork(JSONValue?, agentId: String, ReplyAddress, nowMs: Int64)
        /// `sessions.rewind {sessionKey, agentId?, entryId}` → `{editorText?}`, then
        /// `sessions.changed {reason: "rewind"}`: the active path ends at the parent of the user
        /// message `entryId`, the old tip stays as another branch (``ChatStore/rewind(sessionKey:entryId:)``;
        /// the key and entry id trimmed, src/gateway/server-methods/sessions-rewind.ts
        /// @0214f96109264efdf07467fdd0953476fcceef0e).
        case rewind(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `sessions.branches.switch {sessionKey, agentId?, leafEntryId}` → `{}`, then
        /// `sessions.changed {reason: "branch-switch"}`: the active path ends at another tip
        /// (``ChatStore/switchBranch(sessionKey:leafEntryId:)``).
        case switchBranch(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `sessions.create` by a caller holding `callerScopes` (`operator.admin` for what
        /// ``SessionMutationScope/createRequires(_:)`` names, upstream's `dynamic` scope): the
        /// session is created or adopted (a missing key is `agent:<agentId>:dashboard:<uuid>`, drawn
        /// from the `ids` stream), its first message (`task`, else `message`) goes through the
        /// `chat.send` path (a fresh idempotency key from `ids`), then `{ok, key, sessionId, entry,
        /// runStarted, …the ack, resolved}` (`resolved` from the requested model, else
        /// `defaultModel`), `sessions.changed {reason: "create"}` and, when a run started,
        /// `{reason: "send"}` (both with `agentId`). Rules in Chat/SessionCreate.swift.
        case create(JSONValue?, callerScopes: [String], agentId: String, defaultModel: ModelFixture?, ReplyAddress, nowMs: Int64)
        /// `sessions.observer.visibility {visible}` → `{ok: true}`: records whether the
        /// connection shows the session observer's output (the fake runs no observer).
        case observerVisibility(JSONValue?, ReplyAddress)
        /// `sessions.groups.list {}` → `{groups: [{name, position}], sectionOrder}`.
        case groupsList(JSONValue?, ReplyAddress)
        /// `sessions.groups.put {names, sectionOrder?}` → `sessions.changed {reason: "groups"}`
        /// (after it succeeded), then `{ok: true, groups, sectionOrder}`.
        case groupsPut(JSONValue?, ReplyAddress, nowMs: Int64)
        /// `sessions.groups.rename {name, to}` (`rename`) or `sessions.groups.delete {name}` →
        /// `{ok: true, groups, sectionOrder, updatedSessions}`, then `sessions.changed {reason:
        /// "groups"}` whether it succeeded or not (upstream's handlers,
        /// src/gateway/server-methods/sessions-groups.ts@4402a791d2b11c1eaa0fb9810019f35f2124ef9f).
        case groupsRenameOrDelete(JSONValue?, rename: Bool, ReplyAddress, nowMs: Int64)
        /// The scripted agent posts an assistant row in `sessionKey`, `delayMs` after `nowMs`, with
        /// `blocks` after its text block.
        case postAssistant(text: String, sessionKey: String, delayMs: Int64, nowMs: Int64, blocks: [JSONValue] = [])
        /// How the scripted agent answers user messages.
        case setAutoReply(ChatAutoReply)
        /// `chat.history` leaves out the newest `omitNewest` rows (for `reads` answers, `nil`:
        /// until cleared; 0 makes it current).
        case setHistoryLag(omitNewest: Int, reads: Int?)
        /// The agent starts a run in `sessionKey` that holds later sends queued.
        case holdRun(sessionKey: String)
        /// The held run in `sessionKey` ends; its queued inputs take their turns (`collect`: as one run).
        case releaseRun(sessionKey: String, collect: Bool, nowMs: Int64)
        /// The held run in `sessionKey` is interrupted.
        case interruptRun(sessionKey: String)
        /// The queued inputs of `sessionKey` are cancelled.
        case cancelQueued(sessionKey: String)
        /// A scripted compaction of `sessionKey` to its newest `keep` rows, then `sessions.changed`.
        case compactSession(sessionKey: String, keep: Int, nowMs: Int64)
        /// The clock reached `nowMs`: the agent rows due are written and published, then parked
        /// waits whose run ended or whose deadline passed are answered.
        case clock(nowMs: Int64)
        /// A connection closed: its subscriptions and parked waits go.
        case connectionClosed(String)
    }

    /// Applies an input; `listeners` are the sessions open now, by connection id (who
    /// `session.message` and `sessions.changed` go to); new ids (a fork's key) come from `ids`.
    mutating func handle(_ input: Input, to listeners: [OperatorListener], ids: inout SeededRandom) -> [GatewayEffect] {
        defer { refreshDeadline() }
        switch input {
        case .send(let params, let reply, let nowMs):
            return send(params, reply, nowMs: nowMs, to: listeners)
        case .history(let params, let reply, let nowMs):
            return Self.validated(ChatStore.historyRequest(params, generation: generation), reply) { query in
                [reply.success(store.history(query, nowMs: nowMs))]
            }
        case .startup(let params, let reply, let nowMs):
            if params?["shortId"] != nil {
                return Self.validated(ChatStore.startupLinkSchema.validate(params), reply) { _ in
                    [Self.invalid(reply, "chat link not found")]
                }
            }
            let request = ChatStore.historyRequest(params, generation: .newest, method: GatewayMethod.chatStartup.rawValue)
            return Self.validated(request, reply) { query in [reply.success(store.history(query, nowMs: nowMs))] }
        case .messageGet(let params, let reply):
            return Self.validated(ChatStore.messageGetSchema.validate(params), reply) { members in
                [reply.success(store.messageGet(sessionKey: members["sessionKey"]?.stringValue ?? "",
                                                messageId: members["messageId"]?.stringValue ?? "",
                                                maxChars: members["maxChars"]?.int64Value.map { Int($0) }))]
            }
        case .abort(let params, let reply, let nowMs):
            return abort(params, reply, nowMs: nowMs)
        case .wait(let params, let reply, let nowMs):
            return wait(params, reply, nowMs: nowMs)
        case .list(let reply, let nowMs):
            return [reply.success(store.sessionsList(nowMs: nowMs))]
        case .subscribeSessions(let subscribe, let reply):
            messageSubscriptions.setEverySession(subscribe, connectionId: reply.connectionId)
            return [reply.success(["subscribed": .bool(subscribe)])]
        case .followMessages(let key, let connectionId):
            messageSubscriptions.subscribe(connectionId: connectionId, key: key)
            return []
        case .unfollowMessages(let key, let connectionId):
            messageSubscriptions.unsubscribe(connectionId: connectionId, key: key)
            return []
        case .patch(let params, let callerScopes, let reply, let nowMs):
            if SessionMutationScope.patchRequires(params) == .admin, let refusal = missingAdmin(callerScopes, reply) { return [refusal] }
            return Self.validated(ChatStore.patchSchema.validate(params), reply) { members in
                let key = members["key"]?.stringValue ?? ""
                store.patch(sessionKey: key, settings: members.filter { ChatStore.patchableSettings[$0.key] != nil })
                if let category = members["category"]?.stringValue { _ = store.registerGroup(category) }
                return [reply.success(["ok": true, "key": .string(key), "entry": store.sessionRow(key)])]
                    + sessionsChanged(key, reason: .patch, nowMs: nowMs, to: listeners)
            }
        case .reset(let params, let reply, let nowMs):
            return Self.validated(ChatStore.resetSchema.validate(params), reply) { members in
                let key = members["key"]?.stringValue ?? ""
                store.reset(sessionKey: key)
                return [.noteFault("session \(key) reset", on: "-"),
                        reply.success(["ok": true, "key": .string(key), "entry": store.sessionRow(key)])]
                    + sessionsChanged(key, reason: .reset, nowMs: nowMs, to: listeners)
            }
        case .compact(let params, let reply, let nowMs):
            return Self.validated(ChatStore.compactSchema.validate(params), reply) { members in
                let key = members["key"]?.stringValue ?? ""
                let maxLines = members["maxLines"]?.int64Value.map { Int($0) }
                let outcome = store.compact(sessionKey: key, keep: maxLines ?? ChatStore.defaultCompactionKeep)
                var payload: [String: JSONValue] = ["ok": true, "key": .string(key), "compacted": .bool(outcome.compacted)]
                if maxLines != nil { payload["kept"] = .int(Int64(outcome.kept)) }
                return [.noteFault("session \(key) compacted", on: "-"), reply.success(.object(payload))]
                    + sessionsChanged(key, reason: .compact, compacted: outcome.compacted, nowMs: nowMs, to: listeners)
            }
        case .delete(let params, let callerScopes, let agentId, let reply, let nowMs):
            if SessionMutationScope.deleteRequires(params) == .admin, let refusal = missingAdmin(callerScopes, reply) { return [refusal] }
            return Self.validated(ChatStore.deleteSchema.validate(params), reply) { members in
                let (result, notes) = removeSession(members)
                switch result {
                case .failure(let error):
                    return [reply.failure(error.shape)]
                case .success(let outcome):
                    return notes + [reply.success(["ok": true, "key": .string(outcome.key), "deleted": .bool(outcome.deleted),
                                                   "archived": []])]
                        + (outcome.deleted ? sessionsChanged(outcome.key, reason: .delete, agentId: agentId, nowMs: nowMs, to: listeners) : [])
                }
            }
        case .branchesList(let params, let reply):
            return Self.validated(ChatStore.branchesListSchema.validate(params), reply) { members in
                [reply.success(store.branchesListing(Self.trimmed(members["sessionKey"])))]
            }
        case .fork(let params, let agentId, let reply, let nowMs):
            return Self.validated(ChatStore.forkSchema.validate(params), reply) { members in
                let target = "agent:\(agentId):dashboard:\(ids.uuidString().lowercased())"
                switch store.fork(sessionKey: Self.trimmed(members["sessionKey"]), entryId: Self.trimmed(members["entryId"]),
                                  targetKey: target) {
                case .failure(let refusal):
                    return [reply.failure(refusal.shape)]
                case .success(let editorText):
                    var payload: [String: JSONValue] = ["sessionKey": .string(target)]
                    if let editorText { payload["editorText"] = .string(editorText) }
                    return [reply.success(.object(payload))] + sessionsChanged(target, reason: .fork, nowMs: nowMs, to: listeners)
                }
            }
        case .rewind(let params, let reply, let nowMs):
            return Self.validated(ChatStore.rewindSchema.validate(params), reply) { members in
                let (result, notes, events) = rewindSession(Self.trimmed(members["sessionKey"]), entryId: Self.trimmed(members["entryId"]),
                                                            nowMs: nowMs, to: listeners)
                switch result {
                case .failure(let refusal): return [reply.failure(refusal.shape)]
                case .success(let editorText):
                    return notes + [reply.success(.object(editorText.map { ["editorText": .string($0)] } ?? [:]))] + events
                }
            }
        case .switchBranch(let params, let reply, let nowMs):
            return Self.validated(ChatStore.branchesSwitchSchema.validate(params), reply) { members in
                let (result, notes, events) = switchBranch(Self.trimmed(members["sessionKey"]),
                                                           leafEntryId: Self.trimmed(members["leafEntryId"]), nowMs: nowMs, to: listeners)
                switch result {
                case .failure(let refusal): return [reply.failure(refusal.shape)]
                case .success: return notes + [reply.success([:])] + events
                }
            }
        case .create(let params, let callerScopes, let agentId, let defaultModel, let reply, let nowMs):
            if SessionMutationScope.createRequires(params) == .admin, let refusal = missingAdmin(callerScopes, reply) { return [refusal] }
            switch SessionCreateRequest.parse(params) {
            case .failure(let error):
                return [reply.failure(error.shape)]
            case .success(let request):
                let (result, before, after) = createSession(request, agentId: agentId, defaultModel: defaultModel, nowMs: nowMs,
                                                            ids: &ids, to: listeners)
                switch result {
                case .failure(let error): return [reply.failure(error.shape)]
                case .success(let answer): return before + [reply.success(answer)] + after
                }
            }
        case .observerVisibility(let params, let reply):
            return Self.validated(ChatStore.observerVisibilitySchema.validate(params), reply) { members in
                messageSubscriptions.setObserverVisible(members["visible"] == .bool(true), connectionId: reply.connectionId)
                return [reply.success(["ok": true])]
            }
        case .groupsList(let params, let reply):
            return Self.validated(ChatStore.groupsListSchema.validate(params), reply) { _ in [reply.success(store.groupsListing)] }
        case .groupsPut(let params, let reply, let nowMs):
            return Self.validated(ChatStore.groupsPutSchema.validate(params), reply) { members in
                let (result, effects) = putGroups((members["names"]?.arrayValue ?? []).compactMap(\.stringValue),
                                                  sectionOrder: members["sectionOrder"]?.arrayValue?.compactMap(\.stringValue),
                                                  nowMs: nowMs, to: listeners)
                switch result {
                case .failure(let error): return [reply.failure(error.shape)]
                case .success(let listing): return effects + [reply.success(listing)]
                }
            }
        case .groupsRenameOrDelete(let params, let rename, let reply, let nowMs):
            let schema = rename ? ChatStore.groupsRenameSchema : ChatStore.groupsDeleteSchema
            return Self.validated(schema.validate(params), reply) { members in
                let answer: GatewayEffect
                switch store.renameOrDeleteGroup(members["name"]?.stringValue ?? "", to: rename ? members["to"]?.stringValue ?? "" : nil) {
                case .failure(let error):
                    answer = reply.failure(error.shape)
                case .success(let updated):
                    var listing = store.groupsListing.objectValue ?? [:]
                    listing["ok"] = true
                    listing["updatedSessions"] = .int(Int64(updated))
                    answer = reply.success(.object(listing))
                }
                return [answer] + groupsChanged(nowMs: nowMs, to: listeners)
            }
        case .postAssistant(let text, let sessionKey, let delayMs, let nowMs, let blocks):
            store.schedule(sessionKey: sessionKey, text: text, dueMs: nowMs + delayMs, blocks: blocks)
            return releaseDue(nowMs: nowMs, to: listeners)
        case .setAutoReply(let autoReply):
            store.autoReply = autoReply
            switch autoReply {
            case .off: return [.noteFault("chat agent: no automatic reply", on: "-")]
            case .echo(let delay): return [.noteFault("chat agent: echo reply after \(delay.milliseconds) ms", on: "-")]
            }
        case .setHistoryLag(let omitNewest, let reads):
            store.setHistoryLag(omitNewest: omitNewest, reads: reads)
            let text = omitNewest > 0
                ? "chat.history omits the newest \(omitNewest) rows" + (reads.map { " for the next \($0) reads" } ?? " until cleared")
                : "chat.history is up to date"
            return [.noteFault(text, on: "-")]
        case .holdRun(let sessionKey):
            store.holdRun(sessionKey: sessionKey)
            return [.noteFault("chat agent: a run in \(sessionKey) holds later sends queued", on: "-")]
        case .releaseRun(let sessionKey, let collect, let nowMs):
            let rows = store.releaseRun(sessionKey: sessionKey, collectAll: collect, nowMs: nowMs)
            var effects: [GatewayEffect] = [
                .noteFault("chat agent: the run in \(sessionKey) ended" + (collect ? ", queued inputs collected into one run" : ""), on: "-"),
            ]
            for row in rows { effects += publish(row, to: listeners) }
            return effects + releaseDue(nowMs: nowMs, to: listeners)
        case .interruptRun(let sessionKey):
            _ = store.interruptRun(sessionKey: sessionKey)
            return [.noteFault("chat agent: the run in \(sessionKey) was interrupted", on: "-")]
        case .cancelQueued(let sessionKey):
            let count = store.cancelQueued(sessionKey: sessionKey)
            return [.noteFault("chat agent: \(count) queued inputs in \(sessionKey) cancelled", on: "-")]
        case .compactSession(let sessionKey, let keep, let nowMs):
            let outcome = store.compact(sessionKey: sessionKey, keep: keep)
            return [.noteFault("chat agent: session \(sessionKey) compacted to \(keep) rows", on: "-")]
                + sessionsChanged(sessionKey, reason: .compact, compacted: outcome.compacted, nowMs: nowMs, to: listeners)
        case .clock(let nowMs):
            return releaseDue(nowMs: nowMs, to: listeners)
        case .connectionClosed(let connectionId):
            messageSubscriptions.drop(connectionId: connectionId)
            runWaiters.removeAll { $0.reply.connectionId == connectionId }
            return []
        }
    }

    // MARK: - Operations (also the scripting API's, which needs their typed results)

    /// Deletes `sessionKey` as a `sessions.delete {key}` does (the scripting API's deletion, as
    /// from another device): whether there was such a session, or the wire's refusal; with the
    /// fault note and `sessions.changed` of a removal.
    mutating func deleteSession(_ sessionKey: String, agentId: String, nowMs: Int64,
                                to listeners: [OperatorListener]) -> (Result<Bool, GatewayError>, [GatewayEffect]) {
        defer { refreshDeadline() }
        let (result, notes) = removeSession(["key": .string(sessionKey)])
        switch result {
        case .failure(let error):
            return (.failure(error), [])
        case .success(let outcome):
            let changed = outcome.deleted ? sessionsChanged(outcome.key, reason: .delete, agentId: agentId, nowMs: nowMs, to: listeners) : []
            return (.success(outcome.deleted), notes + changed)
        }
    }

    /// Replaces the session group catalog (`sessions.groups.put`, and the scripting API's):
    /// `{ok: true, groups, sectionOrder}` and `sessions.changed {reason: "groups"}`, or the
    /// refusal (nothing sent).
    mutating func putGroups(_ names: [String], sectionOrder: [String]?, nowMs: Int64,
                            to listeners: [OperatorListener]) -> (Result<JSONValue, SessionGroupError>, [GatewayEffect]) {
        defer { refreshDeadline() }
        switch store.putGroups(names, sectionOrder: sectionOrder) {
        case .failure(let error):
            return (.failure(error), [])
        case .success:
            var listing = store.groupsListing.objectValue ?? [:]
            listing["ok"] = true
            return (.success(.object(listing)), groupsChanged(nowMs: nowMs, to: listeners))
        }
    }

    /// `sessions.rewind` (the wire's and the scripting API's): the refusal, or the cut message's
    /// text with the fault note (`notes`) and `sessions.changed {reason: "rewind"}` (`events`);
    /// the wire's answer goes between them.
    mutating func rewindSession(_ key: String, entryId: String, nowMs: Int64, to listeners: [OperatorListener])
        -> (Result<String?, MessageCutRefusal>, notes: [GatewayEffect], events: [GatewayEffect]) {
        defer { refreshDeadline() }
        switch store.rewind(sessionKey: key, entryId: entryId) {
        case .failure(let refusal):
            return (.failure(refusal), [], [])
        case .success(let editorText):
            return (.success(editorText), [.noteFault("session \(key) rewound to before \(entryId)", on: "-")],
                    sessionsChanged(key, reason: .rewind, nowMs: nowMs, to: listeners))
        }
    }

    /// `sessions.branches.switch` (the wire's and the scripting API's): the refusal, or the fault
    /// note and `sessions.changed {reason: "branch-switch"}`.
    mutating func switchBranch(_ key: String, leafEntryId: String, nowMs: Int64, to listeners: [OperatorListener])
        -> (Result<Void, MessageCutRefusal>, notes: [GatewayEffect], events: [GatewayEffect]) {
        defer { refreshDeadline() }
        switch store.switchBranch(sessionKey: key, leafEntryId: leafEntryId) {
        case .failure(let refusal):
            return (.failure(refusal), [], [])
        case .success:
            return (.success(()), [.noteFault("session \(key) switched to the branch ending at \(leafEntryId)", on: "-")],
                    sessionsChanged(key, reason: .branchSwitch, nowMs: nowMs, to: listeners))
        }
    }

    /// `sessions.create` of a valid request (the wire's and the scripting API's): the refusals
    /// that need the session index, else the session created or adopted, its first message sent
    /// as `chat.send` sends one; `before`: the fault note and the published rows; `after` (the
    /// wire's answer goes between): `sessions.changed` `create` (and `send` when a run started),
    /// then the agent rows due now. Upstream's answer and events:
    /// src/gateway/server-methods/sessions-create.ts@0214f96109264efdf07467fdd0953476fcceef0e.
    mutating func createSession(_ request: SessionCreateRequest, agentId: String, defaultModel: ModelFixture?, nowMs: Int64,
                                ids: inout SeededRandom, to listeners: [OperatorListener])
        -> (Result<JSONValue, GatewayError>, before: [GatewayEffect], after: [GatewayEffect]) {
        defer { refreshDeadline() }
        if let refusal = request.refusal(hasSession: store.hasSession) { return (.failure(GatewayError(refusal)), [], []) }
        let key = request.key ?? "agent:\(agentId):dashboard:\(ids.uuidString().lowercased())"
        let forkFrom = request.fork ? request.parentSessionKey : nil
        let isNew = store.create(key: key, settings: request.settings, forkFrom: forkFrom)
        if let category = request.settings["category"]?.stringValue { _ = store.registerGroup(category) }
        var before: [GatewayEffect] = [
            .noteFault("session \(key) " + (isNew ? "created" : "adopted") + (forkFrom.map { " (forked from \($0))" } ?? ""), on: "-"),
        ]
        var ack: [String: JSONValue] = [:]
        if let text = request.initialMessage {
            let (first, published) = accept(sessionKey: key, text: text, idempotencyKey: ids.uuidString().lowercased(), mode: nil,
                                            nowMs: nowMs, to: listeners)
            ack = first.objectValue ?? [:]
            before += published
        }
        let runStarted = ack["status"] == "started"
        var entry = store.sessionRow(key).objectValue ?? [:]
        if let parent = request.parentSessionKey { entry["parentSessionKey"] = .string(parent) }
        if forkFrom != nil, isNew { entry["forkedFromParent"] = true }
        var answer: [String: JSONValue] = [
            "ok": true, "key": .string(key), "sessionId": .string(store.sessionId(key)),
            "entry": .object(entry), "runStarted": .bool(runStarted),
        ]
        answer.merge(ack) { current, _ in current }
        if let resolved = SessionCreateRequest.resolvedModel(request.settings["model"]?.stringValue, default: defaultModel) {
            answer["resolved"] = resolved
        }
        var after = sessionsChanged(key, reason: .create, agentId: agentId, nowMs: nowMs, to: listeners)
        if runStarted { after += sessionsChanged(key, reason: .send, agentId: agentId, nowMs: nowMs, to: listeners) }
        return (.success(.object(answer)), before, after + releaseDue(nowMs: nowMs, to: listeners))
    }

    /// `details.reason` of a stale lifecycle guard (upstream `SESSION_LIFECYCLE_CHANGED_ERROR_REASON`,
    /// src/config/sessions/lifecycle.ts).
    static let sessionChangedReason = "session-changed"

    // MARK: - Rules

    private mutating func send(_ params: JSONValue?, _ reply: ReplyAddress, nowMs: Int64,
                               to listeners: [OperatorListener]) -> [GatewayEffect] {
        let request: ChatSendRequest
        switch ChatSendRequest.parse(params, generation: generation) {
        case .success(let valid): request = valid
        case .failure(let error): return [reply.failure(error.shape)]
        }
        let (ack, published) = accept(sessionKey: request.sessionKey, text: request.text, idempotencyKey: request.idempotencyKey,
                                      mode: request.mode, nowMs: nowMs, to: listeners)
        return published + [reply.success(ack)] + releaseDue(nowMs: nowMs, to: listeners)
    }

    /// The `chat.send` path (also `sessions.create`'s first message): the rows written and
    /// published, and the ack (the first ack again for a known idempotency key, nothing published).
    private mutating func accept(sessionKey: String, text: String, idempotencyKey: String, mode: ChatQueueMode?, nowMs: Int64,
                                 to listeners: [OperatorListener]) -> (ack: JSONValue, published: [GatewayEffect]) {
        switch store.send(sessionKey: sessionKey, text: text, idempotencyKey: idempotencyKey, mode: mode, nowMs: nowMs) {
        case .accepted(let messages, let first):
            return (first, messages.flatMap { publish($0, to: listeners) })
        case .repeated(let first):
            return (first, [])
        }
    }

    private mutating func abort(_ params: JSONValue?, _ reply: ReplyAddress, nowMs: Int64) -> [GatewayEffect] {
        Self.validated(ChatStore.abortSchema.validate(params), reply) { members in
            let sessionKey = members["sessionKey"]?.stringValue ?? ""
            let stopped: [String]
            if let runId = members["runId"]?.stringValue {
                switch store.activeRunSession(runId) {
                case nil: stopped = []
                case sessionKey?: stopped = [runId]
                case _?: return [Self.invalid(reply, "runId does not match sessionKey")]
                }
            } else {
                stopped = store.activeRunIds(in: sessionKey)
            }
            for runId in stopped { _ = store.abortRun(runId, nowMs: nowMs) }
            var effects = [reply.success(["ok": true, "aborted": .bool(!stopped.isEmpty), "runIds": .array(stopped.map(JSONValue.string))])]
            // The run's event sequence is 1: the fake's runs send no event before their end
            // (upstream: the run's last event sequence + 1).
            for runId in stopped {
                effects.append(.broadcast(event: GatewayEventName.chat.rawValue, payload: [
                    "runId": .string(runId), "sessionKey": .string(sessionKey), "seq": 1,
                    "state": "aborted", "stopReason": .string(ChatStore.abortStopReason),
                ], stateVersion: nil))
            }
            return effects + settleRunWaiters(nowMs: nowMs)
        }
    }

    private mutating func wait(_ params: JSONValue?, _ reply: ReplyAddress, nowMs: Int64) -> [GatewayEffect] {
        Self.validated(ChatStore.waitSchema.validate(params), reply) { members in
            let runId = Self.trimmed(members["runId"])
            let timeoutMs = members["timeoutMs"]?.int64Value ?? ChatStore.defaultWaitTimeoutMs
            if let result = store.waitResult(runId: runId) { return [reply.success(result)] }
            if timeoutMs <= 0 { return [reply.success(store.waitTimeout(runId: runId))] }
            // Saturating: the schema allows any non-negative integer.
            let (deadline, overflow) = nowMs.addingReportingOverflow(timeoutMs)
            runWaiters.append(ChatRunWaiter(reply: reply, runId: runId, deadlineMs: overflow ? .max : deadline))
            return []
        }
    }

    /// The refusals and the removal of `sessions.delete` (wire and scripting API), in upstream's
    /// order (src/gateway/server-methods/sessions-delete.ts@082309bd9aa153f3cdc2c289a9f1969454f1288f):
    /// a blank key, the main session, `archivedOnly` on a session that is not archived, an
    /// `expected…` guard that does not match the session; otherwise the session is removed
    /// (`deleted: false` when there was none), with a fault note when it was.
    private mutating func removeSession(_ members: [String: JSONValue])
        -> (Result<(key: String, deleted: Bool), GatewayError>, [GatewayEffect]) {
        func refuse(_ message: String, details: JSONValue? = nil) -> (Result<(key: String, deleted: Bool), GatewayError>, [GatewayEffect]) {
            (.failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message, details: details))), [])
        }
        let key = Self.trimmed(members["key"])
        if key.isEmpty { return refuse("key required") }
        if key == ChatStore.defaultSessionKey { return refuse("Cannot delete the main session (\(key)).") }
        let exists = store.sessionStates[key] != nil
        if members["archivedOnly"] == .bool(true), !store.isArchived(key) {
            return refuse("Session \(key) is not archived. Archive it first, then delete it.")
        }
        // The fake's sessions have no lifecycle revision, so an expected one never matches.
        let sessionIdMatches = members["expectedSessionId"].map { exists && $0.stringValue == store.sessionId(key) } ?? true
        let updatedAt = store.sessionRow(key)["updatedAt"]?.doubleValue
        let updatedAtMatches = members["expectedSessionUpdatedAt"].map { exists && $0.doubleValue == updatedAt } ?? true
        if !sessionIdMatches || !updatedAtMatches || members["expectedLifecycleRevision"] != nil {
            return refuse("Session \(key) changed before deletion. Retry.", details: ["reason": .string(Self.sessionChangedReason)])
        }
        let deleted = store.delete(sessionKey: key)
        return (.success((key, deleted)), deleted ? [.noteFault("session \(key) deleted", on: "-")] : [])
    }

    /// Appends and publishes the scripted agent's rows due at `nowMs`, then settles the parked waits.
    private mutating func releaseDue(nowMs: Int64, to listeners: [OperatorListener]) -> [GatewayEffect] {
        var effects: [GatewayEffect] = []
        for message in store.releaseDue(nowMs: nowMs) { effects += publish(message, to: listeners) }
        return effects + settleRunWaiters(nowMs: nowMs)
    }

    /// Answers the parked waits whose run ended, then those whose deadline passed, in the order
    /// they were parked.
    private mutating func settleRunWaiters(nowMs: Int64) -> [GatewayEffect] {
        guard !runWaiters.isEmpty else { return [] }
        var effects: [GatewayEffect] = []
        var kept: [ChatRunWaiter] = []
        for waiter in runWaiters {
            if let result = store.waitResult(runId: waiter.runId) {
                effects.append(waiter.reply.success(result))
            } else if waiter.deadlineMs <= nowMs {
                effects.append(waiter.reply.success(store.waitTimeout(runId: waiter.runId)))
            } else {
                kept.append(waiter)
            }
        }
        runWaiters = kept
        return effects
    }

    // MARK: - Publishing

    /// A new row: logged, `session.message` to the sessions subscribed to its session
    /// (``SessionMessageSubscriptions``), and for assistant rows a `chat` `final` event
    /// (upstream `ChatFinalEventSchema`) to every session; both need `operator.read`.
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
    private func publish(_ message: ChatMessage, to listeners: [OperatorListener]) -> [GatewayEffect] {
        var effects: [GatewayEffect] = [.log(.chatMessageStored(message))]
        let row = message.json
        let sessionMessage: JSONValue = [
            "sessionKey": .string(message.sessionKey), "message": row,
            "messageId": .string(message.id), "messageSeq": .int(Int64(message.seq)),
        ]
        let event = GatewayEventName.sessionMessage.rawValue
        for listener in listeners
        where messageSubscriptions.receives(connectionId: listener.connectionId, sessionKey: message.sessionKey)
            && EventScopeGate.allows(event: event, role: listener.role, scopes: listener.scopes) {
            effects.append(.sendSequenced(event: event, payload: sessionMessage, to: listener.connectionId))
        }
        if message.role == .assistant {
            var payload: [String: JSONValue] = [
                "runId": .string(message.runId ?? message.id), "sessionKey": .string(message.sessionKey),
                "seq": .int(Int64(message.seq)), "state": "final", "message": row,
            ]
            if message.runId == nil { payload["stopReason"] = "injected" }
            effects.append(.broadcast(event: GatewayEventName.chat.rawValue, payload: .object(payload), stateVersion: nil))
        }
        return effects
    }

    /// `sessions.changed` to the `sessions.subscribe` subscribers that hold `operator.read`:
    /// `{sessionKey, reason, compacted?, ts, …the session row}`; after a deletion `{sessionKey,
    /// agentId, reason: "delete", ts}` (src/gateway/server-methods/session-change-event.ts
    /// @09741cd22bc30837ed33044c153087af29297269) (upstream `emitSessionsChanged`,
    /// src/gateway/server-methods/sessions.ts).
    private func sessionsChanged(_ sessionKey: String, reason: SessionChangeReason, compacted: Bool? = nil, agentId: String? = nil,
                                 nowMs: Int64, to listeners: [OperatorListener]) -> [GatewayEffect] {
        // A deleted session has no row: upstream's payload is then `{sessionKey, agentId, reason, ts}`.
        var payload = store.hasSession(sessionKey) ? store.sessionRow(sessionKey).objectValue ?? [:] : [:]
        if let agentId { payload["agentId"] = .string(agentId) }
        payload["sessionKey"] = .string(sessionKey)
        payload["reason"] = .string(reason.rawValue)
        payload["ts"] = .int(nowMs)
        if let compacted { payload["compacted"] = .bool(compacted) }
        return toSessionSubscribers(.object(payload), listeners)
    }

    /// `sessions.changed {reason: "groups", ts}`: the group catalog changed (no session key).
    private func groupsChanged(nowMs: Int64, to listeners: [OperatorListener]) -> [GatewayEffect] {
        toSessionSubscribers(["reason": .string(SessionChangeReason.groups.rawValue), "ts": .int(nowMs)], listeners)
    }

    private func toSessionSubscribers(_ payload: JSONValue, _ listeners: [OperatorListener]) -> [GatewayEffect] {
        let event = GatewayEventName.sessionsChanged.rawValue
        return listeners.compactMap { listener in
            guard messageSubscriptions.everySession.contains(listener.connectionId),
                  EventScopeGate.allows(event: event, role: listener.role, scopes: listener.scopes) else { return nil }
            return .sendSequenced(event: event, payload: payload, to: listener.connectionId)
        }
    }

    // MARK: - Helpers

    /// The missing-`operator.admin` refusal when `scopes` lack it.
    private func missingAdmin(_ scopes: [String], _ reply: ReplyAddress) -> GatewayEffect? {
        guard !Set(wire: scopes).contains(.admin) else { return nil }
        return reply.failure(OperatorMethodPolicy.missingScopeError(.admin, requiredScopes: [.admin], style: missingScopeStyle))
    }

    /// A schema's verdict: its `INVALID_REQUEST` answer, or what `body` makes of the params.
    private static func validated<T>(_ result: Result<T, ChatStore.ParamsError>, _ reply: ReplyAddress,
                                     _ body: (T) -> [GatewayEffect]) -> [GatewayEffect] {
        switch result {
        case .failure(let error): [invalid(reply, error.message)]
        case .success(let value): body(value)
        }
    }

    private static func invalid(_ reply: ReplyAddress, _ message: String) -> GatewayEffect {
        reply.failure(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message))
    }

    /// A string member, trimmed (`""` when missing).
    private static func trimmed(_ value: JSONValue?) -> String {
        (value?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
