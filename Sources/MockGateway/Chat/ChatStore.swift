import GatewayProtocol
import Simulation

// What upstream confirms (read for facts, nothing copied; the full list with sources is in
// docs/fidelity.md "Chat, sessions and outbox"):
// - `chat.send` acks `{runId: <idempotencyKey>, status: "started"}`, a repeated key answers the
//   first result (src/gateway/server-methods/chat.ts@00d420411002f771adc6ec05e834a383e0600f4b);
//   the newest schema adds `queueMode: steer|followup|collect|interrupt` and the ack
//   `interruptedActiveRun: true` (packages/gateway-protocol/src/schema/logs-chat.ts, newest).
// - A user row carries `__openclaw.idempotencyKey = "<runId>:user"` inside its envelope, never a
//   top-level `idempotencyKey`.
// - Accepted input that is not in canonical history yet is a pending input (`queued`,
//   `cancelled`, `interrupted`); an input folded into another run is consumed by that run's row.
// The history rules (cursor, delta, reset, receipts) are in ChatHistory.swift.

/// One transcript row of the fake Gateway's chat surface.
public struct ChatMessage: Sendable, Hashable {
    /// Who wrote the row.
    public enum Role: String, Sendable, Hashable {
        /// The operator (a `chat.send`).
        case user
        /// The scripted agent (an echo reply or a posted message).
        case assistant
    }

    /// The transcript entry id (`__openclaw.id`).
    public var id: String
    /// The record sequence within the session, from 1 (`__openclaw.seq`).
    public var seq: Int
    /// The session the row belongs to.
    public var sessionKey: String
    /// Who wrote it.
    public var role: Role
    /// The text.
    public var text: String
    /// When it was written (Gateway clock).
    public var timestampMs: Int64
    /// For user rows: the `idempotencyKey` (run id) of the `chat.send` that wrote it; on the wire
    /// it is `__openclaw.idempotencyKey = "<key>:user"`.
    public var idempotencyKey: String?
    /// For replies: the run (the user message's key) they answer.
    public var runId: String?
    /// Content blocks after the text block (an image, audio or file block a scripted post
    /// carries, which `artifacts.download` serves); empty for every other row.
    public var blocks: [JSONValue] = []

    /// The `__openclaw` envelope: `{id, seq}`, and on a user row `idempotencyKey` =
    /// `"<runId>:user"` (the run is the send's idempotency key).
    var envelope: [String: JSONValue] {
        var envelope: [String: JSONValue] = ["id": .string(id), "seq": .int(Int64(seq))]
        if let idempotencyKey { envelope["idempotencyKey"] = .string(Self.envelopeKey(runId: idempotencyKey)) }
        return envelope
    }

    /// The envelope key of the user row a run wrote: `"<runId>:user"`.
    public static func envelopeKey(runId: String) -> String { "\(runId):user" }

    /// The row as `chat.history` and `session.message` carry it.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "role": .string(role.rawValue),
            "content": .array([["type": "text", "text": .string(text)]] + blocks),
            "timestamp": .int(timestampMs),
            "__openclaw": .object(envelope),
        ]
        if let runId { object["runId"] = .string(runId) }
        return .object(object)
    }
}

/// How the scripted agent answers user messages.
public enum ChatAutoReply: Sendable, Hashable {
    /// An assistant row `echo: <text>` after `delay` on the Gateway clock (the default, at once).
    case echo(delay: Duration)
    /// No automatic reply; assistant rows come only from `postAssistantMessage`.
    case off
}

/// How the next `chat.send` loses its acknowledgement (a fault).
public enum ChatAckDrop: String, Sendable, Hashable {
    /// The message is appended (and answered by the agent), the ack never leaves: an ambiguous send.
    case afterApplying = "after-apply"
    /// The request is lost before it is applied: nothing is appended and no ack is sent.
    case beforeApplying = "before-apply"
}

/// How a `chat.send` is admitted while the session's agent is busy with a run (upstream
/// `queueMode`, newest `ChatSendParamsSchema`).
public enum ChatQueueMode: String, Sendable, Hashable, CaseIterable {
    /// Folded into the active run at once (its row is written now).
    case steer
    /// Queued; starts its own run when the active one ends (the fake's default).
    case followup
    /// Queued; every collected input of the session is folded into one run when the active one ends.
    case collect
    /// Cancels the active run (its queued inputs become `interrupted`) and starts at once.
    case interrupt
}

/// Where an accepted input stands (upstream `ChatPendingInputsPageSchema.items[].state`, plus
/// `consumed` once a canonical row holds it).
enum ChatInputState: String, Sendable, Hashable {
    /// Accepted, waiting for a turn.
    case queued
    /// Dropped before its turn (a session reset, or the scripted agent cancelled the queue).
    case cancelled
    /// Its run was interrupted before the input reached history.
    case interrupted
    /// In canonical history: a row holds it (its own, or the row of the run that collected it).
    case consumed
}

/// One accepted `chat.send`.
struct ChatInput: Sendable, Hashable {
    /// `pending-<n>`, the pending-input id.
    var id: String
    /// The run id (the send's idempotency key).
    var runId: String
    var sessionKey: String
    var text: String
    var acceptedAtMs: Int64
    /// Acceptance order, from 1 (the `pendingBefore` / `nextBefore` position).
    var order: Int
    var mode: ChatQueueMode
    var state: ChatInputState
    /// The entry id of the canonical row that holds it, once consumed.
    var consumedBy: String?
}

/// The result of one `chat.send` against the store.
enum ChatSendOutcome: Sendable, Hashable {
    /// A new message: `messages` were written at once (none while it is queued), answered with `ack`.
    case accepted(messages: [ChatMessage], ack: JSONValue)
    /// The key was seen before: the first result again, nothing appended.
    case repeated(ack: JSONValue)
}

/// How a run of the scripted agent ended.
struct ChatRunEnd: Sendable, Hashable {
    /// When (Gateway clock).
    var atMs: Int64
    /// Stopped by `chat.abort` rather than answered.
    var aborted: Bool
}

/// Where a run of the scripted agent stands (``ChatStore/runState(_:)``).
enum ChatRunState: Sendable, Hashable {
    /// Its reply is still to come.
    case going
    /// It ended.
    case ended(ChatRunEnd)
    /// No `chat.send` started it.
    case unknown
}

/// A reply or post due on the Gateway clock.
struct ScheduledChatMessage: Sendable, Hashable {
    var dueMs: Int64
    var order: Int
    var sessionKey: String
    var text: String
    var runId: String?
    var blocks: [JSONValue] = []
}

/// One chat session: its canonical rows and what invalidates cursors into them.
struct ChatSession: Sendable, Hashable {
    /// The rows of the active transcript, oldest first: the tree's active path without the rows
    /// a compaction hid (kept in step with `tree` by ``ChatStore``).
    var rows: [ChatMessage] = []
    /// Every entry of the transcript with its parent, and the active leaf (TranscriptTree.swift).
    var tree = TranscriptTree()
    /// Rewinds and branch switches so far (each rotates the `sessionId`, as upstream's do).
    var rotations = 0
    /// Entry ids dropped by a reset or a compaction (`chat.message.get` → `not_visible`).
    var hiddenIds: Set<String> = []
    /// The cursor epoch: unique across sessions, renewed by a reset or a compaction.
    var epoch: Int
    /// Resets so far (the `sessionId` changes with each).
    var resets = 0
    var compactions = 0
    /// The agent is busy with a run that has not ended: sends queue (scripted).
    var busy = false
    /// Session settings written by `sessions.patch` (member → value; `null` clears).
    var settings: [String: JSONValue] = [:]
    /// The newest `seq` written in this transcript (kept across compactions).
    var lastSeq = 0

    /// The transcript id: `session-<key>`, renewed by each reset, rewind and branch switch.
    func sessionId(key: String) -> String {
        let renewals = resets + rotations
        return renewals == 0 ? "session-\(key)" : "session-\(key)-\(renewals + 1)"
    }

    /// Re-reads ``rows`` from the tree's active path (after the leaf moved).
    mutating func refreshRows() {
        rows = tree.activePath.filter { !hiddenIds.contains($0.id) }
    }
}

/// The chat transcripts and their scripted agent, as a value: every rule of `chat.send`,
/// `chat.history`, `sessions.*` and the agent's queue is a method taking inputs and returning
/// what to send.
struct ChatStore: Sendable {
    /// The session a `chat.send` without a known session lands in, and `sessions.list`'s first row.
    static let defaultSessionKey = "main"
    /// `chat.history`'s default and maximum `limit` (upstream schema: 1...1000).
    static let defaultHistoryLimit = 200
    static let maximumHistoryLimit = 1_000

    private(set) var sessionStates: [String: ChatSession] = [:]
    private var acks: [String: JSONValue] = [:]
    private(set) var inputs: [String: ChatInput] = [:]
    private var nextEntry = 1
    private var nextEpoch = 1
    private var nextInput = 1
    private var scheduled: [ScheduledChatMessage] = []
    /// How the runs that ended ended, by run id (their reply written, or aborted).
    private(set) var runEnds: [String: ChatRunEnd] = [:]
    private var scheduleOrder = 0
    var autoReply: ChatAutoReply = .echo(delay: .zero)

    /// History lag: the newest `omitNewest` rows of every session are left out of the next
    /// `remainingReads` history answers (`nil`: until cleared).
    private(set) var lagOmitNewest = 0
    private(set) var lagRemainingReads: Int?

    /// The custom session group catalog, in display order (SessionGroups.swift).
    var groupCatalog: [String] = []
    /// The sidebar section order `sessions.groups.put` stored.
    var sectionOrder: [String] = []

    init() {}

    /// Every session with rows or state, by key → rows.
    var sessions: [String: [ChatMessage]] { sessionStates.mapValues(\.rows) }

    /// The rows of `sessionKey`, oldest first.
    func messages(in sessionKey: String) -> [ChatMessage] { sessionStates[sessionKey]?.rows ?? [] }

    /// The session `key`, created on first use.
    mutating func session(_ key: String) -> ChatSession {
        if let session = sessionStates[key] { return session }
        let session = ChatSession(epoch: nextEpoch)
        nextEpoch += 1
        sessionStates[key] = session
        return session
    }

    /// The transcript id of `key`.
    func sessionId(_ key: String) -> String { (sessionStates[key] ?? ChatSession(epoch: 0)).sessionId(key: key) }

    // MARK: - chat.send

    /// Applies a send: a new key is accepted (written at once, or queued while the agent is busy
    /// and the mode queues); a known key returns the first ack and changes nothing.
    mutating func send(sessionKey: String, text: String, idempotencyKey: String, mode: ChatQueueMode?, nowMs: Int64) -> ChatSendOutcome {
        if let ack = acks[idempotencyKey] { return .repeated(ack: ack) }
        let busy = session(sessionKey).busy
        let mode = mode ?? .followup
        var input = ChatInput(id: "pending-\(nextInput)", runId: idempotencyKey, sessionKey: sessionKey, text: text,
                              acceptedAtMs: nowMs, order: nextInput, mode: mode, state: .queued)
        nextInput += 1
        var ackObject: [String: JSONValue] = ["runId": .string(idempotencyKey), "status": "started"]
        var written: [ChatMessage] = []
        if !busy {
            let row = append(sessionKey: sessionKey, role: .user, text: text, nowMs: nowMs, idempotencyKey: idempotencyKey, runId: nil)
            input.state = .consumed
            input.consumedBy = row.id
            written.append(row)
            scheduleEcho(sessionKey: sessionKey, text: text, runId: idempotencyKey, nowMs: nowMs)
        } else {
            switch mode {
            case .steer:
                // Folded into the active run: in history now; the active run answers it.
                let row = append(sessionKey: sessionKey, role: .user, text: text, nowMs: nowMs, idempotencyKey: idempotencyKey, runId: nil)
                input.state = .consumed
                input.consumedBy = row.id
                written.append(row)
            case .followup, .collect:
                break
            case .interrupt:
                interruptRun(sessionKey: sessionKey)
                let row = append(sessionKey: sessionKey, role: .user, text: text, nowMs: nowMs, idempotencyKey: idempotencyKey, runId: nil)
                input.state = .consumed
                input.consumedBy = row.id
                written.append(row)
                scheduleEcho(sessionKey: sessionKey, text: text, runId: idempotencyKey, nowMs: nowMs)
                ackObject["interruptedActiveRun"] = true
            }
        }
        inputs[idempotencyKey] = input
        let ack = JSONValue.object(ackObject)
        acks[idempotencyKey] = ack
        return .accepted(messages: written, ack: ack)
    }

    /// Whether a message with this key was accepted.
    func hasApplied(idempotencyKey: String) -> Bool { acks[idempotencyKey] != nil }

    private mutating func scheduleEcho(sessionKey: String, text: String, runId: String, nowMs: Int64) {
        if case .echo(let delay) = autoReply {
            schedule(sessionKey: sessionKey, text: "echo: \(text)", dueMs: nowMs + delay.milliseconds, runId: runId)
        }
    }

    // MARK: - The scripted agent's runs

    /// The inputs of `sessionKey` still waiting for a turn, in acceptance order.
    func queuedInputs(_ sessionKey: String) -> [ChatInput] {
        inputs.values.filter { $0.sessionKey == sessionKey && $0.state == .queued }.sorted { $0.order < $1.order }
    }

    /// The agent starts a run that does not end until released: later sends queue.
    mutating func holdRun(sessionKey: String) {
        var state = session(sessionKey)
        state.busy = true
        sessionStates[sessionKey] = state
    }

    /// The active run ends; queued inputs take their turns in order: each `followup` its own run,
    /// and the `collect` ones (every queued one with `collectAll`) folded into one run whose row
    /// carries the first input's key. Returns the rows written.
    mutating func releaseRun(sessionKey: String, collectAll: Bool, nowMs: Int64) -> [ChatMessage] {
        var state = session(sessionKey)
        state.busy = false
        sessionStates[sessionKey] = state
        let queued = queuedInputs(sessionKey)
        var written: [ChatMessage] = []
        let collected = queued.filter { collectAll || $0.mode == .collect }
        for input in queued where !collected.contains(input) {
            let row = append(sessionKey: sessionKey, role: .user, text: input.text, nowMs: nowMs, idempotencyKey: input.runId, runId: nil)
            consume(input.runId, by: row.id)
            written.append(row)
            scheduleEcho(sessionKey: sessionKey, text: input.text, runId: input.runId, nowMs: nowMs)
        }
        if let first = collected.first {
            let text = collected.map(\.text).joined(separator: "\n")
            let row = append(sessionKey: sessionKey, role: .user, text: text, nowMs: nowMs, idempotencyKey: first.runId, runId: nil)
            for input in collected { consume(input.runId, by: row.id) }
            written.append(row)
            scheduleEcho(sessionKey: sessionKey, text: text, runId: first.runId, nowMs: nowMs)
        }
        return written
    }

    /// The active run is cancelled: its queued inputs become `interrupted` and never reach history.
    /// - Returns: whether a run was active.
    @discardableResult
    mutating func interruptRun(sessionKey: String) -> Bool {
        var state = session(sessionKey)
        let wasBusy = state.busy
        state.busy = false
        sessionStates[sessionKey] = state
        for input in queuedInputs(sessionKey) { inputs[input.runId]?.state = .interrupted }
        return wasBusy
    }

    /// The queued inputs of `sessionKey` are dropped (`cancelled`). Returns how many.
    @discardableResult
    mutating func cancelQueued(sessionKey: String) -> Int {
        let queued = queuedInputs(sessionKey)
        for input in queued { inputs[input.runId]?.state = .cancelled }
        return queued.count
    }

    private mutating func consume(_ runId: String, by entryId: String) {
        inputs[runId]?.state = .consumed
        inputs[runId]?.consumedBy = entryId
    }

    // MARK: - Runs: chat.abort and agent.wait

    /// Where the run `runId` stands: going while its reply is scheduled or its input waits for a
    /// turn; ended when its reply was written or it was aborted (``runEnds``), or when its send
    /// was taken without a reply to come (auto reply off, a cancelled or interrupted input: ended
    /// when accepted); unknown when no `chat.send` used that key.
    func runState(_ runId: String) -> ChatRunState {
        if scheduled.contains(where: { $0.runId == runId }) || inputs[runId]?.state == .queued { return .going }
        if let end = runEnds[runId] { return .ended(end) }
        if let input = inputs[runId] { return .ended(ChatRunEnd(atMs: input.acceptedAtMs, aborted: false)) }
        return .unknown
    }

    /// The runs of `sessionKey` still going: sends whose reply is scheduled and not written yet
    /// (the scripted agent's run ends when its reply is written), in schedule order.
    func activeRunIds(in sessionKey: String) -> [String] {
        scheduled.filter { $0.sessionKey == sessionKey }
            .sorted { ($0.dueMs, $0.order) < ($1.dueMs, $1.order) }
            .compactMap(\.runId)
    }

    /// The session of the active run `runId`, or `nil` when no run of that id is going.
    func activeRunSession(_ runId: String) -> String? {
        scheduled.first { $0.runId == runId }?.sessionKey
    }

    /// Ends the active run `runId` without its reply (the scheduled reply is dropped).
    /// - Returns: whether a run was going.
    @discardableResult
    mutating func abortRun(_ runId: String, nowMs: Int64) -> Bool {
        let before = scheduled.count
        scheduled.removeAll { $0.runId == runId }
        guard scheduled.count < before else { return false }
        runEnds[runId] = ChatRunEnd(atMs: nowMs, aborted: true)
        return true
    }

    // MARK: - Sessions: reset and compaction

    /// `sessions.reset`: a new transcript (new `sessionId`, no rows, cursors invalid); queued
    /// inputs are cancelled.
    mutating func reset(sessionKey: String) {
        var state = session(sessionKey)
        state.hiddenIds.formUnion(state.rows.map(\.id))
        state.rows = []
        state.tree = TranscriptTree()
        state.resets += 1
        state.busy = false
        state.lastSeq = 0
        state.epoch = nextEpoch
        nextEpoch += 1
        sessionStates[sessionKey] = state
        cancelQueued(sessionKey: sessionKey)
    }

    /// Compaction: the transcript keeps its newest `keep` rows, the rest leave the visible path;
    /// cursors into the session are invalid afterwards.
    /// - Returns: whether rows were dropped, and how many rows remain.
    mutating func compact(sessionKey: String, keep: Int) -> (compacted: Bool, kept: Int) {
        var state = session(sessionKey)
        let keep = max(0, keep)
        let dropped = max(0, state.rows.count - keep)
        if dropped > 0 {
            state.hiddenIds.formUnion(state.rows.prefix(dropped).map(\.id))
            state.rows.removeFirst(dropped)
        }
        state.compactions += 1
        state.epoch = nextEpoch
        nextEpoch += 1
        sessionStates[sessionKey] = state
        return (dropped > 0, state.rows.count)
    }

    /// Whether `key` is a session of the index (it has rows or state); the default session always is.
    func hasSession(_ key: String) -> Bool { key == Self.defaultSessionKey || sessionStates[key] != nil }

    /// Whether `key` was archived (`sessions.patch {archived: true}`).
    func isArchived(_ key: String) -> Bool { sessionStates[key]?.settings["archived"] == .bool(true) }

    /// `sessions.delete`: the session leaves the index with its transcript; its queued inputs are
    /// cancelled and its scheduled replies dropped. Its entry ids stay unknown afterwards.
    /// - Returns: whether there was a session to delete.
    mutating func delete(sessionKey: String) -> Bool {
        guard sessionStates[sessionKey] != nil else { return false }
        cancelQueued(sessionKey: sessionKey)
        scheduled.removeAll { $0.sessionKey == sessionKey }
        sessionStates[sessionKey] = nil
        return true
    }

    /// `sessions.patch`: writes the given settings (`null` clears one).
    mutating func patch(sessionKey: String, settings: [String: JSONValue]) {
        var state = session(sessionKey)
        for (name, value) in settings {
            if value == .null { state.settings[name] = nil } else { state.settings[name] = value }
        }
        sessionStates[sessionKey] = state
    }

    // MARK: - Scheduled rows

    /// Schedules an assistant row at `dueMs` (due at once when `dueMs` is not in the future).
    mutating func schedule(sessionKey: String, text: String, dueMs: Int64, runId: String? = nil, blocks: [JSONValue] = []) {
        scheduleOrder += 1
        scheduled.append(ScheduledChatMessage(dueMs: dueMs, order: scheduleOrder, sessionKey: sessionKey, text: text,
                                              runId: runId, blocks: blocks))
    }

    /// The earliest scheduled row, if any.
    var nextDueMs: Int64? { scheduled.map(\.dueMs).min() }

    /// Appends every scheduled row that is due at `nowMs`, in schedule order.
    mutating func releaseDue(nowMs: Int64) -> [ChatMessage] {
        let (due, rest) = scheduled.partitioned { $0.dueMs <= nowMs }
        scheduled = rest
        return due.sorted { ($0.dueMs, $0.order) < ($1.dueMs, $1.order) }.map { item in
            if let runId = item.runId { runEnds[runId] = ChatRunEnd(atMs: nowMs, aborted: false) }
            return append(sessionKey: item.sessionKey, role: .assistant, text: item.text, nowMs: nowMs, idempotencyKey: nil,
                          runId: item.runId, blocks: item.blocks)
        }
    }

    private mutating func append(sessionKey: String, role: ChatMessage.Role, text: String, nowMs: Int64,
                                 idempotencyKey: String?, runId: String?, blocks: [JSONValue] = []) -> ChatMessage {
        var state = session(sessionKey)
        // `seq` keeps counting across compactions; a reset starts a new transcript at 1.
        let lastSeq = state.lastSeq
        let message = ChatMessage(id: "msg-\(nextEntry)", seq: lastSeq + 1, sessionKey: sessionKey, role: role,
                                  text: text, timestampMs: nowMs, idempotencyKey: idempotencyKey, runId: runId,
                                  blocks: blocks)
        nextEntry += 1
        state.rows.append(message)
        state.tree.append(message)
        state.lastSeq = message.seq
        sessionStates[sessionKey] = state
        return message
    }

    // MARK: - History lag

    /// Makes the next `reads` history answers leave out the newest `omitNewest` rows (`reads`
    /// `nil`: until cleared; `omitNewest` 0 clears).
    mutating func setHistoryLag(omitNewest: Int, reads: Int?) {
        lagOmitNewest = max(0, omitNewest)
        lagRemainingReads = lagOmitNewest == 0 ? nil : reads.map { max(0, $0) }
        if lagRemainingReads == 0 { lagOmitNewest = 0 }
    }

    /// The rows of `sessionKey` a history read sees now (counting one read against an armed lag).
    mutating func visibleRows(_ sessionKey: String) -> [ChatMessage] {
        var rows = messages(in: sessionKey)
        if lagOmitNewest > 0 {
            rows.removeLast(min(lagOmitNewest, rows.count))
            if let remaining = lagRemainingReads {
                lagRemainingReads = remaining - 1
                if remaining - 1 <= 0 { setHistoryLag(omitNewest: 0, reads: nil) }
            }
        }
        return rows
    }

    // MARK: - sessions.list

    /// One `sessions.list` row (also the `entry` of `sessions.patch` / `sessions.reset`).
    func sessionRow(_ key: String) -> JSONValue {
        let messages = self.messages(in: key)
        var row: [String: JSONValue] = [
            "key": .string(key), "sessionId": .string(sessionId(key)), "kind": "direct",
            "updatedAt": .int(messages.last?.timestampMs ?? 0), "messageCount": .int(Int64(messages.count)),
        ]
        if let last = messages.last { row["lastMessagePreview"] = .string(String(last.text.prefix(120))) }
        for (name, value) in sessionStates[key]?.settings ?? [:] where row[name] == nil { row[name] = value }
        return .object(row)
    }

    /// The session index: the default session first, then every other session, by key.
    func sessionsList(nowMs: Int64) -> JSONValue {
        var keys = Set(sessionStates.keys)
        keys.insert(Self.defaultSessionKey)
        let ordered = [Self.defaultSessionKey] + keys.subtracting([Self.defaultSessionKey]).sorted()
        let rows = ordered.map(sessionRow)
        return ["ts": .int(nowMs), "count": .int(Int64(rows.count)), "sessions": .array(rows)]
    }
}

// `sessions.fork` (refusals in Chat/SessionBranches.swift): here because it writes the session index.
extension ChatStore {
    /// `sessions.fork`: a new session `targetKey` whose transcript is the active path before the
    /// user message `entryId` (the same entries, ids and `seq`), the source unchanged.
    /// - Returns: the text of the cut message (upstream's `editorText`, `nil` when empty).
    mutating func fork(sessionKey: String, entryId: String, targetKey: String) -> Result<String?, MessageCutRefusal> {
        guard hasSession(sessionKey) else { return .failure(.missingSession(sessionKey)) }
        let source = session(sessionKey)
        if source.busy || hasScheduledReply(sessionKey) { return .failure(.busy(.fork)) }
        guard let node = source.tree.nodes[entryId], !source.hiddenIds.contains(entryId) else { return .failure(.missingEntry(entryId)) }
        guard node.message.role == .user else { return .failure(.notUserMessage(entryId)) }
        guard let index = source.rows.firstIndex(where: { $0.id == entryId }) else { return .failure(.offActivePath(entryId)) }
        let cut = source.rows[index]
        var fork = session(targetKey)
        fork.adoptCopies(of: source.rows.prefix(index), as: targetKey)
        sessionStates[targetKey] = fork
        return .success(cut.text.isEmpty ? nil : cut.text)
    }

    /// Whether a scripted reply of `sessionKey` is still waiting (its run has not ended).
    func hasScheduledReply(_ sessionKey: String) -> Bool { scheduled.contains { $0.sessionKey == sessionKey } }

    // MARK: - sessions.rewind and sessions.branches.switch (refusals in Chat/SessionBranches.swift)

    /// `sessions.rewind`: the active leaf moves to the parent of the user message `entryId` on the
    /// active path; the old tip stays in the tree as another branch. The transcript id rotates
    /// and cursors into the session are invalid afterwards. Refusals in upstream's order: no
    /// session, a run going, archived, no such entry, not a user message, off the active path.
    /// - Returns: the text of the cut message (upstream's `editorText`, `nil` when empty).
    mutating func rewind(sessionKey: String, entryId: String) -> Result<String?, MessageCutRefusal> {
        guard hasSession(sessionKey) else { return .failure(.missingSession(sessionKey)) }
        // A refusal leaves the index as it was (the main session is not created by reading it).
        var state = sessionStates[sessionKey] ?? ChatSession(epoch: 0)
        if state.busy || hasScheduledReply(sessionKey) { return .failure(.busy(.rewind)) }
        if isArchived(sessionKey) { return .failure(.archived(.rewind)) }
        guard let node = state.tree.nodes[entryId], !state.hiddenIds.contains(entryId) else { return .failure(.missingEntry(entryId)) }
        guard node.message.role == .user else { return .failure(.notUserMessage(entryId)) }
        guard state.rows.contains(where: { $0.id == entryId }) else { return .failure(.offActivePath(entryId)) }
        state.tree.moveLeaf(to: node.parentId)
        renewAfterLeafMove(&state)
        sessionStates[sessionKey] = state
        return .success(node.message.text.isEmpty ? nil : node.message.text)
    }

    /// `sessions.branches.switch`: the active leaf moves to the tip `leafEntryId`. Refusals in
    /// upstream's order: no session, a run going, archived, no such entry, not a tip, already active.
    mutating func switchBranch(sessionKey: String, leafEntryId: String) -> Result<Void, MessageCutRefusal> {
        guard hasSession(sessionKey) else { return .failure(.missingSession(sessionKey)) }
        var state = sessionStates[sessionKey] ?? ChatSession(epoch: 0)
        if state.busy || hasScheduledReply(sessionKey) { return .failure(.busy(.switchBranch)) }
        if isArchived(sessionKey) { return .failure(.archived(.switchBranch)) }
        guard state.tree.contains(leafEntryId), !state.hiddenIds.contains(leafEntryId) else {
            return .failure(.missingBranch(leafEntryId))
        }
        guard state.tree.tips.contains(leafEntryId) else { return .failure(.notBranchTip(leafEntryId)) }
        guard state.tree.leafId != leafEntryId else { return .failure(.alreadyActive(leafEntryId)) }
        state.tree.moveLeaf(to: leafEntryId)
        renewAfterLeafMove(&state)
        sessionStates[sessionKey] = state
        return .success(())
    }

    /// A moved leaf rotates the transcript id and invalidates cursors (a new epoch).
    private mutating func renewAfterLeafMove(_ state: inout ChatSession) {
        state.refreshRows()
        state.rotations += 1
        state.epoch = nextEpoch
        nextEpoch += 1
    }

    // MARK: - sessions.create

    /// `sessions.create`: the session `key` is created, or adopted when it exists, with `settings`
    /// written as `sessions.patch` writes them; with `forkFrom` a new session's transcript is that
    /// session's active path (the same entries, ids and `seq`).
    /// - Returns: whether the session is new.
    @discardableResult
    mutating func create(key: String, settings: [String: JSONValue], forkFrom parentKey: String?) -> Bool {
        let isNew = sessionStates[key] == nil
        var state = session(key)
        if isNew, let parentKey { state.adoptCopies(of: messages(in: parentKey), as: key) }
        sessionStates[key] = state
        patch(sessionKey: key, settings: settings)
        return isNew
    }
}

extension ChatSession {
    /// Starts this (new) session's transcript as a linear copy of `rows` under `key`: a fork's
    /// rows before its cut, or a created session's copy of its parent. Same ids and `seq`.
    mutating func adoptCopies(of source: some Sequence<ChatMessage>, as key: String) {
        rows = source.map { row in
            var copy = row
            copy.sessionKey = key
            return copy
        }
        tree = TranscriptTree(linear: rows)
        lastSeq = rows.last?.seq ?? 0
    }
}
