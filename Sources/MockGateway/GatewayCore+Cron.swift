import GatewayProtocol

/// The Gateway actor's glue for the cron methods: the rules are pure (``CronSchedule`` over
/// ``CronFixtures``); this hands them the current fixtures and the default agent.
extension GatewayCore {
    /// `cron.list`: a page of the cron jobs.
    func cronList(_ call: MethodCall) {
        answer(call, CronSchedule.list(call.params, cron: appSurfaces.cron, defaultAgentId: appSurfaces.agents.defaultId))
    }

    /// `cron.get`: one cron job.
    func cronGet(_ call: MethodCall) {
        answer(call, CronSchedule.get(call.params, cron: appSurfaces.cron))
    }

    /// `cron.runs`: a page of the run history.
    func cronRuns(_ call: MethodCall) {
        answer(call, CronSchedule.runs(call.params, cron: appSurfaces.cron))
    }

    /// Replaces the cron jobs and run history.
    func setCron(_ cron: CronFixtures) {
        appSurfaces.cron = cron
    }
}
