import Foundation
import GatewayProtocol

/// The apps' fixtures a Gateway starts with: the slash commands `commands.list` answers, the
/// models `models.list` answers, the tasks `tasks.list` answers, the Gateway configuration
/// `config.get` answers (redacted; `talk.config` reads its `talk`, `session` and `ui` sections),
/// the cron jobs and runs `cron.list/get/runs` answer and the skills `skills.status` reports.
///
/// `harness serve --fixtures FILE` reads them from a JSON object (docs/harness-serve.md
/// "Fixtures file"): `{"commands": [CommandEntry], "models": [ModelChoice], "tasks":
/// [TaskSummary], "config": {…}, "cron": {"jobs": [CronJob], "runs": [CronRunLogEntry],
/// "deliveryPreviews": {…}}, "skills": {"workspaceDir"?, "managedSkillsDir"?, "skills":
/// [SkillStatusEntry without eligible]}}`, each entry in upstream's closed `CommandEntrySchema` /
/// `ModelChoiceSchema` / `TaskSummarySchema` / `CronJobSchema` / `CronRunLogEntrySchema` shape,
/// `config` any JSON object. Anything else is refused with the JSON pointer of the first problem
/// (``GatewayFixtures/FixtureError``).
public struct GatewayFixtures: Sendable, Hashable {
    /// The slash commands (`commands.list`), in catalogue order.
    public var commands: [CommandFixture]
    /// The models (`models.list`), in catalogue order.
    public var models: [ModelFixture]
    /// The task ledger (`tasks.list`), in any order (the method sorts it).
    public var tasks: [TaskFixture]
    /// The Gateway configuration (`config.get` answers it with its secrets redacted), as an
    /// OpenClaw configuration file holds it (`{"gateway": {"auth": {"token": …}}, …}`).
    public var config: [String: JSONValue]
    /// The cron jobs and run history (`cron.list`, `cron.get`, `cron.runs`).
    public var cron: CronFixtures
    /// The skills (`skills.status`, `skills.install`).
    public var skills: SkillsFixtures

    /// Creates fixtures: by default no slash commands, the scripted chat agent as the one model,
    /// no tasks, an empty configuration, no cron jobs and no skills.
    public init(commands: [CommandFixture] = [], models: [ModelFixture] = [.mockEcho], tasks: [TaskFixture] = [],
                config: [String: JSONValue] = [:], cron: CronFixtures = CronFixtures(),
                skills: SkillsFixtures = SkillsFixtures()) {
        self.commands = commands
        self.models = models
        self.tasks = tasks
        self.config = config
        self.cron = cron
        self.skills = skills
    }

    /// A refusal of a fixtures document: where (a JSON pointer) and what.
    public struct FixtureError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The JSON pointer of the offending value (`""` for the document).
        public var pointer: String
        /// The problem.
        public var problem: String
        /// `at <pointer>: <problem>` (`at root` for the document).
        public var description: String { "at \(pointer.isEmpty ? "root" : pointer): \(problem)" }
    }

    /// Reads a fixtures document.
    /// - Throws: ``FixtureError`` naming the first value that does not fit.
    public init(json: JSONValue) throws(FixtureError) {
        let root = try FixtureReader(json, at: "", members: ["commands", "models", "tasks", "config", "cron", "skills"],
                                     required: [])
        commands = try root.array("commands").enumerated().map { index, item throws(FixtureError) in
            try CommandFixture(json: item, at: "/commands/\(index)")
        }
        models = try root.optionalArray("models")?.enumerated().map { index, item throws(FixtureError) in
            try ModelFixture(json: item, at: "/models/\(index)")
        } ?? [.mockEcho]
        tasks = try root.array("tasks").enumerated().map { index, item throws(FixtureError) in
            try TaskFixture(json: item, at: "/tasks/\(index)")
        }
        config = try root.objectMember("config") ?? [:]
        cron = try root.object["cron"].map { value throws(FixtureError) in try CronFixtures(json: value, at: "/cron") }
            ?? CronFixtures()
        skills = try root.object["skills"].map { value throws(FixtureError) in
            try SkillsFixtures(json: value, at: "/skills")
        } ?? SkillsFixtures()
    }

    /// Reads a fixtures document from the bytes of a JSON file.
    /// - Throws: ``FixtureError`` for text that is not JSON or a document that does not fit.
    public init(data: Data) throws(FixtureError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw FixtureError(pointer: "", problem: "not JSON")
        }
        try self.init(json: json)
    }

    /// Reads a JSON array of models, as the `models` member of a fixtures document (the console's
    /// `fixture models` argument).
    /// - Throws: ``FixtureError`` naming the first entry that does not fit.
    public static func models(json: JSONValue) throws(FixtureError) -> [ModelFixture] {
        guard let items = json.arrayValue else { throw FixtureError(pointer: "", problem: "must be array") }
        return try items.enumerated().map { index, item throws(FixtureError) in
            try ModelFixture(json: item, at: "/\(index)")
        }
    }

    /// Reads a JSON array of tasks, as the `tasks` member of a fixtures document (the console's
    /// `fixture tasks` argument).
    /// - Throws: ``FixtureError`` naming the first entry that does not fit.
    public static func tasks(json: JSONValue) throws(FixtureError) -> [TaskFixture] {
        guard let items = json.arrayValue else { throw FixtureError(pointer: "", problem: "must be array") }
        return try items.enumerated().map { index, item throws(FixtureError) in
            try TaskFixture(json: item, at: "/\(index)")
        }
    }

    /// Reads a configuration, as the `config` member of a fixtures document (any JSON object; the
    /// console's `fixture config` argument).
    /// - Throws: ``FixtureError`` when it is not an object.
    public static func config(json: JSONValue) throws(FixtureError) -> [String: JSONValue] {
        guard let members = json.objectValue else { throw FixtureError(pointer: "", problem: "must be object") }
        return members
    }

    /// Reads a JSON array of command entries (the console's `commands` argument).
    /// - Throws: ``FixtureError`` naming the first entry that does not fit.
    public static func commands(json: JSONValue) throws(FixtureError) -> [CommandFixture] {
        guard let items = json.arrayValue else { throw FixtureError(pointer: "", problem: "must be array") }
        return try items.enumerated().map { index, item throws(FixtureError) in
            try CommandFixture(json: item, at: "/\(index)")
        }
    }
}

extension CommandFixture {
    /// Reads one entry of the closed `CommandEntrySchema` shape at `pointer`.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer,
                                       members: ["name", "description", "category", "source", "scope", "acceptsArgs", "args"],
                                       required: ["name", "description", "source", "scope", "acceptsArgs"])
        name = try reader.string("name", nonEmpty: true) ?? ""
        description = try reader.string("description") ?? ""
        category = try reader.oneOf("category", Self.categories)
        source = try reader.oneOf("source", Self.sources) ?? ""
        scope = try reader.oneOf("scope", Self.scopes) ?? ""
        acceptsArgs = try reader.bool("acceptsArgs") ?? false
        args = try reader.optionalArray("args")?.enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
            try CommandArgFixture(json: item, at: "\(pointer)/args/\(index)")
        }
    }
}

extension ModelFixture {
    /// Reads one model of the closed `ModelChoiceSchema` shape at `pointer`.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer,
                                       members: ["id", "name", "provider", "alias", "contextWindow", "reasoning"],
                                       required: ["id", "name", "provider"])
        id = try reader.string("id", nonEmpty: true) ?? ""
        name = try reader.string("name", nonEmpty: true) ?? ""
        provider = try reader.string("provider", nonEmpty: true) ?? ""
        alias = try reader.string("alias", nonEmpty: true)
        contextWindow = try reader.integer("contextWindow")
        reasoning = try reader.bool("reasoning")
    }
}

extension CommandArgFixture {
    /// Reads one argument of the closed `CommandArgSchema` shape at `pointer`.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer,
                                       members: ["name", "description", "type", "required", "choices", "dynamic"],
                                       required: ["name", "description", "type"])
        name = try reader.string("name", nonEmpty: true) ?? ""
        description = try reader.string("description") ?? ""
        type = try reader.oneOf("type", Self.types) ?? ""
        required = try reader.bool("required")
        dynamic = try reader.bool("dynamic")
        choices = try reader.optionalArray("choices")?.enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
            let choice = try FixtureReader(item, at: "\(pointer)/choices/\(index)", members: ["value", "label"],
                                           required: ["value", "label"])
            return CommandArgChoice(value: try choice.string("value") ?? "", label: try choice.string("label") ?? "")
        }
    }
}

/// A closed JSON object of a fixtures document, read member by member (also the cron fixtures,
/// ``CronFixtures``).
struct FixtureReader {
    let object: [String: JSONValue]
    let pointer: String

    init(_ json: JSONValue, at pointer: String, members: [String], required: [String]) throws(GatewayFixtures.FixtureError) {
        guard let object = json.objectValue else {
            throw GatewayFixtures.FixtureError(pointer: pointer, problem: "must be object")
        }
        for key in required where object[key] == nil {
            throw GatewayFixtures.FixtureError(pointer: pointer, problem: "must have required property '\(key)'")
        }
        if let unknown = object.keys.sorted().first(where: { !members.contains($0) }) {
            throw GatewayFixtures.FixtureError(pointer: pointer, problem: "unexpected property '\(unknown)'")
        }
        self.object = object
        self.pointer = pointer
    }

    private func fail(_ key: String, _ problem: String) -> GatewayFixtures.FixtureError {
        GatewayFixtures.FixtureError(pointer: "\(pointer)/\(key)", problem: problem)
    }

    func string(_ key: String, nonEmpty: Bool = false) throws(GatewayFixtures.FixtureError) -> String? {
        guard let value = object[key] else { return nil }
        guard let text = value.stringValue else { throw fail(key, "must be string") }
        if nonEmpty, text.isEmpty { throw fail(key, "must NOT have fewer than 1 characters") }
        return text
    }

    func oneOf(_ key: String, _ allowed: [String]) throws(GatewayFixtures.FixtureError) -> String? {
        guard let text = try string(key) else { return nil }
        guard allowed.contains(text) else { throw fail(key, "must be one of \(allowed.joined(separator: ", "))") }
        return text
    }

    func bool(_ key: String) throws(GatewayFixtures.FixtureError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard let flag = value.boolValue else { throw fail(key, "must be boolean") }
        return flag
    }

    func integer(_ key: String) throws(GatewayFixtures.FixtureError) -> Int? {
        guard let value = object[key] else { return nil }
        guard let number = value.int64Value, let integer = Int(exactly: number) else { throw fail(key, "must be integer") }
        return integer
    }

    func optionalArray(_ key: String) throws(GatewayFixtures.FixtureError) -> [JSONValue]? {
        guard let value = object[key] else { return nil }
        guard let items = value.arrayValue else { throw fail(key, "must be array") }
        return items
    }

    func objectMember(_ key: String) throws(GatewayFixtures.FixtureError) -> [String: JSONValue]? {
        guard let value = object[key] else { return nil }
        guard let members = value.objectValue else { throw fail(key, "must be object") }
        return members
    }

    func array(_ key: String) throws(GatewayFixtures.FixtureError) -> [JSONValue] {
        try optionalArray(key) ?? []
    }
}
