import ArgumentParsing
import GatewayProtocol

extension ConsoleCommandSpec {
    /// The fixture-backed app methods: the slash commands and talk mode.
    static let fixtureCommands: [ConsoleCommandSpec] = [
        ConsoleCommandSpec(
            "commands",
            arguments: [PositionalSpec("entriesJSON", JSONArgument.self,
                                       help: "the new catalogue, a JSON array of command entries", optional: true)],
            restOfLine: true,
            summary: "show the slash commands commands.list answers, or replace them (entries as in a --fixtures file)",
            example: #"commands [{"name":"status","description":"Show status","source":"native","scope":"both","acceptsArgs":false}]"#
        ) { command, console in
            guard let value = command.argument(0, as: JSONArgument.self)?.value else {
                return .appFixture(AppFixtureReply.commands(await console.gateway.commands()))
            }
            let commands: [CommandFixture]
            do {
                commands = try GatewayFixtures.commands(json: value)
            } catch {
                throw ConsoleError("commands: \(error)")
            }
            await console.gateway.setCommands(commands)
            return .appFixture(AppFixtureReply.commands(commands))
        },
        ConsoleCommandSpec(
            "talk-mode",
            arguments: [PositionalSpec("on|off", OnOff.self, help: "on or off"),
                        PositionalSpec("phase", help: "the phase marker", optional: true)],
            summary: "switch talk mode as another device would (talk.mode to operators with operator.write)",
            example: "talk-mode on listening"
        ) { command, console in
            let enabled = try command.required(0, as: OnOff.self).on
            let phase = command.arguments.positionals.count > 1 ? try command.text(1) : nil
            let payload = await console.gateway.switchTalkMode(enabled: enabled, phase: phase)
            return .appFixture(AppFixtureReply(json: payload, text: "talk mode \(enabled ? "on" : "off")"
                + (phase.map { " (phase \($0))" } ?? "") + ": talk.mode sent"))
        },
        ConsoleCommandSpec(
            "cron",
            arguments: [PositionalSpec("cronJSON", JSONArgument.self,
                                       help: "the new cron fixtures, {jobs, runs, deliveryPreviews}", optional: true)],
            restOfLine: true,
            summary: "show the cron jobs and runs cron.list/get/runs answer, or replace them (as the cron member of a --fixtures file)",
            example: #"cron {"jobs":[],"runs":[]}"#
        ) { command, console in
            guard let value = command.argument(0, as: JSONArgument.self)?.value else {
                return .appFixture(AppFixtureReply.cron(await console.gateway.cron()))
            }
            let cron: CronFixtures
            do {
                cron = try CronFixtures(json: value)
            } catch {
                throw ConsoleError("cron: \(error)")
            }
            await console.gateway.setCron(cron)
            return .appFixture(AppFixtureReply.cron(cron))
        },
        ConsoleCommandSpec(
            "fixture",
            arguments: [PositionalSpec("agents|models|tasks|config|skills", FixtureMember.self, help: "agents, models, tasks, config or skills"),
                        PositionalSpec("json", JSONArgument.self,
                                       help: "the new value, as the same member of a --fixtures file", optional: true)],
            restOfLine: true,
            summary: "show a fixture (agents, models, tasks, config, skills), or replace it (as that member of a --fixtures file; no event)",
            example: #"fixture models [{"id":"claude-opus","name":"Claude Opus","provider":"anthropic"}]"#
        ) { command, console in
            let member = try command.required(0, as: FixtureMember.self)
            let gateway = console.gateway
            guard let value = command.argument(1, as: JSONArgument.self)?.value else {
                return .appFixture(await AppFixtureReply.fixture(member, gateway: gateway))
            }
            do throws(GatewayFixtures.FixtureError) {
                switch member {
                case .agents: await gateway.setAgents(try AgentRoster(json: value).keepingWorkspaces(of: await gateway.agents()))
                case .models: await gateway.setModels(try GatewayFixtures.models(json: value))
                case .tasks: await gateway.setTasks(try GatewayFixtures.tasks(json: value))
                case .config: await gateway.setGatewayConfig(try GatewayFixtures.config(json: value))
                case .skills: await gateway.setSkills(try SkillsFixtures(json: value))
                }
            } catch {
                throw ConsoleError("fixture \(member.rawValue): \(error)")
            }
            return .appFixture(await AppFixtureReply.fixture(member, gateway: gateway))
        },
    ]
}

/// `commands`, `talk-mode`, `cron` and `fixture`: the JSON result and its one-line text.
public struct AppFixtureReply: ConsoleRendering, Hashable {
    /// The `result` member of `command.ok`.
    public let json: JSONValue
    /// The text for a person at a terminal.
    public let text: String

    /// The reply listing `commands`.
    static func commands(_ commands: [CommandFixture]) -> AppFixtureReply {
        let names = commands.map { "/" + $0.name }
        return AppFixtureReply(json: ["commands": .array(commands.map { $0.entry(includeArgs: true) })],
                               text: "slash commands: " + (names.isEmpty ? "(none)" : names.joined(separator: ", ")))
    }

    /// The reply of `fixture MEMBER`: `{member, value}`, the value as that member of a
    /// `--fixtures` file holds it (`agents`: `{defaultId, agents}`), and a one-line summary.
    static func fixture(_ member: FixtureMember, gateway: Gateway) async -> AppFixtureReply {
        func listed(_ names: [String]) -> String { names.isEmpty ? "(none)" : names.joined(separator: ", ") }
        let value: JSONValue
        let summary: String
        switch member {
        case .agents:
            let roster = await gateway.agents()
            value = roster.json
            summary = listed(roster.agents.map { $0.id == roster.defaultId ? "\($0.id) (default)" : $0.id })
        case .models:
            let models = await gateway.models()
            value = .array(models.map(\.json))
            summary = listed(models.map(\.id))
        case .tasks:
            let tasks = await gateway.tasks()
            value = .array(tasks.map { .object($0.summary) })
            summary = listed(tasks.map { "\($0.id) (\($0.status))" })
        case .config:
            let config = await gateway.gatewayConfig()
            value = .object(config)
            summary = config.isEmpty ? "(empty)" : "sections " + config.keys.sorted().joined(separator: ", ")
        case .skills:
            let skills = await gateway.skills()
            value = skills.fixtureJSON
            summary = listed(skills.skills.map(\.name))
        }
        return AppFixtureReply(json: ["member": .string(member.rawValue), "value": value],
                               text: "\(member.rawValue): \(summary)")
    }

    /// The reply listing the cron fixtures: `{jobs, runs, deliveryPreviews}` as stored.
    static func cron(_ cron: CronFixtures) -> AppFixtureReply {
        let ids = cron.jobs.map(\.id)
        return AppFixtureReply(json: cron.json,
                               text: "cron jobs: " + (ids.isEmpty ? "(none)" : ids.joined(separator: ", "))
                                   + "; \(cron.runs.count) run\(cron.runs.count == 1 ? "" : "s")")
    }
}
