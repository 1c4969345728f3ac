import Foundation
import GatewayProtocol

/// The cron jobs and run history `cron.list`, `cron.get` and `cron.runs` answer: fixtures in
/// upstream's closed shapes, answered as given (the fake Gateway runs no scheduler).
///
/// `harness serve --fixtures FILE` reads them from the `"cron"` member (docs/harness-serve.md
/// "Fixtures file"): `{"jobs": [CronJob], "runs": [CronRunLogEntry], "deliveryPreviews":
/// {"<jobId>": {label, detail}}}`, each member optional.
///
/// Upstream (read for facts, nothing copied): `CronJobSchema`, `CronJobStateSchema` and
/// `CronRunLogEntrySchema` of `packages/gateway-protocol/src/schema/cron.ts@01379adaf2cd76c4f764d3a55d65f12d842c4dce`.
/// A job's required members are checked with their kinds (`schedule.kind`, `payload.kind`,
/// `delivery.mode`, `sessionTarget`, `wakeMode`, the `state` members); the insides of
/// `schedule`, `payload`, `delivery` and `failureAlert` are answered as given.
public struct CronFixtures: Sendable, Hashable {
    /// The cron jobs, in any order (`cron.list` sorts them).
    public var jobs: [CronJobFixture]
    /// The run history of every job, in any order (`cron.runs` sorts it by `ts`).
    public var runs: [CronRunFixture]
    /// The delivery preview `cron.list` shows per job id, `{label, detail}` (upstream resolves
    /// it from its channels, which the fake Gateway does not have).
    public var deliveryPreviews: [String: CronDeliveryPreview]

    /// Creates cron fixtures (by default none).
    public init(jobs: [CronJobFixture] = [], runs: [CronRunFixture] = [],
                deliveryPreviews: [String: CronDeliveryPreview] = [:]) {
        self.jobs = jobs
        self.runs = runs
        self.deliveryPreviews = deliveryPreviews
    }

    /// Reads cron fixtures (the `"cron"` member of a fixtures document, the console's `cron`).
    /// - Throws: ``GatewayFixtures/FixtureError`` naming the first value that does not fit.
    public init(json: JSONValue) throws(GatewayFixtures.FixtureError) {
        try self.init(json: json, at: "")
    }

    /// The fixtures as the `"cron"` member of a fixtures document holds them.
    public var json: JSONValue {
        ["jobs": .array(jobs.map { .object($0.job) }), "runs": .array(runs.map { .object($0.entry) }),
         "deliveryPreviews": .object(deliveryPreviews.mapValues(\.json))]
    }

    /// Reads the `"cron"` member of a fixtures document at `pointer`.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer, members: ["jobs", "runs", "deliveryPreviews"], required: [])
        jobs = try reader.array("jobs").enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
            try CronJobFixture(json: item, at: "\(pointer)/jobs/\(index)")
        }
        runs = try reader.array("runs").enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
            try CronRunFixture(json: item, at: "\(pointer)/runs/\(index)")
        }
        var previews: [String: CronDeliveryPreview] = [:]
        for (id, value) in try reader.objectMember("deliveryPreviews") ?? [:] {
            let preview = try FixtureReader(value, at: "\(pointer)/deliveryPreviews/\(id)", members: ["label", "detail"],
                                            required: ["label", "detail"])
            previews[id] = CronDeliveryPreview(label: try preview.string("label") ?? "",
                                               detail: try preview.string("detail") ?? "")
        }
        deliveryPreviews = previews
    }
}

/// A delivery preview of `cron.list` (`CronDeliveryPreview` upstream): a short label and a detail.
public struct CronDeliveryPreview: Sendable, Hashable {
    /// The label (`"not requested"`, `"webhook:<to>"`, `"announce -> <channel>:<to>"`, …).
    public var label: String
    /// The detail (`"not requested"`, `"webhook"`, `"explicit"`, …).
    public var detail: String

    /// Creates a preview.
    public init(label: String, detail: String) {
        self.label = label
        self.detail = detail
    }

    var json: JSONValue { ["label": .string(label), "detail": .string(detail)] }
}

/// One cron job in upstream's closed `CronJob` shape, answered as given.
public struct CronJobFixture: Sendable, Hashable {
    static let members = ["id", "agentId", "sessionKey", "name", "description", "enabled", "deleteAfterRun",
                          "createdAtMs", "updatedAtMs", "schedule", "sessionTarget", "wakeMode", "payload", "delivery",
                          "failureAlert", "state"]
    static let required = ["id", "name", "enabled", "createdAtMs", "updatedAtMs", "schedule", "sessionTarget",
                           "wakeMode", "payload", "state"]
    static let stateMembers = ["nextRunAtMs", "runningAtMs", "lastRunAtMs", "lastRunStatus", "lastStatus", "lastError",
                               "lastDiagnostics", "lastDiagnosticSummary", "lastErrorReason", "lastDurationMs",
                               "consecutiveErrors", "consecutiveSkipped", "lastDelivered", "lastDeliveryStatus",
                               "lastDeliveryError", "lastFailureNotificationDelivered",
                               "lastFailureNotificationDeliveryStatus", "lastFailureNotificationDeliveryError",
                               "lastFailureAlertAtMs"]
    static let stateIntegers = ["nextRunAtMs", "runningAtMs", "lastRunAtMs", "lastDurationMs", "consecutiveErrors",
                                "consecutiveSkipped", "lastFailureAlertAtMs"]
    static let stateStrings = ["lastError", "lastDiagnosticSummary", "lastErrorReason", "lastDeliveryError",
                               "lastFailureNotificationDeliveryError"]
    static let runStatuses = ["ok", "error", "skipped"]
    static let deliveryStatuses = ["delivered", "not-delivered", "unknown", "not-requested"]
    static let scheduleKinds = ["at", "every", "cron", "on-exit"]

    /// The job as stored (`cron.get` and `cron.list` add the read view's projections).
    public private(set) var job: [String: JSONValue]

    /// The job id.
    public var id: String { job["id"]?.stringValue ?? "" }
    /// The job name.
    public var name: String { job["name"]?.stringValue ?? "" }

    /// Reads a job of the closed `CronJob` shape.
    /// - Throws: ``GatewayFixtures/FixtureError`` naming the first member that does not fit.
    public init(json: JSONValue) throws(GatewayFixtures.FixtureError) {
        try self.init(json: json, at: "")
    }

    /// Reads a job at `pointer` of a fixtures document.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer, members: Self.members, required: Self.required)
        func fail(_ key: String, _ problem: String) -> GatewayFixtures.FixtureError {
            GatewayFixtures.FixtureError(pointer: "\(pointer)/\(key)", problem: problem)
        }
        for key in ["id", "name", "agentId", "sessionKey"] { _ = try reader.string(key, nonEmpty: true) }
        _ = try reader.string("description")
        _ = try reader.bool("enabled")
        _ = try reader.bool("deleteAfterRun")
        for key in ["createdAtMs", "updatedAtMs"] {
            guard let number = reader.object[key]?.int64Value, number >= 0 else { throw fail(key, "must be integer >= 0") }
        }
        guard let target = reader.object["sessionTarget"]?.stringValue,
              ["main", "isolated", "current"].contains(target) || (target.hasPrefix("session:") && target.count > 8)
        else { throw fail("sessionTarget", "must be main, isolated, current or session:<key>") }
        _ = try reader.oneOf("wakeMode", ["next-heartbeat", "now"])
        try Self.kind(reader.object["schedule"], "kind", Self.scheduleKinds, at: "\(pointer)/schedule")
        try Self.kind(reader.object["payload"], "kind", ["systemEvent", "agentTurn", "command"], at: "\(pointer)/payload")
        if let delivery = reader.object["delivery"] {
            try Self.kind(delivery, "mode", ["none", "announce", "webhook"], at: "\(pointer)/delivery")
        }
        if let alert = reader.object["failureAlert"], alert != .bool(false), alert.objectValue == nil {
            throw fail("failureAlert", "must be false or object")
        }
        let state = try FixtureReader(reader.object["state"] ?? .null, at: "\(pointer)/state", members: Self.stateMembers,
                                      required: [])
        for key in Self.stateIntegers {
            guard let value = state.object[key] else { continue }
            guard let number = value.int64Value, number >= 0 else { throw fail("state/\(key)", "must be integer >= 0") }
        }
        for key in Self.stateStrings { _ = try state.string(key) }
        for key in ["lastRunStatus", "lastStatus"] { _ = try state.oneOf(key, Self.runStatuses) }
        for key in ["lastDeliveryStatus", "lastFailureNotificationDeliveryStatus"] {
            _ = try state.oneOf(key, Self.deliveryStatuses)
        }
        for key in ["lastDelivered", "lastFailureNotificationDelivered"] { _ = try state.bool(key) }
        if let diagnostics = state.object["lastDiagnostics"], diagnostics.objectValue == nil {
            throw fail("state/lastDiagnostics", "must be object")
        }
        job = reader.object
    }

    /// An object whose `member` is one of `allowed` (a schedule's kind, a payload's kind, a
    /// delivery's mode); the rest of it is answered as given.
    private static func kind(_ value: JSONValue?, _ member: String, _ allowed: [String], at pointer: String)
        throws(GatewayFixtures.FixtureError)
    {
        guard let object = value?.objectValue else {
            throw GatewayFixtures.FixtureError(pointer: pointer, problem: "must be object")
        }
        guard let text = object[member]?.stringValue, allowed.contains(text) else {
            throw GatewayFixtures.FixtureError(pointer: "\(pointer)/\(member)",
                                               problem: "must be one of \(allowed.joined(separator: ", "))")
        }
    }

    var state: [String: JSONValue] { job["state"]?.objectValue ?? [:] }
    /// `isJobEnabled`: a missing flag is enabled.
    var isEnabled: Bool { job["enabled"]?.boolValue ?? true }
    /// `resolveJobLastRunStatus`: `lastRunStatus`, else the deprecated `lastStatus`.
    var lastRunStatus: JSONValue? { state["lastRunStatus"] ?? state["lastStatus"] }
    var nextRunAtMs: Int64? { state["nextRunAtMs"]?.int64Value }
    var updatedAtMs: Int64 { job["updatedAtMs"]?.int64Value ?? 0 }
    var scheduleKind: String? { job["schedule"]?.objectValue?["kind"]?.stringValue }

    /// `cronJobReadView`: the job with its state's latest-run members copied to the top level
    /// (absent ones stay absent).
    var readView: JSONValue {
        var view = job
        let projections: [(String, JSONValue?)] = [
            ("nextRunAtMs", state["nextRunAtMs"]), ("lastRunAtMs", state["lastRunAtMs"]),
            ("lastRunStatus", lastRunStatus), ("lastRunError", state["lastError"]),
            ("lastDelivered", state["lastDelivered"]), ("lastDeliveryStatus", state["lastDeliveryStatus"]),
            ("lastDeliveryError", state["lastDeliveryError"]),
            ("lastFailureNotificationDelivered", state["lastFailureNotificationDelivered"]),
            ("lastFailureNotificationDeliveryStatus", state["lastFailureNotificationDeliveryStatus"]),
            ("lastFailureNotificationDeliveryError", state["lastFailureNotificationDeliveryError"]),
        ]
        for (key, value) in projections { view[key] = value }
        return .object(view)
    }

    /// `compactCronListJob`: the list row of `compact: true`; the run members are `null` when
    /// absent, the delivery members left out when absent.
    var compactRow: JSONValue {
        var row: [String: JSONValue] = [
            "id": .string(id), "name": .string(name), "enabled": job["enabled"] ?? .bool(true),
            "nextRunAtMs": state["nextRunAtMs"] ?? .null, "scheduleKind": scheduleKind.map(JSONValue.string) ?? .null,
            "lastRunAtMs": state["lastRunAtMs"] ?? .null, "lastRunStatus": lastRunStatus ?? .null,
            "lastRunError": state["lastError"] ?? .null,
        ]
        for key in ["lastDelivered", "lastDeliveryStatus", "lastDeliveryError", "lastFailureNotificationDelivered",
                    "lastFailureNotificationDeliveryStatus", "lastFailureNotificationDeliveryError"] {
            if let value = state[key] { row[key] = value }
        }
        return .object(row)
    }
}

/// One finished run in upstream's closed `CronRunLogEntry` shape, answered as given (`jobName`
/// is added by `cron.runs`, not stored).
public struct CronRunFixture: Sendable, Hashable {
    static let members = ["ts", "jobId", "action", "status", "error", "errorReason", "summary", "diagnostics",
                          "delivered", "deliveryStatus", "deliveryError", "failureNotificationDelivery", "sessionId",
                          "sessionKey", "runId", "runAtMs", "durationMs", "nextRunAtMs", "model", "provider", "usage"]

    /// The entry as stored.
    public private(set) var entry: [String: JSONValue]

    /// Reads an entry of the closed `CronRunLogEntry` shape.
    /// - Throws: ``GatewayFixtures/FixtureError`` naming the first member that does not fit.
    public init(json: JSONValue) throws(GatewayFixtures.FixtureError) {
        try self.init(json: json, at: "")
    }

    /// Reads an entry at `pointer` of a fixtures document.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer, members: Self.members, required: ["ts", "jobId", "action"])
        func fail(_ key: String, _ problem: String) -> GatewayFixtures.FixtureError {
            GatewayFixtures.FixtureError(pointer: "\(pointer)/\(key)", problem: problem)
        }
        for key in ["ts", "runAtMs", "durationMs", "nextRunAtMs"] {
            guard let value = reader.object[key] else { continue }
            guard let number = value.int64Value, number >= 0 else { throw fail(key, "must be integer >= 0") }
        }
        for key in ["jobId", "sessionId", "sessionKey", "runId"] { _ = try reader.string(key, nonEmpty: true) }
        for key in ["error", "errorReason", "summary", "deliveryError", "model", "provider"] { _ = try reader.string(key) }
        _ = try reader.oneOf("action", ["finished"])
        _ = try reader.oneOf("status", CronJobFixture.runStatuses)
        _ = try reader.oneOf("deliveryStatus", CronJobFixture.deliveryStatuses)
        _ = try reader.bool("delivered")
        for key in ["diagnostics", "failureNotificationDelivery", "usage"] { _ = try reader.objectMember(key) }
        entry = reader.object
    }

    var jobId: String { entry["jobId"]?.stringValue ?? "" }
    var ts: Int64 { entry["ts"]?.int64Value ?? 0 }
    var status: String? { entry["status"]?.stringValue }
}
