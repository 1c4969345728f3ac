import GatewayProtocol
import Simulation

// What upstream confirms (read for facts, nothing copied):
// - `chat.send` params `{sessionKey, message, idempotencyKey (non-empty), thinking?, attachments?,
//   timeoutMs?, ...}`; the ack is `{runId: <idempotencyKey>, status: "started"}`; a repeated key
//   answers the cached first result, or `{runId, status: "in_flight"}` while the run is active
//   (openclaw/openclaw packages/gateway-protocol/src/schema/logs-chat.ts@058f7b075d19da2c32d72fcb5de9f05058c09527,
//   src/gateway/server-methods/chat.ts@00d420411002f771adc6ec05e834a383e0600f4b).
// - `chat.history` params `{sessionKey, limit? (1-1000), maxChars?}`; the reply is
//   `{sessionKey, sessionId, messages, thinkingLevel, verboseLevel}` (chat.ts, same commit); rows
//   carry an `__openclaw` envelope with `id` (transcript entry) and `seq` (positive record
//   sequence), paging uses `hasMore` / `nextOffset` (docs/gateway/clients.md@626d59353192dec0c9b49a4ea4f578dd394c96e1).
// - Rows are `{role, content:[{type:"text", text}], timestamp}` (chat.ts placeholder rows); the
//   transcript line of an injected message carries `message.idempotencyKey` (chat.ts
//   `transcriptHasIdempotencyKey`).
// Unconfirmed in the stored upstream sources, kept tolerant: the `deltaCursor` catch-up named by
// the December 2026 audit (accepted as a parameter, answered as a member), the `session.message`
// payload shape (`{sessionKey, message}`), and that user rows echo the send's `idempotencyKey`.

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
    /// For user rows: the `idempotencyKey` of the `chat.send` that wrote it.
    public var idempotencyKey: String?
    /// For replies: the run (the user message's key) they answer.
    public var runId: String?

    /// The row as `chat.history` and `session.message` carry it.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "role": .string(role.rawValue),
            "content": [["type": "text", "text": .string(text)]],
            "timestamp": .int(timestampMs),
            "__openclaw": ["id": .string(id), "seq": .int(Int64(seq))],
        ]
        if let idempotencyKey { object["idempotencyKey"] = .string(idempotencyKey) }
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

/// The result of one `chat.send` against the store.
enum ChatSendOutcome: Sendable, Hashable {
    /// A new message: appended as `message`, answered with `ack`.
    case appended(message: ChatMessage, ack: JSONValue)
    /// The key was seen before: the first result again, nothing appended.
    case repeated(ack: JSONValue)
}

/// A reply or post due on the Gateway clock.
struct ScheduledChatMessage: Sendable, Hashable {
    var dueMs: Int64
    var order: Int
    var sessionKey: String
    var text: String
    var runId: String?
}

/// The chat transcripts and their scripted agent, as a value: every rule of `chat.send`,
/// `chat.history` and `sessions.list` is a method taking inputs and returning what to send.
struct ChatStore: Sendable {
    /// The session a `chat.send` without a known session lands in, and `sessions.list`'s first row.
    static let defaultSessionKey = "main"
    /// `chat.history`'s default and maximum `limit` (upstream schema: 1...1000).
    static let defaultHistoryLimit = 200
    static let maximumHistoryLimit = 1_000

    private(set) var sessions: [String: [ChatMessage]] = [:]
    private var acks: [String: JSONValue] = [:]
    private var nextEntry = 1
    private var scheduled: [ScheduledChatMessage] = []
    private var scheduleOrder = 0
    var autoReply: ChatAutoReply = .echo(delay: .zero)

    /// History lag: the newest `omitNewest` rows of every session are left out of the next
    /// `remainingReads` history answers (`nil`: until cleared).
    private(set) var lagOmitNewest = 0
    private(set) var lagRemainingReads: Int?

    init() {}

    /// The rows of `sessionKey`, oldest first.
    func messages(in sessionKey: String) -> [ChatMessage] { sessions[sessionKey] ?? [] }

    // MARK: - chat.send

    /// Applies a send: a new key appends a user row (and schedules the agent's reply); a known key
    /// returns the first ack and appends nothing.
    mutating func send(sessionKey: String, text: String, idempotencyKey: String, nowMs: Int64) -> ChatSendOutcome {
        if let ack = acks[idempotencyKey] { return .repeated(ack: ack) }
        let message = append(sessionKey: sessionKey, role: .user, text: text, nowMs: nowMs,
                             idempotencyKey: idempotencyKey, runId: nil)
        let ack: JSONValue = ["runId": .string(idempotencyKey), "status": "started"]
        acks[idempotencyKey] = ack
        if case .echo(let delay) = autoReply {
            schedule(sessionKey: sessionKey, text: "echo: \(text)", dueMs: nowMs + delay.milliseconds, runId: idempotencyKey)
        }
        return .appended(message: message, ack: ack)
    }

    /// Whether a message with this key was applied.
    func hasApplied(idempotencyKey: String) -> Bool { acks[idempotencyKey] != nil }

    // MARK: - The scripted agent

    /// Schedules an assistant row at `dueMs` (due at once when `dueMs` is not in the future).
    mutating func schedule(sessionKey: String, text: String, dueMs: Int64, runId: String? = nil) {
        scheduleOrder += 1
        scheduled.append(ScheduledChatMessage(dueMs: dueMs, order: scheduleOrder, sessionKey: sessionKey, text: text, runId: runId))
    }

    /// The earliest scheduled row, if any.
    var nextDueMs: Int64? { scheduled.map(\.dueMs).min() }

    /// Appends every scheduled row that is due at `nowMs`, in schedule order.
    mutating func releaseDue(nowMs: Int64) -> [ChatMessage] {
        let (due, rest) = scheduled.partitioned { $0.dueMs <= nowMs }
        scheduled = rest
        return due.sorted { ($0.dueMs, $0.order) < ($1.dueMs, $1.order) }.map { item in
            append(sessionKey: item.sessionKey, role: .assistant, text: item.text, nowMs: nowMs, idempotencyKey: nil, runId: item.runId)
        }
    }

    private mutating func append(sessionKey: String, role: ChatMessage.Role, text: String, nowMs: Int64,
                                 idempotencyKey: String?, runId: String?) -> ChatMessage {
        var rows = sessions[sessionKey] ?? []
        let message = ChatMessage(id: "msg-\(nextEntry)", seq: (rows.last?.seq ?? 0) + 1, sessionKey: sessionKey, role: role,
                                  text: text, timestampMs: nowMs, idempotencyKey: idempotencyKey, runId: runId)
        nextEntry += 1
        rows.append(message)
        sessions[sessionKey] = rows
        return message
    }

    // MARK: - chat.history

    /// Makes the next `reads` history answers leave out the newest `omitNewest` rows (`reads`
    /// `nil`: until cleared; `omitNewest` 0 clears).
    mutating func setHistoryLag(omitNewest: Int, reads: Int?) {
        lagOmitNewest = max(0, omitNewest)
        lagRemainingReads = lagOmitNewest == 0 ? nil : reads.map { max(0, $0) }
        if lagRemainingReads == 0 { lagOmitNewest = 0 }
    }

    /// Why request parameters are refused (the `INVALID_REQUEST` message).
    struct ParamsError: Error, Sendable, Hashable {
        var message: String
    }

    /// A `chat.history` request, read.
    struct HistoryRequest: Sendable, Hashable {
        var sessionKey: String
        var limit: Int
        var offset: Int
        var afterSeq: Int?
    }

    /// Reads the parameters of `chat.history` (upstream `ChatHistoryParamsSchema`, plus `offset`
    /// paging and the tolerant `deltaCursor`).
    /// - Returns: the request, or the `INVALID_REQUEST` message.
    static func historyRequest(_ params: JSONValue?) -> Result<HistoryRequest, ParamsError> {
        guard let sessionKey = params?["sessionKey"]?.stringValue, !sessionKey.isEmpty else {
            return .failure(ParamsError(message: "invalid chat.history params: sessionKey required"))
        }
        var limit = defaultHistoryLimit
        if let raw = params?["limit"], raw != .null {
            guard let value = raw.int64Value, (1...Int64(maximumHistoryLimit)).contains(value) else {
                return .failure(ParamsError(message: "invalid chat.history params: limit must be an integer from 1 to \(maximumHistoryLimit)"))
            }
            limit = Int(value)
        }
        var offset = 0
        if let raw = params?["offset"], raw != .null {
            guard let value = raw.int64Value, value >= 0, value <= Int64(Int32.max) else {
                return .failure(ParamsError(message: "invalid chat.history params: offset must be a non-negative integer"))
            }
            offset = Int(value)
        }
        var afterSeq: Int?
        if let raw = params?["deltaCursor"], raw != .null {
            let number = raw.int64Value ?? raw.stringValue.flatMap { Int64($0) }
            guard let number, number >= 0, number <= Int64(Int32.max) else {
                return .failure(ParamsError(message: "invalid chat.history params: deltaCursor must be a cursor from an earlier chat.history"))
            }
            afterSeq = Int(number)
        }
        return .success(HistoryRequest(sessionKey: sessionKey, limit: limit, offset: offset, afterSeq: afterSeq))
    }

    /// Answers a history request (counting one read against an armed lag).
    mutating func history(_ request: HistoryRequest) -> JSONValue {
        var rows = messages(in: request.sessionKey)
        if lagOmitNewest > 0 {
            rows.removeLast(min(lagOmitNewest, rows.count))
            if let remaining = lagRemainingReads {
                lagRemainingReads = remaining - 1
                if remaining - 1 <= 0 { setHistoryLag(omitNewest: 0, reads: nil) }
            }
        }
        let visibleCursor = rows.last?.seq ?? 0
        if let after = request.afterSeq { rows = rows.filter { $0.seq > after } }
        // Newest `limit` rows after skipping the newest `offset` (paging backward).
        let end = max(0, rows.count - request.offset)
        let start = max(0, end - request.limit)
        let page = Array(rows[start..<end])
        var payload: [String: JSONValue] = [
            "sessionKey": .string(request.sessionKey),
            "sessionId": .string("session-\(request.sessionKey)"),
            "messages": .array(page.map(\.json)),
            "thinkingLevel": "off",
            "hasMore": .bool(start > 0),
            "deltaCursor": .string(String(visibleCursor)),
        ]
        if start > 0 { payload["nextOffset"] = .int(Int64(request.offset + (end - start))) }
        return .object(payload)
    }

    // MARK: - sessions.list

    /// The session index: the default session first, then every session with rows, by key.
    func sessionsList(nowMs: Int64) -> JSONValue {
        var keys = Set(sessions.keys)
        keys.insert(Self.defaultSessionKey)
        let ordered = [Self.defaultSessionKey] + keys.subtracting([Self.defaultSessionKey]).sorted()
        let rows: [JSONValue] = ordered.map { key in
            let messages = self.messages(in: key)
            var row: [String: JSONValue] = [
                "key": .string(key), "sessionId": .string("session-\(key)"), "kind": "direct",
                "updatedAt": .int(messages.last?.timestampMs ?? 0), "messageCount": .int(Int64(messages.count)),
            ]
            if let last = messages.last { row["lastMessagePreview"] = .string(String(last.text.prefix(120))) }
            return .object(row)
        }
        return ["ts": .int(nowMs), "count": .int(Int64(rows.count)), "sessions": .array(rows)]
    }
}
