import GatewayProtocol

/// The Gateway actor's glue for the fixture-backed app methods (`commands.list`, `talk.mode`):
/// the rules are pure (``CommandCatalogue``, ``TalkModeSwitch``); this applies their effects.
extension GatewayCore {
    /// `commands.list` over the current commands and agents.
    func commandsList(_ call: MethodCall) {
        answer(call, CommandCatalogue.list(call.params, commands: appSurfaces.commands, agents: appSurfaces.agents))
    }

    /// `talk.mode`: answers the payload and, on success, broadcasts it as `talk.mode` (the scope
    /// gate passes it to operators with `operator.write`).
    func talkMode(_ call: MethodCall) {
        let result = TalkModeSwitch.handle(call.params, nowMs: nowMs)
        answer(call, result)
        if case .success(let payload) = result {
            broadcast(event: GatewayEventName.talkMode.rawValue, payload: payload)
        }
    }

    /// A talk mode switch from another device (the scripting API, the console): the same broadcast.
    func switchTalkMode(enabled: Bool, phase: String?) -> JSONValue {
        let payload = TalkModeSwitch.payload(enabled: enabled, phase: phase, nowMs: nowMs)
        broadcast(event: GatewayEventName.talkMode.rawValue, payload: payload)
        return payload
    }

    /// Replaces the models.
    func setModels(_ models: [ModelFixture]) {
        appSurfaces.models = models
    }

    /// Replaces the task ledger.
    func setTasks(_ tasks: [TaskFixture]) {
        appSurfaces.tasks = tasks
    }

    /// Replaces the Gateway configuration.
    func setGatewayConfig(_ config: [String: JSONValue]) {
        appSurfaces.config = config
    }

    /// Replaces the slash commands.
    func setCommands(_ commands: [CommandFixture]) {
        appSurfaces.commands = commands
    }
}
