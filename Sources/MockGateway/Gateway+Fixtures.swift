import GatewayProtocol

// MARK: - Fixture-backed app methods (scripting)

extension Gateway {
    /// The slash commands `commands.list` answers.
    public func commands() async -> [CommandFixture] {
        await core.appSurfaces.commands
    }

    /// Replaces the slash commands `commands.list` answers.
    public func setCommands(_ commands: [CommandFixture]) async {
        await core.setCommands(commands)
    }

    /// The models `models.list` answers.
    public func models() async -> [ModelFixture] {
        await core.appSurfaces.models
    }

    /// Replaces the models `models.list` answers (every `view` lists them).
    public func setModels(_ models: [ModelFixture]) async {
        await core.setModels(models)
    }

    /// The Gateway configuration `config.get` answers (unredacted, as given).
    public func gatewayConfig() async -> [String: JSONValue] {
        await core.appSurfaces.config
    }

    /// Replaces the Gateway configuration `config.get` answers with its secrets redacted.
    public func setGatewayConfig(_ config: [String: JSONValue]) async {
        await core.setGatewayConfig(config)
    }

    /// The task ledger `tasks.list` pages through.
    public func tasks() async -> [TaskFixture] {
        await core.appSurfaces.tasks
    }

    /// Replaces the task ledger `tasks.list` pages through.
    public func setTasks(_ tasks: [TaskFixture]) async {
        await core.setTasks(tasks)
    }

    /// The cron jobs and run history `cron.list`, `cron.get` and `cron.runs` answer.
    public func cron() async -> CronFixtures {
        await core.appSurfaces.cron
    }

    /// Replaces the cron jobs and run history `cron.list`, `cron.get` and `cron.runs` answer.
    public func setCron(_ cron: CronFixtures) async {
        await core.setCron(cron)
    }

    /// The skills `skills.status` reports (after the installs `skills.install` made).
    public func skills() async -> SkillsFixtures {
        await core.appSurfaces.skills
    }

    /// Replaces the skills `skills.status` reports and `skills.install` installs.
    public func setSkills(_ skills: SkillsFixtures) async {
        await core.setSkills(skills)
    }

    /// Switches talk mode as `talk.mode` from another device would: `talk.mode {enabled, phase,
    /// ts}` goes to every operator with `operator.write`. Returns the payload.
    @discardableResult
    public func switchTalkMode(enabled: Bool, phase: String? = nil) async -> JSONValue {
        await core.switchTalkMode(enabled: enabled, phase: phase)
    }
}
