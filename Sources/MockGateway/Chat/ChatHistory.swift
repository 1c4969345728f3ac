import GatewayProtocol

// What upstream confirms (read for facts, nothing copied; sources in docs/fidelity.md):
// - The newest `ChatHistoryParamsSchema` is closed: `sessionKey, agentId?, cursor?: string,
//   limit? (1...1000), maxBytes? (>= 1024), offset? (>= 0), pendingBefore? (>= 1), inputRunIds?
//   (1...50 unique strings of 1...256), messageId?, sessionId?, maxChars? (1...500000)`. The
//   older generation's schema (logs-chat.ts@058f7b075d19da2c32d72fcb5de9f05058c09527) is closed
//   too, with only `sessionKey, agentId?, limit?, maxChars?`.
// - A tail answer carries an opaque `deltaCursor`; the client passes it back as `cursor` and gets
//   `{kind:"delta", messages, deltaCursor, sessionInfo, inFlightRun?, pendingInputs?,
//   inputReceipts?, inputConsumptions?}` or `{kind:"reset"}` (stale cursor, another session, a
//   reset or compaction in between, more than 200 raw events or the byte budget); after a reset
//   the client fetches a fresh tail.
// - `inputRunIds` → `inputReceipts` (`pending`, or `consumed` with `consumedByEventId`) and
//   `inputConsumptions` (consumed only); `pendingInputs {items ≤ 20, total, nextBefore?}` lists
//   accepted sends not in canonical history yet (`queued | cancelled | interrupted`).

/// Which generation of the chat surface a Gateway serves: the older one (no cursor, no input
/// custody, no `chat.startup`, no `queueMode`) or the newest.
enum ChatGeneration: Sendable, Hashable {
    /// `logs-chat.ts@058f7b075d19da2c32d72fcb5de9f05058c09527` (the `legacy` profile).
    case older
    /// The newest `logs-chat.ts` (the `current` profile).
    case newest

    /// The generation of a profile: the newest node-method generation is the newest chat one.
    init(_ profile: GatewayProfile) { self = profile.hasNewerNodeMethods ? .newest : .older }
}

extension ChatStore {
    /// Why request parameters are refused (the `INVALID_REQUEST` message).
    struct ParamsError: Error, Sendable, Hashable {
        var message: String
    }

    /// A cursor catch-up answers `reset` past this many rows (upstream: 200 raw events).
    static let deltaMaximumRows = 200
    /// … or past this many bytes of rows (upstream: 1 MB).
    static let deltaMaximumBytes = 1_000_000
    /// `pendingInputs.items` holds at most this many.
    static let pendingPageSize = 20
    /// `inputRunIds` holds at most this many.
    static let maximumInputRunIds = 50

    /// The `chat.history` params schema of `generation`.
    static func historySchema(_ generation: ChatGeneration, method: String = GatewayMethod.chatHistory.rawValue) -> ClosedParams {
        var members: [String: ParamRule] = [
            "sessionKey": .nonEmptyString, "agentId": .nonEmptyString,
            "limit": .integer(min: 1, max: Int64(maximumHistoryLimit)), "maxChars": .integer(min: 1, max: 500_000),
        ]
        if generation == .newest {
            members["cursor"] = .string
            members["maxBytes"] = .integer(min: 1024, max: Int64.max)
            members["offset"] = .integer(min: 0, max: Int64(Int32.max))
            members["pendingBefore"] = .integer(min: 1, max: Int64(Int32.max))
            members["inputRunIds"] = .uniqueStrings(minItems: 1, maxItems: maximumInputRunIds, maxChars: 256)
            members["messageId"] = .nonEmptyString
            members["sessionId"] = .nonEmptyString
        }
        return ClosedParams(method: method, members: members, required: ["sessionKey"])
    }

    /// The `chat.startup` params of the newest generation: history params, or a short link
    /// `{shortId, slugHint?, agentId, limit?, maxBytes?}`.
    static let startupLinkSchema = ClosedParams(method: GatewayMethod.chatStartup.rawValue, members: [
        "shortId": .nonEmptyString, "slugHint": .nonEmptyString, "agentId": .nonEmptyString,
        "limit": .integer(min: 1, max: Int64(maximumHistoryLimit)), "maxBytes": .integer(min: 1024, max: Int64.max),
    ], required: ["shortId", "agentId"])

    /// `chat.message.get` `{sessionKey, agentId?, messageId, maxChars? 1...2000000}` (both generations).
    static let messageGetSchema = ClosedParams(method: GatewayMethod.chatMessageGet.rawValue, members: [
        "sessionKey": .nonEmptyString, "agentId": .nonEmptyString, "messageId": .nonEmptyString,
        "maxChars": .integer(min: 1, max: 2_000_000),
    ], required: ["sessionKey", "messageId"])

    /// A `chat.history` request, read.
    struct HistoryRequest: Sendable, Hashable {
        var sessionKey: String
        var limit: Int = ChatStore.defaultHistoryLimit
        var offset: Int = 0
        var maxBytes: Int?
        var cursor: String?
        var pendingBefore: Int?
        var inputRunIds: [String] = []
        var newest: Bool = true
    }

    /// Reads the parameters of `chat.history` (closed schema of `generation`).
    /// - Returns: the request, or the `INVALID_REQUEST` message.
    static func historyRequest(_ params: JSONValue?, generation: ChatGeneration = .newest,
                               method: String = GatewayMethod.chatHistory.rawValue) -> Result<HistoryRequest, ParamsError> {
        historySchema(generation, method: method).validate(params).map { members in
            var request = HistoryRequest(sessionKey: members["sessionKey"]?.stringValue ?? defaultSessionKey)
            request.newest = generation == .newest
            if let limit = members["limit"]?.int64Value { request.limit = Int(limit) }
            if let offset = members["offset"]?.int64Value { request.offset = Int(offset) }
            if let maxBytes = members["maxBytes"]?.int64Value { request.maxBytes = Int(clamping: maxBytes) }
            request.cursor = members["cursor"]?.stringValue
            if let before = members["pendingBefore"]?.int64Value { request.pendingBefore = Int(before) }
            request.inputRunIds = members["inputRunIds"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return request
        }
    }

    /// The opaque cursor after `seq` in the session's current epoch.
    static func cursor(epoch: Int, seq: Int) -> String { "c\(epoch).\(seq)" }

    /// Reads a cursor (`nil` when it is not one of this Gateway's).
    static func readCursor(_ text: String) -> (epoch: Int, seq: Int)? {
        guard text.hasPrefix("c") else { return nil }
        let parts = text.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let epoch = Int(parts[0]), let seq = Int(parts[1]), epoch >= 0, seq >= 0 else { return nil }
        return (epoch, seq)
    }

    /// Answers a history request: a tail page, or with `cursor` a delta or a reset.
    mutating func history(_ request: HistoryRequest, nowMs: Int64) -> JSONValue {
        // A read never creates a session: one never written to has the epoch 0 until it exists.
        let epoch = sessionStates[request.sessionKey]?.epoch ?? 0
        let rows = visibleRows(request.sessionKey)
        let visibleSeq = rows.last?.seq ?? 0
        let nextCursor = Self.cursor(epoch: epoch, seq: visibleSeq)
        if let text = request.cursor {
            guard let cursor = Self.readCursor(text), cursor.epoch == epoch, cursor.seq <= visibleSeq else {
                return ["kind": "reset"]
            }
            let newer = rows.filter { $0.seq > cursor.seq }
            let bytes = newer.reduce(0) { $0 + $1.json.encoded().count }
            if newer.count > Self.deltaMaximumRows || bytes > Self.deltaMaximumBytes { return ["kind": "reset"] }
            var payload: [String: JSONValue] = [
                "kind": "delta", "messages": .array(newer.map(\.json)), "deltaCursor": .string(nextCursor),
                "sessionInfo": ["sessionKey": .string(request.sessionKey), "sessionId": .string(sessionId(request.sessionKey))],
            ]
            addCustody(to: &payload, request: request, visible: rows)
            return .object(payload)
        }
        // Newest `limit` rows after skipping the newest `offset` (paging backward), trimmed from
        // the oldest end to `maxBytes`.
        let end = max(0, rows.count - request.offset)
        var start = max(0, end - request.limit)
        if let budget = request.maxBytes {
            var used = rows[start..<end].reduce(0) { $0 + $1.json.encoded().count }
            while used > budget, start < end - 1 {
                used -= rows[start].json.encoded().count
                start += 1
            }
        }
        let page = Array(rows[start..<end])
        var payload: [String: JSONValue] = [
            "sessionKey": .string(request.sessionKey),
            "sessionId": .string(sessionId(request.sessionKey)),
            "messages": .array(page.map(\.json)),
            "thinkingLevel": "off",
            "hasMore": .bool(start > 0),
        ]
        if start > 0 { payload["nextOffset"] = .int(Int64(request.offset + (end - start))) }
        if request.newest {
            payload["deltaCursor"] = .string(nextCursor)
            addCustody(to: &payload, request: request, visible: rows)
        }
        return .object(payload)
    }

    /// Adds `pendingInputs` (when any), `inputReceipts` and `inputConsumptions` (when asked).
    /// An input counts as consumed only once the row that holds it is visible to this read.
    private func addCustody(to payload: inout [String: JSONValue], request: HistoryRequest, visible: [ChatMessage]) {
        let visibleIds = Set(visible.map(\.id))
        func consumedBy(_ input: ChatInput) -> String? {
            guard input.state == .consumed, let row = input.consumedBy, visibleIds.contains(row) else { return nil }
            return row
        }
        let pending = inputs.values.filter { $0.sessionKey == request.sessionKey && $0.state != .consumed }
            .sorted { $0.order < $1.order }
        if !pending.isEmpty {
            let limit = request.pendingBefore ?? Int.max
            let before = pending.filter { $0.order < limit }
            let items = before.suffix(Self.pendingPageSize)
            let itemValues: [JSONValue] = items.map(Self.pendingItem)
            var page: [String: JSONValue] = ["items": .array(itemValues), "total": .int(Int64(pending.count))]
            if before.count > items.count, let oldest = items.first { page["nextBefore"] = .int(Int64(oldest.order)) }
            payload["pendingInputs"] = .object(page)
        }
        guard !request.inputRunIds.isEmpty else { return }
        var receipts: [JSONValue] = []
        var consumptions: [JSONValue] = []
        for runId in request.inputRunIds {
            guard let input = inputs[runId], input.sessionKey == request.sessionKey else { continue }
            if let row = consumedBy(input) {
                receipts.append(["runId": .string(runId), "state": "consumed", "consumedByEventId": .string(row)])
                consumptions.append(["runId": .string(runId), "consumedByEventId": .string(row)])
            } else if input.state == .queued || input.state == .consumed {
                receipts.append(["runId": .string(runId), "state": "pending"])
            }
        }
        payload["inputReceipts"] = .array(receipts)
        payload["inputConsumptions"] = .array(consumptions)
    }

    /// One `pendingInputs.items` entry.
    private static func pendingItem(_ input: ChatInput) -> JSONValue {
        let content: JSONValue = [["type": "text", "text": .string(input.text)]]
        let message: JSONValue = ["role": "user", "content": content, "timestamp": .int(input.acceptedAtMs)]
        return ["id": .string(input.id), "runId": .string(input.runId), "message": message,
                "acceptedAt": .int(input.acceptedAtMs), "state": .string(input.state.rawValue)]
    }

    // MARK: - chat.message.get

    /// `chat.message.get`: the row, or why it is unavailable (`not_found`, `oversized` past
    /// `maxChars`, `not_visible` when a reset, a compaction, a rewind or a branch switch took it off the visible
    /// path).
    func messageGet(sessionKey: String, messageId: String, maxChars: Int?) -> JSONValue {
        if let row = messages(in: sessionKey).first(where: { $0.id == messageId }) {
            if let maxChars, row.text.count > maxChars { return ["ok": false, "unavailableReason": "oversized"] }
            return ["ok": true, "message": row.json]
        }
        // Hidden by a reset or compaction, or on a branch other than the active one.
        if let state = sessionStates[sessionKey], state.hiddenIds.contains(messageId) || state.tree.contains(messageId) {
            return ["ok": false, "unavailableReason": "not_visible"]
        }
        return ["ok": false, "unavailableReason": "not_found"]
    }
}
