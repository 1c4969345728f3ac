import GatewayProtocol

// MARK: - Agents, workspaces, voice wake, unserved methods (scripting)

extension Gateway {
    /// The agents the Gateway knows (`agents.list`, `agents.workspace.*`).
    public func agents() async -> AgentRoster {
        await core.appSurfaces.agents
    }

    /// Replaces the agents (their ids, names and workspace directories).
    public func setAgents(_ roster: AgentRoster) async {
        await core.setAgents(roster)
    }

    /// Sets the workspace directory agent `agentId` is browsed in (`agents.workspace.list/get`),
    /// adding the agent when it is not known; `nil` leaves the agent without a workspace.
    public func setAgentWorkspace(_ directory: String?, agentId: String = AgentRoster.mainAgentId) async {
        var roster = await core.appSurfaces.agents
        roster.setWorkspace(directory, forAgent: agentId)
        await core.setAgents(roster)
    }

    /// The voice wake triggers `voicewake.get` answers.
    public func voiceWakeTriggers() async -> [String] {
        await core.appSurfaces.voiceWake.triggers
    }

    /// Replaces the voice wake triggers as `voicewake.set` from another device would: the list is
    /// normalised (trimmed, empty ones dropped, at most 32 of at most 64 UTF-16 units; the
    /// configured triggers when nothing is left) and `voicewake.changed` goes to every operator
    /// with `operator.read` and every node. Returns the stored list.
    @discardableResult
    public func setVoiceWakeTriggers(_ triggers: [String]) async -> [String] {
        await core.setVoiceWakeTriggers(triggers)
    }

    /// The methods clients called that this Gateway does not serve (answered `unknown method`),
    /// each once, in the order first called.
    public func unservedMethodCalls() -> [String] {
        events.all.compactMap { event in
            if case .methodUnserved(let method, _) = event { method } else { nil }
        }
    }
}

extension GatewayCore {
    /// Replaces the agent roster.
    func setAgents(_ roster: AgentRoster) {
        appSurfaces.agents = roster
    }
}
