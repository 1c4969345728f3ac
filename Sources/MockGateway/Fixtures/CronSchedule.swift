import Foundation
import GatewayProtocol

/// `cron.list`, `cron.get` and `cron.runs` over the cron fixtures (``CronFixtures``): pure rules,
/// answered by `GatewayCore+Cron.swift`.
///
/// Upstream (read for facts, nothing copied): the closed params `CronListParamsSchema`,
/// `CronGetParamsSchema` (`{id} | {jobId}`) and `CronRunsParamsSchema` of
/// `packages/gateway-protocol/src/schema/cron.ts@01379adaf2cd76c4f764d3a55d65f12d842c4dce`; the
/// handlers of `src/gateway/server-methods/cron.ts` in the generation that matches those params
/// (`cron.get` answering `INVALID_REQUEST "cron job not found: <id>"`, `cronJobReadView`,
/// `compactCronListJob`, previews unless `compact`; newer mirrors such as
/// `6digris/openclaw-settle@57b40ed93f792e97291f30266f323b5d209633eb` keep that message as the
/// prefix of a longer one with details); `listPage` of
/// `src/cron/service/ops-read.ts@0876d04f827ebf41694745d161dbd9895aaa6e87` (filters, query,
/// default page size); `sortCronJobs` (`src/cron/service/list-page-sort.ts`);
/// `readCronRunLogEntriesPage` / `readCronRunLogEntriesPageAll` of
/// `src/cron/run-log.ts@019de935fd75f61d05ffededb5261c5107f7ad02`; `resolveCronDeliveryPreview`
/// of `src/cron/delivery-preview.ts@07c8266ba436179053421e4bd96f7de179a16d5a`. Operators are not
/// agent tools (`readCronCallerScope` of `src/gateway/server-methods/cron-caller-scope.ts@1653a1441092faea15677e0ff0e5fb41be0b232f`
/// is only set for an agent runtime's own connection), so every job is visible.
enum CronSchedule {
    /// The schemas' `maximum` of `limit` (and the service's clamp).
    static let maxLimit = 200
    /// `listPage`'s page size when there are no jobs (otherwise every job, at most 200).
    static let emptyListLimit = 50
    /// The run log's default page size.
    static let runsDefaultLimit = 50

    // MARK: cron.list

    /// `cron.list`: a filtered, sorted page of the jobs.
    static func list(_ params: JSONValue?, cron: CronFixtures, defaultAgentId: String) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .cronList, members: [
                "includeDisabled", "limit", "offset", "query", "enabled", "scheduleKind", "lastRunStatus", "sortBy",
                "sortDir", "agentId", "compact",
            ])
            let includeDisabled = try bool(reader, "includeDisabled")
            let limit = try limitMember(reader)
            let offset = try reader.integer("offset", minimum: 0)
            let query = try reader.string("query")
            let enabled = try literal(reader, "enabled", ["all", "enabled", "disabled"])
            let scheduleKind = try literal(reader, "scheduleKind", ["all"] + CronJobFixture.scheduleKinds)
            let lastRunStatus = try literal(reader, "lastRunStatus", ["all", "ok", "error", "skipped", "unknown"])
            let sortBy = try literal(reader, "sortBy", ["nextRunAtMs", "updatedAtMs", "name"]) ?? "nextRunAtMs"
            let sortDir = try literal(reader, "sortDir", ["asc", "desc"]) ?? "asc"
            let agentId = try reader.string("agentId", nonEmpty: true)
            let compact = try bool(reader, "compact") ?? false

            let enabledFilter = enabled ?? (includeDisabled == true ? "all" : "enabled")
            let needle = normalized(query)
            let wantedAgent = agentId.map(normalized)
            let filtered = cron.jobs.filter { job in
                if enabledFilter == "enabled", !job.isEnabled { return false }
                if enabledFilter == "disabled", job.isEnabled { return false }
                if let wantedAgent, !wantedAgent.isEmpty,
                   normalized(job.job["agentId"]?.stringValue ?? defaultAgentId) != wantedAgent { return false }
                if let scheduleKind, scheduleKind != "all", job.scheduleKind != scheduleKind { return false }
                if let lastRunStatus, lastRunStatus != "all", (job.lastRunStatus?.stringValue ?? "unknown") != lastRunStatus {
                    return false
                }
                if !needle.isEmpty {
                    let haystack = [job.id, job.name, job.job["description"]?.stringValue ?? "",
                                    job.job["agentId"]?.stringValue ?? ""].joined(separator: " ")
                    if !normalized(haystack).contains(needle) { return false }
                }
                return true
            }
            let sorted = sort(filtered, by: sortBy, descending: sortDir == "desc")
            let total = sorted.count
            let start = min(max(0, offset ?? 0), total)
            let size = max(1, min(maxLimit, limit ?? (total == 0 ? emptyListLimit : total)))
            let page = Array(sorted[start..<min(total, start + size)])
            var result = pageMembers(total: total, offset: start, limit: size, count: page.count)
            if compact {
                result["jobs"] = .array(page.map(\.compactRow))
            } else {
                result["jobs"] = .array(page.map(\.readView))
                var previews: [String: JSONValue] = [:]
                for job in page {
                    if let preview = deliveryPreview(job, cron: cron) { previews[job.id] = preview.json }
                }
                result["deliveryPreviews"] = .object(previews)
            }
            return .success(.object(result))
        } catch {
            return .failure(error)
        }
    }

    /// `sortCronJobs`: by name (case and accents folded), `updatedAtMs` or `nextRunAtMs` (jobs
    /// without one last in either direction), ties by id.
    static func sort(_ jobs: [CronJobFixture], by key: String, descending: Bool) -> [CronJobFixture] {
        jobs.sorted { left, right in
            var order = ComparisonResult.orderedSame
            switch key {
            case "name":
                order = collate(left.name, right.name)
            case "updatedAtMs":
                order = compare(left.updatedAtMs, right.updatedAtMs)
            default:
                switch (left.nextRunAtMs, right.nextRunAtMs) {
                case let (lhs?, rhs?): order = compare(lhs, rhs)
                case (.some, nil): return true
                case (nil, .some): return false
                case (nil, nil): break
                }
            }
            if order != .orderedSame { return descending ? order == .orderedDescending : order == .orderedAscending }
            let ids = collate(left.id, right.id)
            return ids == .orderedSame ? left.id.unicodeScalars.lexicographicallyPrecedes(right.id.unicodeScalars)
                : ids == .orderedAscending
        }
    }

    /// The preview of one job: the fixture's, else the two upstream answers that need no channel:
    /// `not requested` for `delivery.mode: "none"` without a target, `webhook:<to>` for a webhook.
    /// Other jobs have none (upstream resolves them through its channels).
    static func deliveryPreview(_ job: CronJobFixture, cron: CronFixtures) -> CronDeliveryPreview? {
        if let preview = cron.deliveryPreviews[job.id] { return preview }
        guard let delivery = job.job["delivery"]?.objectValue, let mode = delivery["mode"]?.stringValue else { return nil }
        let to = delivery["to"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let channel = delivery["channel"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if mode == "none", to.isEmpty, channel.isEmpty { return CronDeliveryPreview(label: "not requested", detail: "not requested") }
        if mode == "webhook" {
            return to.isEmpty ? CronDeliveryPreview(label: "webhook", detail: "webhook target missing")
                : CronDeliveryPreview(label: "webhook:\(to)", detail: "webhook")
        }
        return nil
    }

    // MARK: cron.get

    /// `cron.get`: one job's read view, or `INVALID_REQUEST "cron job not found: <id>"`.
    static func get(_ params: JSONValue?, cron: CronFixtures) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let id = try jobIdParams(params, method: .cronGet)
            guard let job = cron.jobs.first(where: { $0.id == id }) else {
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "cron job not found: \(id)"))
            }
            return .success(job.readView)
        } catch {
            return .failure(error)
        }
    }

    /// The closed `{id} | {jobId}` union (each a non-empty string, nothing else). A value that
    /// fits neither branch is `… at root: must match a schema in anyOf`.
    static func jobIdParams(_ params: JSONValue?, method: GatewayMethod) throws(GatewayError) -> String {
        guard let object = params.map({ $0.objectValue }) ?? [:] else {
            throw MethodParams.invalid(method, at: "", "must be object")
        }
        for key in ["id", "jobId"] where object.count == 1 {
            if let text = object[key]?.stringValue, !text.isEmpty { return text }
        }
        throw MethodParams.invalid(method, at: "", "must match a schema in anyOf")
    }

    // MARK: cron.runs

    /// `cron.runs`: a page of one job's runs (`scope: "job"`, the default with an id) or of every
    /// job's (`scope: "all"`, the default without), newest first.
    static func runs(_ params: JSONValue?, cron: CronFixtures) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .cronRuns, members: [
                "scope", "id", "jobId", "runId", "limit", "offset", "statuses", "status", "deliveryStatuses",
                "deliveryStatus", "query", "sortDir",
            ])
            let scope = try literal(reader, "scope", ["job", "all"])
            let id = try runLogJobId(reader, "id")
            let jobIdMember = try runLogJobId(reader, "jobId")
            let runId = try reader.string("runId", nonEmpty: true)
            let limit = try limitMember(reader)
            let offset = try reader.integer("offset", minimum: 0)
            let statuses = try literalArray(reader, "statuses", CronJobFixture.runStatuses, maxItems: 3)
            let status = try literal(reader, "status", ["all"] + CronJobFixture.runStatuses)
            let deliveryStatuses = try literalArray(reader, "deliveryStatuses", CronJobFixture.deliveryStatuses, maxItems: 4)
            let deliveryStatus = try literal(reader, "deliveryStatus", CronJobFixture.deliveryStatuses)
            let query = try reader.string("query")
            let sortDir = try literal(reader, "sortDir", ["asc", "desc"])

            let jobId = id ?? jobIdMember
            let resolvedScope = scope ?? (jobId == nil ? "all" : "job")
            var names: [String: String] = [:]
            for job in cron.jobs where names[job.id] == nil { names[job.id] = job.name }
            var entries = cron.runs
            if resolvedScope == "job" {
                guard let jobId else {
                    throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                  message: "invalid cron.runs params: missing id"))
                }
                let trimmed = jobId.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !trimmed.isEmpty, !trimmed.contains("\u{0}") else {
                    throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                  message: "invalid cron.runs params: invalid id"))
                }
                entries = entries.filter { $0.jobId == trimmed }
                names = names[trimmed].map { [trimmed: $0] } ?? [:]
            }
            let statusFilter: Set<String>? = statuses.map(Set.init) ?? status.flatMap { $0 == "all" ? nil : [$0] }
            let deliveryFilter: Set<String>? = deliveryStatuses.map(Set.init) ?? deliveryStatus.map { [$0] }
            let needle = normalized(query)
            let filtered = entries.filter { run in
                if let runId, run.entry["runId"]?.stringValue != runId { return false }
                if let statusFilter, !(run.status.map(statusFilter.contains) ?? false) { return false }
                if let deliveryFilter,
                   !deliveryFilter.contains(run.entry["deliveryStatus"]?.stringValue ?? "not-requested") { return false }
                if needle.isEmpty { return true }
                let haystack = [run.entry["summary"]?.stringValue ?? "", run.entry["error"]?.stringValue ?? "",
                                run.entry["errorReason"]?.stringValue ?? "", run.jobId, names[run.jobId] ?? ""]
                return normalized(haystack.joined(separator: " ")).contains(needle)
            }
            // A stable sort by `ts`: equal times keep the fixture order.
            let descending = sortDir != "asc"
            let sorted = filtered.enumerated().sorted { left, right in
                if left.element.ts != right.element.ts {
                    return descending ? left.element.ts > right.element.ts : left.element.ts < right.element.ts
                }
                return left.offset < right.offset
            }.map(\.element)
            let total = sorted.count
            let start = min(max(0, offset ?? 0), total)
            let size = max(1, min(maxLimit, limit ?? runsDefaultLimit))
            let page = sorted[start..<min(total, start + size)].map { run -> JSONValue in
                var entry = run.entry
                if let name = names[run.jobId], !name.isEmpty { entry["jobName"] = .string(name) }
                return .object(entry)
            }
            var result = pageMembers(total: total, offset: start, limit: size, count: page.count)
            result["entries"] = .array(page)
            return .success(.object(result))
        } catch {
            return .failure(error)
        }
    }

    /// `CronRunLogJobIdSchema`: a non-empty string without `/` or `\`.
    private static func runLogJobId(_ reader: MethodParams, _ key: String) throws(GatewayError) -> String? {
        guard let text = try reader.string(key, nonEmpty: true) else { return nil }
        if text.contains("/") || text.contains("\\") {
            throw MethodParams.invalid(reader.method, at: "/\(key)", #"must match pattern "^[^/\\]+$""#)
        }
        return text
    }

    // MARK: Shared

    /// `{total, offset, limit, hasMore, nextOffset}` of a page of `count` items.
    static func pageMembers(total: Int, offset: Int, limit: Int, count: Int) -> [String: JSONValue] {
        let next = offset + count
        return ["total": .int(Int64(total)), "offset": .int(Int64(offset)), "limit": .int(Int64(limit)),
                "hasMore": .bool(next < total), "nextOffset": next < total ? .int(Int64(next)) : .null]
    }

    /// `limit`: an integer 1…200.
    private static func limitMember(_ reader: MethodParams) throws(GatewayError) -> Int? {
        let limit = try reader.integer("limit", minimum: 1)
        if let limit, limit > maxLimit { throw MethodParams.invalid(reader.method, at: "/limit", "must be <= \(maxLimit)") }
        return limit
    }

    /// An optional boolean member.
    private static func bool(_ reader: MethodParams, _ key: String) throws(GatewayError) -> Bool? {
        guard let value = reader.object[key] else { return nil }
        guard let flag = value.boolValue else { throw MethodParams.invalid(reader.method, at: "/\(key)", "must be boolean") }
        return flag
    }

    /// An optional member of a union of string literals (a TypeBox `Union` of `Literal`s: `anyOf`).
    private static func literal(_ reader: MethodParams, _ key: String, _ allowed: [String]) throws(GatewayError) -> String? {
        guard let value = reader.object[key] else { return nil }
        guard let text = value.stringValue, allowed.contains(text) else {
            throw MethodParams.invalid(reader.method, at: "/\(key)", "must match a schema in anyOf")
        }
        return text
    }

    /// An optional array of literals with `minItems: 1` and `maxItems`.
    private static func literalArray(_ reader: MethodParams, _ key: String, _ allowed: [String], maxItems: Int)
        throws(GatewayError) -> [String]?
    {
        guard let value = reader.object[key] else { return nil }
        guard let items = value.arrayValue else { throw MethodParams.invalid(reader.method, at: "/\(key)", "must be array") }
        if items.isEmpty { throw MethodParams.invalid(reader.method, at: "/\(key)", "must NOT have fewer than 1 items") }
        if items.count > maxItems {
            throw MethodParams.invalid(reader.method, at: "/\(key)", "must NOT have more than \(maxItems) items")
        }
        var texts: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue, allowed.contains(text) else {
                throw MethodParams.invalid(reader.method, at: "/\(key)/\(index)", "must match a schema in anyOf")
            }
            texts.append(text)
        }
        return texts
    }

    /// `normalizeLowercaseStringOrEmpty` as read here: trimmed and lowercased (`""` for nothing).
    static func normalized(_ text: String?) -> String {
        (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// Base-sensitivity collation (`Intl.Collator(undefined, {sensitivity: "base"})`) as read
    /// here: case and diacritics folded, then compared by code point.
    static func collate(_ left: String, _ right: String) -> ComparisonResult {
        let lhs = left.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        let rhs = right.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        if lhs == rhs { return .orderedSame }
        return lhs.unicodeScalars.lexicographicallyPrecedes(rhs.unicodeScalars) ? .orderedAscending : .orderedDescending
    }

    private static func compare(_ left: Int64, _ right: Int64) -> ComparisonResult {
        left == right ? .orderedSame : left < right ? .orderedAscending : .orderedDescending
    }
}
