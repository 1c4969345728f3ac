import Foundation
import GatewayProtocol

/// One task of the ledger `tasks.list` pages through: a fixture in upstream's closed
/// `TaskSummary` shape, answered as given.
///
/// Members (`TaskSummarySchema`, `packages/gateway-protocol/src/schema/tasks.ts@0d6ce189a5fdcb85a452846a29190a0fa428cf7e`):
/// `id` (non-empty) and `status` (`queued`, `running`, `completed`, `failed`, `cancelled`,
/// `timed_out`) are required; `kind`, `runtime`, `title`, `agentId`, `sessionKey`,
/// `childSessionKey`, `ownerKey`, `runId`, `taskId`, `flowId`, `parentTaskId`, `sourceId`,
/// `progressSummary`, `terminalSummary`, `error` are strings; `createdAt`, `updatedAt`,
/// `startedAt`, `endedAt` are timestamps, here integers of at least 0 (upstream's schema also
/// admits strings, which its handler never sends). `subagentHealth` is not modelled.
public struct TaskFixture: Sendable, Hashable {
    /// The ledger statuses the schema admits.
    public static let statuses = ["queued", "running", "completed", "failed", "cancelled", "timed_out"]
    /// The optional string members.
    static let stringMembers = ["kind", "runtime", "title", "agentId", "sessionKey", "childSessionKey", "ownerKey",
                                "runId", "taskId", "flowId", "parentTaskId", "sourceId", "progressSummary",
                                "terminalSummary", "error"]
    /// The optional timestamp members.
    static let timestampMembers = ["createdAt", "updatedAt", "startedAt", "endedAt"]

    /// The task as `tasks.list` sends it.
    public private(set) var summary: [String: JSONValue]

    /// The task id.
    public var id: String { summary["id"]?.stringValue ?? "" }
    /// The ledger status.
    public var status: String { summary["status"]?.stringValue ?? "" }

    /// Creates a task from its members (the other optional members can be added with
    /// ``init(json:)``).
    public init(id: String, status: String, title: String? = nil, agentId: String? = nil, sessionKey: String? = nil,
                createdAt: Int64? = nil, updatedAt: Int64? = nil) {
        var summary: [String: JSONValue] = ["id": .string(id), "status": .string(status)]
        if let title { summary["title"] = .string(title) }
        if let agentId { summary["agentId"] = .string(agentId) }
        if let sessionKey { summary["sessionKey"] = .string(sessionKey) }
        if let createdAt { summary["createdAt"] = .int(createdAt) }
        if let updatedAt { summary["updatedAt"] = .int(updatedAt) }
        self.summary = summary
    }

    /// Reads a task of the closed `TaskSummary` shape.
    /// - Throws: ``GatewayFixtures/FixtureError`` naming the first member that does not fit.
    public init(json: JSONValue) throws(GatewayFixtures.FixtureError) {
        try self.init(json: json, at: "")
    }

    /// Reads a task at `pointer` of a fixtures document.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        func fail(_ key: String, _ problem: String) -> GatewayFixtures.FixtureError {
            GatewayFixtures.FixtureError(pointer: key.isEmpty ? pointer : "\(pointer)/\(key)", problem: problem)
        }
        guard let object = json.objectValue else { throw fail("", "must be object") }
        for key in ["id", "status"] where object[key] == nil {
            throw fail("", "must have required property '\(key)'")
        }
        let known = Set(["id", "status"] + Self.stringMembers + Self.timestampMembers)
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail("", "unexpected property '\(unknown)'")
        }
        guard let id = object["id"]?.stringValue else { throw fail("id", "must be string") }
        if id.isEmpty { throw fail("id", "must NOT have fewer than 1 characters") }
        guard let status = object["status"]?.stringValue, Self.statuses.contains(status) else {
            throw fail("status", "must be one of \(Self.statuses.joined(separator: ", "))")
        }
        for key in Self.stringMembers where object[key] != nil && object[key]?.stringValue == nil {
            throw fail(key, "must be string")
        }
        for key in Self.timestampMembers {
            guard let value = object[key] else { continue }
            guard let number = value.int64Value, number >= 0 else { throw fail(key, "must be integer >= 0") }
        }
        summary = object
    }

    /// When the task last changed, as upstream's `taskUpdatedAt` orders the ledger: `updatedAt`,
    /// else `endedAt`, `startedAt`, `createdAt`, else 0.
    var activityMs: Int64 {
        for key in ["updatedAt", "endedAt", "startedAt", "createdAt"] {
            if let value = summary[key]?.int64Value { return value }
        }
        return 0
    }

    /// A trimmed, non-empty string member.
    func trimmed(_ key: String) -> String? {
        guard let text = summary[key]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty
        else { return nil }
        return text
    }
}

/// `tasks.list`: a page of the task ledger, newest activity first.
///
/// Upstream (read for facts, nothing copied): the handler `src/gateway/server-methods/tasks.ts@0d6ce189a5fdcb85a452846a29190a0fa428cf7e`
/// with `taskUpdatedAt` of `src/gateway/server-methods/task-summary.ts@0d6ce189a5fdcb85a452846a29190a0fa428cf7e`
/// and the closed `TasksListParamsSchema` `{status?: status | status[], agentId?, sessionKey?,
/// limit?: 1...500, cursor?: string}` of `packages/gateway-protocol/src/schema/tasks.ts@0d6ce189a5fdcb85a452846a29190a0fa428cf7e`.
/// The cursor is a decimal offset (empty: 0; anything else is `INVALID_REQUEST "invalid
/// tasks.list cursor"`); `limit` defaults to 100; the tasks are filtered by status, by agent (a
/// task's own `agentId` decides, else an `agent:<id>:…` session key of the task) and by session
/// key (the task's `sessionKey`, `childSessionKey` or `ownerKey`), sorted by last activity, newest
/// first, then by id; the answer is `{tasks, nextCursor?}`, `nextCursor` only when more follow.
enum TaskLedger {
    /// Upstream's `DEFAULT_TASKS_LIST_LIMIT`.
    static let defaultLimit = 100
    /// Upstream's `MAX_TASKS_LIST_LIMIT` (also the schema's `maximum`).
    static let maxLimit = 500

    /// The answer to `params` over `tasks`.
    static func list(_ params: JSONValue?, tasks: [TaskFixture]) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .tasksList,
                                          members: ["status", "agentId", "sessionKey", "limit", "cursor"])
            let statuses = try statusFilter(reader.object["status"])
            let agentId = try reader.string("agentId", nonEmpty: true)
            let sessionKey = try reader.string("sessionKey", nonEmpty: true)
            let limit = try reader.integer("limit", minimum: 1)
            if let limit, limit > maxLimit {
                throw MethodParams.invalid(.tasksList, at: "/limit", "must be <= \(maxLimit)")
            }
            let cursorText = try reader.string("cursor")
            guard let offset = cursor(cursorText) else {
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid tasks.list cursor"))
            }
            let wantedAgent = agentId?.trimmingCharacters(in: .whitespacesAndNewlines)
            let wantedSession = sessionKey?.trimmingCharacters(in: .whitespacesAndNewlines)
            let filtered = tasks.filter { task in
                (statuses?.contains(task.status) ?? true)
                    && matchesAgent(task, wantedAgent) && matchesSession(task, wantedSession)
            }.sorted { left, right in
                if left.activityMs != right.activityMs { return left.activityMs > right.activityMs }
                return left.id.utf16.lexicographicallyPrecedes(right.id.utf16)
            }
            let start = min(offset, filtered.count)
            let page = filtered[start..<min(filtered.count, start + min(limit ?? defaultLimit, maxLimit))]
            var result: [String: JSONValue] = ["tasks": .array(page.map { .object($0.summary) })]
            let next = start + page.count
            if next < filtered.count { result["nextCursor"] = .string(String(next)) }
            return .success(.object(result))
        } catch {
            return .failure(error)
        }
    }

    /// The `status` filter: one status or an array of them (`nil`: every status).
    private static func statusFilter(_ value: JSONValue?) throws(GatewayError) -> Set<String>? {
        guard let value else { return nil }
        if let single = value.stringValue, TaskFixture.statuses.contains(single) { return [single] }
        if let items = value.arrayValue {
            var statuses: Set<String> = []
            for (index, item) in items.enumerated() {
                guard let status = item.stringValue, TaskFixture.statuses.contains(status) else {
                    throw MethodParams.invalid(.tasksList, at: "/status/\(index)", "must be equal to one of the allowed values")
                }
                statuses.insert(status)
            }
            return statuses
        }
        throw MethodParams.invalid(.tasksList, at: "/status", "must match a schema in anyOf")
    }

    /// Upstream's `parseCursor`: absent or empty is 0; otherwise the trimmed text must be decimal
    /// digits of a safe integer (`nil`: refused).
    static func cursor(_ text: String?) -> Int? {
        guard let text, !text.isEmpty else { return 0 }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        let digits = trimmed.drop { $0 == "0" }
        guard digits.count <= 16, let value = Int(digits.isEmpty ? "0" : String(digits)), value <= 9_007_199_254_740_991
        else { return nil }
        return value
    }

    /// A task's own `agentId` decides; without one, any of its session keys of the form
    /// `agent:<id>:…` naming the agent.
    private static func matchesAgent(_ task: TaskFixture, _ agentId: String?) -> Bool {
        guard let agentId, !agentId.isEmpty else { return true }
        if let own = task.trimmed("agentId") { return own == agentId }
        return ["sessionKey", "childSessionKey", "ownerKey"].contains { key in
            guard let parts = task.trimmed(key)?.split(separator: ":", omittingEmptySubsequences: false),
                  parts.count >= 3, parts[0] == "agent" else { return false }
            return parts[1] == agentId
        }
    }

    /// The task's `sessionKey`, `childSessionKey` or `ownerKey` is the session asked for.
    private static func matchesSession(_ task: TaskFixture, _ sessionKey: String?) -> Bool {
        guard let sessionKey, !sessionKey.isEmpty else { return true }
        return ["sessionKey", "childSessionKey", "ownerKey"].contains { task.trimmed($0) == sessionKey }
    }
}
