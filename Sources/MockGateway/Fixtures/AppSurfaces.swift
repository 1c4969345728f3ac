import GatewayProtocol

/// The state behind the methods the apps call beyond chat and pairing: the agents and their
/// workspaces, the voice wake triggers, and which unserved methods were already reported.
struct AppSurfaces: Sendable {
    /// The agents (`agents.list`, `agents.workspace.*`).
    var agents: AgentRoster
    /// The voice wake triggers (`voicewake.get/set`, `voicewake.changed`).
    var voiceWake: VoiceWakeSettings
    /// The slash commands (`commands.list`).
    var commands: [CommandFixture]
    /// The models (`models.list`).
    var models: [ModelFixture]
    /// The task ledger (`tasks.list`).
    var tasks: [TaskFixture]
    /// The Gateway configuration (`config.get`, redacted when answered).
    var config: [String: JSONValue]
    /// The cron jobs and run history (`cron.list`, `cron.get`, `cron.runs`).
    var cron: CronFixtures
    /// The skills (`skills.status`, `skills.install`).
    var skills: SkillsFixtures
    /// The unserved methods already reported (`GatewayEvent.methodUnserved`), once each.
    var reportedUnservedMethods: Set<String> = []

    /// The surfaces a Gateway starts with.
    init(configuration: GatewayConfiguration) {
        agents = configuration.agents
        voiceWake = VoiceWakeSettings(defaults: configuration.voiceWakeTriggers)
        commands = configuration.fixtures.commands
        models = configuration.fixtures.models
        tasks = configuration.fixtures.tasks
        config = configuration.fixtures.config
        cron = configuration.fixtures.cron
        skills = configuration.fixtures.skills
    }

    /// Whether `method` is reported now: `true` the first time only.
    mutating func shouldReportUnserved(_ method: String) -> Bool {
        reportedUnservedMethods.insert(method).inserted
    }
}
