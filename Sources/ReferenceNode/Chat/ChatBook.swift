import Foundation
import GatewayProtocol

// The app rules this follows (read for facts, nothing copied): the Android app's durable outbox
// keeps at most 50 rows per Gateway and refuses the next one visibly (`OUTBOX_MAX_QUEUED`,
// `QueueFull`); a row's id doubles as the `chat.send` idempotency key and stays the key on every
// retry; an acknowledged row is only `accepted` and is retired exclusively when canonical
// `chat.history` shows it ("the started ACK is emitted before the transcript write"); a send
// without an ack is "delivery unconfirmed" and never replayed blindly; rows flush strictly in
// creation order; every operation is scoped to one Gateway; the transcript cache is disposable
// and per Gateway (openclaw/openclaw `apps/android`, `ChatOutbox`; `docs/platforms/ios.md` and
// `docs/platforms/android.md`; docs/protocol.md §8.4). The newest Gateway's history contract
// (docs/protocol.md §8.2): a user row names its send in `__openclaw.idempotencyKey =
// "<key>:user"`; `inputRunIds` asks for `inputReceipts` (`consumed` retires, `pending` means
// accepted and never resent); `pendingInputs` lists accepted sends not in history yet; the tail's
// `deltaCursor` goes back as `cursor`, and `{kind:"reset"}` means: drop what was merged and fetch
// a fresh tail. Cursors are kept per Gateway and session and never sent anywhere else.

/// A message the user wrote, waiting for the Gateway's canonical history to show it.
public struct OutboxMessage: Sendable, Hashable, Codable {
    /// Where the message stands.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Written, not sent yet (offline, or behind an earlier message).
        case queued
        /// A `chat.send` is in flight.
        case sending
        /// The Gateway acknowledged it; history has not shown it yet.
        case accepted
        /// The request went out and no ack came: delivery is ambiguous until history decides.
        case unconfirmed
        /// The Gateway refused it (shown, never resent automatically).
        case failed
    }

    /// The idempotency key of every `chat.send` of this message.
    public var key: String
    /// The Gateway it belongs to (URL key).
    public var gateway: String
    /// The session it is written into.
    public var sessionKey: String
    /// The text.
    public var text: String
    /// Creation order (the flush order).
    public var order: Int
    /// Where it stands.
    public var status: Status
}

/// One row of the cached transcript.
public struct TranscriptRow: Sendable, Hashable, Codable {
    /// `user` or `assistant`.
    public var role: String
    /// The text.
    public var text: String
    /// `__openclaw.id`, when the Gateway sent one.
    public var entryId: String?
    /// `__openclaw.seq`, when the Gateway sent one.
    public var seq: Int?

    /// Reads a `chat.history` / `session.message` row (text from `content[].text`, `content` or `text`).
    init?(json: JSONValue) {
        guard let role = json["role"]?.stringValue else { return nil }
        var text = json["text"]?.stringValue ?? json["content"]?.stringValue
        if text == nil, let blocks = json["content"]?.arrayValue {
            text = blocks.compactMap { $0["text"]?.stringValue }.joined(separator: "\n")
        }
        guard let text else { return nil }
        self.role = role
        self.text = text
        entryId = json["__openclaw"]?["id"]?.stringValue
        seq = json["__openclaw"]?["seq"]?.int64Value.map { Int(clamping: $0) }
    }
}

/// What happened to a message the user wrote.
enum EnqueueResult: Sendable, Hashable {
    /// Queued as `message`.
    case queued(OutboxMessage)
    /// Refused: the Gateway's outbox holds the maximum already (shown to the user).
    case full
    /// Accepted and thrown away without a word (only the `drop-over-limit` mutant).
    case droppedSilently
}

/// The outbox and transcript cache of the reference client's chat view, as a value persisted in
/// the state directory (`chat-state.json`): every method takes an input and says what to do.
struct ChatBook: Sendable, Hashable, Codable {
    /// Messages per Gateway, at most (the Android app's `OUTBOX_MAX_QUEUED`).
    static let outboxLimit = 50
    /// The session the chat view shows and writes into by default.
    static let defaultSessionKey = "main"
    static let fileName = "chat-state.json"

    private(set) var outbox: [OutboxMessage] = []
    /// Gateway key → session key → rows.
    private(set) var transcripts: [String: [String: [TranscriptRow]]] = [:]
    /// Gateway key → session key → the `deltaCursor` of the last history answer merged
    /// (optional so that a book written before cursors existed still loads).
    private(set) var cursors: [String: [String: String]]?
    private var nextOrder = 1

    init() {}

    // MARK: - Outbox

    /// The messages of `gateway` shown as bubbles, in creation order.
    func bubbles(gateway: String) -> [OutboxMessage] {
        outbox.filter { $0.gateway == gateway }.sorted { $0.order < $1.order }
    }

    /// A message the user wrote for `gateway`.
    /// - Parameter keyPrefix: makes keys unique per device (the key is `<prefix>-<order>`).
    mutating func enqueue(text: String, sessionKey: String, gateway: String, keyPrefix: String,
                          configuration: ReferenceConfiguration) -> EnqueueResult {
        if bubbles(gateway: gateway).count >= Self.outboxLimit {
            return configuration.has(.dropOverLimit) ? .droppedSilently : .full
        }
        let message = OutboxMessage(key: "\(keyPrefix)-\(nextOrder)", gateway: gateway, sessionKey: sessionKey, text: text,
                                    order: nextOrder, status: .queued)
        nextOrder += 1
        outbox.append(message)
        return .queued(message)
    }

    /// The sessions whose live messages the chat view follows on `gateway`: the default session,
    /// every cached transcript's and every queued message's.
    func sessionKeys(gateway: String) -> [String] {
        var keys = Set(transcripts[gateway]?.keys.map { $0 } ?? [])
        keys.formUnion(bubbles(gateway: gateway).map(\.sessionKey))
        keys.insert(Self.defaultSessionKey)
        return keys.sorted()
    }

    /// The sessions whose history must be read before a flush: those with a message whose
    /// outcome history decides (acknowledged or ambiguous), plus the shown session.
    func sessionsToReconcile(gateway: String) -> [String] {
        var keys = Set(bubbles(gateway: gateway).filter { $0.status == .accepted || $0.status == .unconfirmed }.map(\.sessionKey))
        keys.insert(Self.defaultSessionKey)
        return keys.sorted()
    }

    /// Before a flush: the `resend-ambiguous-new-key` mutant forgets that an ambiguous send may
    /// have arrived and queues it again under a fresh key.
    mutating func forgetAmbiguity(gateway: String, keyPrefix: String, configuration: ReferenceConfiguration) {
        guard configuration.has(.resendAmbiguousNewKey) else { return }
        for index in outbox.indices where outbox[index].gateway == gateway && outbox[index].status == .unconfirmed {
            outbox[index].key = "\(keyPrefix)-\(nextOrder)-retry"
            nextOrder += 1
            outbox[index].status = .queued
        }
    }

    /// The messages to send now, in order: queued ones, and ambiguous ones that history did not
    /// show (resent under the same key, which the Gateway deduplicates). Stops at nothing: an
    /// ambiguous message is resolved by the reconcile that runs before every flush.
    func flushPlan(gateway: String, configuration: ReferenceConfiguration) -> [OutboxMessage] {
        let scope = configuration.has(.sharedOutbox) ? outbox.sorted { $0.order < $1.order } : bubbles(gateway: gateway)
        let due = scope.filter { $0.status == .queued || $0.status == .unconfirmed || $0.status == .sending }
        return configuration.has(.reorderFlush) ? due.reversed() : due
    }

    /// Sets the status of the message with `key`.
    mutating func mark(_ key: String, _ status: OutboxMessage.Status) {
        if let index = outbox.firstIndex(where: { $0.key == key }) { outbox[index].status = status }
    }

    /// The Gateway acknowledged `key`: accepted, retired only when history shows it (the
    /// `retire-on-ack` mutant retires it now).
    mutating func acknowledged(_ key: String, configuration: ReferenceConfiguration) {
        if configuration.has(.retireOnAck) {
            outbox.removeAll { $0.key == key }
        } else {
            mark(key, .accepted)
        }
    }

    /// The cursor to send with the next history read of `sessionKey` on `gateway` (only one this
    /// Gateway handed out for this session).
    func cursor(gateway: String, sessionKey: String) -> String? { cursors?[gateway]?[sessionKey] }

    /// The keys whose custody history should report: acknowledged or ambiguous messages of
    /// `sessionKey` (at most 50, the schema's limit).
    func inputRunIds(gateway: String, sessionKey: String, configuration: ReferenceConfiguration) -> [String] {
        // Only a Gateway that hands out cursors has the custody contract (an older one refuses
        // the member: its params schema is closed).
        guard !configuration.has(.ignoreInputReceipts), cursors?[gateway]?.isEmpty == false else { return [] }
        let keys = bubbles(gateway: gateway).filter { $0.sessionKey == sessionKey && ($0.status == .accepted || $0.status == .unconfirmed) }
        return Array(keys.map(\.key).prefix(50))
    }

    /// A `{kind:"reset"}` answer: the merged transcript and its cursor go; a fresh tail follows
    /// (the `ignore-history-reset` mutant keeps both).
    mutating func historyReset(gateway: String, sessionKey: String, configuration: ReferenceConfiguration) {
        guard !configuration.has(.ignoreHistoryReset) else { return }
        transcripts[gateway]?[sessionKey] = nil
        cursors?[gateway]?[sessionKey] = nil
    }

    /// Canonical history of `sessionKey` on `gateway` arrived (a tail page, or a `delta` merged
    /// onto the cached rows): the cache takes it, its cursor is kept, and messages it shows are
    /// retired: by the row's envelope key, or by a `consumed` receipt. An ambiguous message that a
    /// `pending` receipt or `pendingInputs` shows accepted is marked accepted, never resent.
    /// - Returns: the retired keys.
    @discardableResult
    mutating func applyHistory(_ payload: JSONValue, gateway: String, sessionKey: String,
                               configuration: ReferenceConfiguration) -> [String] {
        let rows = payload["messages"]?.arrayValue ?? []
        let parsed = rows.compactMap(TranscriptRow.init(json:))
        if payload["kind"]?.stringValue == "delta" {
            var merged = transcripts[gateway]?[sessionKey] ?? []
            let known = Set(merged.compactMap(\.entryId))
            merged += parsed.filter { row in row.entryId.map { !known.contains($0) } ?? true }
            transcripts[gateway, default: [:]][sessionKey] = merged
        } else {
            transcripts[gateway, default: [:]][sessionKey] = parsed
        }
        if let cursor = payload["deltaCursor"]?.stringValue {
            var all = cursors ?? [:]
            all[gateway, default: [:]][sessionKey] = cursor
            cursors = all
        }
        var shownKeys: Set<String>
        if configuration.has(.retireOnTopLevelKey) {
            shownKeys = Set(rows.compactMap { $0["idempotencyKey"]?.stringValue })
        } else {
            shownKeys = Set(rows.compactMap { row -> String? in
                guard let key = row["__openclaw"]?["idempotencyKey"]?.stringValue, key.hasSuffix(":user") else { return nil }
                return String(key.dropLast(":user".count))
            })
        }
        var accepted: Set<String> = []
        if !configuration.has(.ignoreInputReceipts) {
            for receipt in payload["inputReceipts"]?.arrayValue ?? [] {
                guard let runId = receipt["runId"]?.stringValue else { continue }
                switch receipt["state"]?.stringValue {
                case "consumed": shownKeys.insert(runId)
                case "pending": accepted.insert(runId)
                default: break
                }
            }
        }
        if !configuration.has(.resendPendingInput) {
            for item in payload["pendingInputs"]?["items"]?.arrayValue ?? [] {
                guard let runId = item["runId"]?.stringValue else { continue }
                accepted.insert(runId)
            }
        } else {
            accepted = []
        }
        let retired = outbox.filter { $0.gateway == gateway && $0.sessionKey == sessionKey && shownKeys.contains($0.key) }.map(\.key)
        outbox.removeAll { retired.contains($0.key) }
        for index in outbox.indices where outbox[index].gateway == gateway && outbox[index].sessionKey == sessionKey
            && outbox[index].status == .unconfirmed && accepted.contains(outbox[index].key) {
            outbox[index].status = .accepted
        }
        return retired
    }

    // MARK: - Transcript cache

    /// The transcript the chat view shows for `sessionKey` on `gateway` (cached or refreshed).
    func transcript(gateway: String, sessionKey: String) -> [TranscriptRow] {
        transcripts[gateway]?[sessionKey] ?? []
    }

    /// A live `session.message` row: appended to the shown transcript unless already there.
    mutating func applyLive(_ payload: JSONValue?, gateway: String) {
        guard let payload, let row = payload["message"].flatMap(TranscriptRow.init(json:)) else { return }
        let sessionKey = payload["sessionKey"]?.stringValue ?? Self.defaultSessionKey
        var rows = transcripts[gateway]?[sessionKey] ?? []
        if let id = row.entryId, rows.contains(where: { $0.entryId == id }) { return }
        rows.append(row)
        transcripts[gateway, default: [:]][sessionKey] = rows
    }

    /// A cold start read this book from disk: the `no-cold-start-cache` mutant shows nothing
    /// until the Gateway answers.
    mutating func coldStarted(configuration: ReferenceConfiguration) {
        if configuration.has(.noColdStartCache) { transcripts = [:] }
    }

    /// A reset (reinstall / forget): cache and outbox go with the identity (the
    /// `keep-cache-after-reset` mutant keeps the transcripts).
    mutating func forget(configuration: ReferenceConfiguration) {
        outbox = []
        if !configuration.has(.keepCacheAfterReset) {
            transcripts = [:]
            cursors = nil
        }
    }

    // MARK: - Persistence

    /// Reads the book from the client's state files (empty when missing or unreadable).
    static func load(from files: StateFiles) -> ChatBook {
        guard let data = files.read(fileName), let book = try? JSONDecoder().decode(ChatBook.self, from: data) else {
            return ChatBook()
        }
        return book
    }

    /// Writes the book to the client's state files (best effort: a full disk loses the cache,
    /// not the session).
    func save(to files: StateFiles) {
        let book = self
        try? files.write(Self.fileName) { try? JSONValue(encoding: book).encoded() }
    }
}
