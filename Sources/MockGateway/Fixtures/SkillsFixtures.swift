import GatewayProtocol

/// Binaries, environment variables, configuration paths and platforms a skill needs, or lacks
/// (`requirements` / `missing` of upstream's `SkillStatusEntry`).
public struct SkillRequirements: Sendable, Hashable {
    /// Binaries that must all be on `PATH`.
    public var bins: [String]
    /// Binaries of which one must be on `PATH`.
    public var anyBins: [String]
    /// Environment variables.
    public var env: [String]
    /// Configuration paths that must be truthy.
    public var config: [String]
    /// Platforms (`process.platform` values).
    public var os: [String]

    /// Creates a set of requirements (by default none).
    public init(bins: [String] = [], anyBins: [String] = [], env: [String] = [], config: [String] = [], os: [String] = []) {
        self.bins = bins
        self.anyBins = anyBins
        self.env = env
        self.config = config
        self.os = os
    }

    /// Whether nothing is listed.
    var isEmpty: Bool { bins.isEmpty && anyBins.isEmpty && env.isEmpty && config.isEmpty && os.isEmpty }

    /// `{bins, anyBins, env, config, os}`.
    var json: JSONValue {
        ["bins": .array(bins.map(JSONValue.string)), "anyBins": .array(anyBins.map(JSONValue.string)),
         "env": .array(env.map(JSONValue.string)), "config": .array(config.map(JSONValue.string)),
         "os": .array(os.map(JSONValue.string))]
    }
}

/// One installer a skill offers (`SkillInstallOption`: `{id, kind, label, bins}`).
public struct SkillInstallOption: Sendable, Hashable {
    /// The installer kinds upstream's `SkillInstallSpec` has.
    public static let kinds = ["brew", "node", "go", "uv", "download"]

    /// The installer id `skills.install` names (`installId`).
    public var id: String
    /// `brew`, `node`, `go`, `uv` or `download`.
    public var kind: String
    /// The label shown.
    public var label: String
    /// The binaries the installer provides.
    public var bins: [String]

    /// Creates an installer.
    public init(id: String, kind: String, label: String, bins: [String] = []) {
        self.id = id
        self.kind = kind
        self.label = label
        self.bins = bins
    }

    /// `{id, kind, label, bins}`.
    var json: JSONValue {
        ["id": .string(id), "kind": .string(kind), "label": .string(label), "bins": .array(bins.map(JSONValue.string))]
    }
}

/// One skill of the workspace `skills.status` reports: upstream's `SkillStatusEntry` without
/// `eligible`, which is derived as upstream's builder derives it.
public struct SkillFixture: Sendable, Hashable {
    /// The skill name (`skills.install` names it).
    public var name: String
    /// The description.
    public var description: String
    /// Where it was loaded from (`openclaw-bundled`, `openclaw-managed`, `openclaw-workspace`, …).
    public var source: String
    /// The `SKILL.md` path.
    public var filePath: String
    /// The skill's directory.
    public var baseDir: String
    /// The configuration key (`skills.entries.<key>`), by default the name.
    public var skillKey: String
    /// The environment variable an API key stands for, if any.
    public var primaryEnv: String?
    /// The emoji, if any.
    public var emoji: String?
    /// The homepage, if any.
    public var homepage: String?
    /// Whether the skill is always eligible (then nothing is reported missing).
    public var always: Bool
    /// Whether the configuration disables it.
    public var disabled: Bool
    /// Whether the bundled-skill allowlist leaves it out.
    public var blockedByAllowlist: Bool
    /// What it needs.
    public var requirements: SkillRequirements
    /// What of that is missing (installing an installer's binaries removes them).
    public var missing: SkillRequirements
    /// The configuration checks `{path, value, satisfied}`, as given.
    public var configChecks: [JSONValue]
    /// The installers offered.
    public var install: [SkillInstallOption]

    /// Creates a skill.
    public init(name: String, description: String, source: String, filePath: String, baseDir: String,
                skillKey: String? = nil, primaryEnv: String? = nil, emoji: String? = nil, homepage: String? = nil,
                always: Bool = false, disabled: Bool = false, blockedByAllowlist: Bool = false,
                requirements: SkillRequirements = SkillRequirements(), missing: SkillRequirements = SkillRequirements(),
                configChecks: [JSONValue] = [], install: [SkillInstallOption] = []) {
        self.name = name
        self.description = description
        self.source = source
        self.filePath = filePath
        self.baseDir = baseDir
        self.skillKey = skillKey ?? name
        self.primaryEnv = primaryEnv
        self.emoji = emoji
        self.homepage = homepage
        self.always = always
        self.disabled = disabled
        self.blockedByAllowlist = blockedByAllowlist
        self.requirements = requirements
        self.missing = missing
        self.configChecks = configChecks
        self.install = install
    }

    /// What the report says is missing: nothing for an `always` skill (upstream `buildSkillStatus`).
    var reportedMissing: SkillRequirements { always ? SkillRequirements() : missing }

    /// Upstream's `eligible`: not disabled, not blocked, and `always` or nothing missing.
    public var eligible: Bool { !disabled && !blockedByAllowlist && (always || missing.isEmpty) }

    /// The entry as `skills.status` sends it.
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name), "description": .string(description), "source": .string(source),
            "filePath": .string(filePath), "baseDir": .string(baseDir), "skillKey": .string(skillKey),
            "always": .bool(always), "disabled": .bool(disabled), "blockedByAllowlist": .bool(blockedByAllowlist),
            "eligible": .bool(eligible), "requirements": requirements.json, "missing": reportedMissing.json,
            "configChecks": .array(configChecks), "install": .array(install.map(\.json)),
        ]
        if let primaryEnv { object["primaryEnv"] = .string(primaryEnv) }
        if let emoji { object["emoji"] = .string(emoji) }
        if let homepage { object["homepage"] = .string(homepage) }
        return .object(object)
    }

    /// The skill as a fixtures document holds it: the report's entry without `eligible`, with
    /// `missing` as given.
    var fixtureJSON: JSONValue {
        guard case .object(var object) = json else { return json }
        object.removeValue(forKey: "eligible")
        object["missing"] = missing.json
        return .object(object)
    }

    /// The skill after `option` ran: its binaries are on `PATH` now, so they leave `missing.bins`,
    /// and one of them among the `anyBins` satisfies those.
    func installed(_ option: SkillInstallOption) -> SkillFixture {
        var next = self
        next.missing.bins.removeAll { option.bins.contains($0) }
        if option.bins.contains(where: requirements.anyBins.contains) { next.missing.anyBins = [] }
        return next
    }
}

/// The skills `skills.status` reports and `skills.install` installs: a fixture a test or
/// `harness serve --fixtures` (`"skills"`) sets, by default none.
public struct SkillsFixtures: Sendable, Hashable {
    /// The workspace directory the report names (by default the default agent's workspace
    /// directory, else `(in memory)`).
    public var workspaceDir: String?
    /// The managed skills directory the report names (by default `(in memory)`).
    public var managedSkillsDir: String?
    /// The skills, in report order.
    public var skills: [SkillFixture]

    /// Creates the skills fixture.
    public init(workspaceDir: String? = nil, managedSkillsDir: String? = nil, skills: [SkillFixture] = []) {
        self.workspaceDir = workspaceDir
        self.managedSkillsDir = managedSkillsDir
        self.skills = skills
    }

    /// The fixture as a fixtures document's `skills` member holds it (read back by
    /// ``init(json:at:)`` to an equal value).
    var fixtureJSON: JSONValue {
        var object: [String: JSONValue] = ["skills": .array(skills.map(\.fixtureJSON))]
        if let workspaceDir { object["workspaceDir"] = .string(workspaceDir) }
        if let managedSkillsDir { object["managedSkillsDir"] = .string(managedSkillsDir) }
        return .object(object)
    }

    /// Reads `{workspaceDir?, managedSkillsDir?, skills: [SkillStatusEntry without eligible]}`.
    /// - Throws: ``GatewayFixtures/FixtureError`` naming the first value that does not fit.
    public init(json: JSONValue, at pointer: String = "") throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer, members: ["workspaceDir", "managedSkillsDir", "skills"],
                                       required: [])
        workspaceDir = try reader.string("workspaceDir", nonEmpty: true)
        managedSkillsDir = try reader.string("managedSkillsDir", nonEmpty: true)
        skills = try reader.array("skills").enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
            try SkillFixture(json: item, at: "\(pointer)/skills/\(index)")
        }
    }
}

extension SkillFixture {
    /// Reads one skill at `pointer`.
    init(json: JSONValue, at pointer: String) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: pointer,
                                       members: ["name", "description", "source", "filePath", "baseDir", "skillKey",
                                                 "primaryEnv", "emoji", "homepage", "always", "disabled",
                                                 "blockedByAllowlist", "requirements", "missing", "configChecks", "install"],
                                       required: ["name", "description", "source", "filePath", "baseDir"])
        func requirements(_ key: String) throws(GatewayFixtures.FixtureError) -> SkillRequirements {
            guard let value = reader.object[key] else { return SkillRequirements() }
            let members = ["bins", "anyBins", "env", "config", "os"]
            let lists = try FixtureReader(value, at: "\(pointer)/\(key)", members: members, required: [])
            func strings(_ member: String) throws(GatewayFixtures.FixtureError) -> [String] {
                try lists.array(member).enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
                    guard let text = item.stringValue else {
                        throw GatewayFixtures.FixtureError(pointer: "\(pointer)/\(key)/\(member)/\(index)", problem: "must be string")
                    }
                    return text
                }
            }
            return SkillRequirements(bins: try strings("bins"), anyBins: try strings("anyBins"), env: try strings("env"),
                                     config: try strings("config"), os: try strings("os"))
        }
        self.init(name: try reader.string("name", nonEmpty: true) ?? "",
                  description: try reader.string("description") ?? "",
                  source: try reader.string("source", nonEmpty: true) ?? "",
                  filePath: try reader.string("filePath", nonEmpty: true) ?? "",
                  baseDir: try reader.string("baseDir", nonEmpty: true) ?? "",
                  skillKey: try reader.string("skillKey", nonEmpty: true),
                  primaryEnv: try reader.string("primaryEnv"), emoji: try reader.string("emoji"),
                  homepage: try reader.string("homepage"),
                  always: try reader.bool("always") ?? false, disabled: try reader.bool("disabled") ?? false,
                  blockedByAllowlist: try reader.bool("blockedByAllowlist") ?? false,
                  requirements: try requirements("requirements"), missing: try requirements("missing"),
                  configChecks: try reader.array("configChecks").enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
                      let check = try FixtureReader(item, at: "\(pointer)/configChecks/\(index)",
                                                    members: ["path", "value", "satisfied"], required: ["path", "satisfied"])
                      _ = try check.string("path")
                      _ = try check.bool("satisfied")
                      return item
                  },
                  install: try reader.array("install").enumerated().map { index, item throws(GatewayFixtures.FixtureError) in
                      let option = try FixtureReader(item, at: "\(pointer)/install/\(index)",
                                                     members: ["id", "kind", "label", "bins"], required: ["id", "kind", "label"])
                      return SkillInstallOption(
                          id: try option.string("id", nonEmpty: true) ?? "",
                          kind: try option.oneOf("kind", SkillInstallOption.kinds) ?? "",
                          label: try option.string("label") ?? "",
                          bins: try option.array("bins").enumerated().map { binIndex, bin throws(GatewayFixtures.FixtureError) in
                              guard let text = bin.stringValue else {
                                  throw GatewayFixtures.FixtureError(pointer: "\(pointer)/install/\(index)/bins/\(binIndex)",
                                                                     problem: "must be string")
                              }
                              return text
                          })
                  })
    }
}

/// `skills.status` and `skills.install` over the skills fixture.
///
/// Upstream: one generation read whole at `@013c24e74a262690bbe83a479f03f50404a8ef13` of
/// `openclaw/openclaw`: the handlers of `src/gateway/server-methods/skills.ts`, the report of
/// `buildWorkspaceSkillStatus` / `buildSkillStatus` in `src/agents/skills-status.ts` and the
/// results of `installSkill` in `src/agents/skills-install.ts`. Params of that generation (closed):
/// `skills.status {}`, `skills.install {name, installId, timeoutMs? >= 1000}`, both names
/// non-empty. The report is `{workspaceDir, managedSkillsDir, skills}` for the default agent's
/// workspace. An install answers `{ok, message, stdout, stderr, code}`: success
/// `{ok: true, message: "Installed", stdout: "", stderr: "", code: 0}` (the fake runs no
/// installer, so its output is empty); a skill that is not there `Skill not found: <name>`, an
/// installer it does not offer `Installer not found: <installId>`, both with `code: null`; a
/// failed install is answered `ok: false` with that result as the payload and the error
/// `UNAVAILABLE <message>`.
enum SkillsReport {
    /// The `skills.status` answer.
    static func status(_ params: JSONValue?, skills: SkillsFixtures, agents: AgentRoster) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            _ = try MethodParams(params, method: .skillsStatus, members: [])
            let workspace = skills.workspaceDir ?? agents.agent(agents.defaultId)?.workspaceDirectory ?? inMemory
            return .success(["workspaceDir": .string(workspace),
                             "managedSkillsDir": .string(skills.managedSkillsDir ?? inMemory),
                             "skills": .array(skills.skills.map(\.json))])
        } catch {
            return .failure(error)
        }
    }

    /// What the fake Gateway names where upstream names a directory on its disk.
    static let inMemory = "(in memory)"

    /// The outcome of a `skills.install` call.
    enum InstallOutcome: Sendable, Equatable {
        /// The params were refused (`INVALID_REQUEST`).
        case invalid(GatewayError)
        /// The installer's result (`ok: false` answers with the `UNAVAILABLE` error too), and the
        /// skills after it.
        case result(JSONValue, ok: Bool, skills: SkillsFixtures)
    }

    /// The `skills.install` answer and the skills after it.
    static func install(_ params: JSONValue?, skills: SkillsFixtures) -> InstallOutcome {
        let name: String
        let installId: String
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .skillsInstall, members: ["name", "installId", "timeoutMs"],
                                          required: ["name", "installId"])
            name = try reader.requiredString("name")
            installId = try reader.requiredString("installId")
            _ = try reader.integer("timeoutMs", minimum: 1000)
        } catch {
            return .invalid(error)
        }
        func failed(_ message: String) -> InstallOutcome {
            .result(["ok": false, "message": .string(message), "stdout": "", "stderr": "", "code": .null],
                    ok: false, skills: skills)
        }
        guard let index = skills.skills.firstIndex(where: { $0.name == name }) else {
            return failed("Skill not found: \(name)")
        }
        guard let option = skills.skills[index].install.first(where: { $0.id == installId }) else {
            return failed("Installer not found: \(installId)")
        }
        var next = skills
        next.skills[index] = skills.skills[index].installed(option)
        return .result(["ok": true, "message": "Installed", "stdout": "", "stderr": "", "code": 0], ok: true, skills: next)
    }
}
