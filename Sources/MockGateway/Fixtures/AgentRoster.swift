import GatewayProtocol

/// One agent the fake Gateway knows: its id, display name and workspace directory.
public struct AgentFixture: Sendable, Hashable, Codable {
    /// The agent id (`agentId` of the agent methods).
    public var id: String
    /// The display name `agents.list` reports, if any.
    public var name: String?
    /// The agent's workspace directory on this machine, browsed by `agents.workspace.list/get`;
    /// `nil`: the agent has no workspace (every path is not found).
    public var workspaceDirectory: String?

    /// Creates an agent.
    public init(id: String, name: String? = nil, workspaceDirectory: String? = nil) {
        self.id = id
        self.name = name
        self.workspaceDirectory = workspaceDirectory
    }
}

/// The agents the fake Gateway knows (upstream's configured agents, `listAgentIds`), a fixture a
/// test or the `harness serve` console changes.
public struct AgentRoster: Sendable, Hashable, Codable {
    /// The agents, in `agents.list` order.
    public var agents: [AgentFixture]
    /// The default agent's id (`agents.list` `defaultId`).
    public var defaultId: String

    /// Upstream's default agent id, `main` (`DEFAULT_AGENT_ID`).
    public static let mainAgentId = "main"
    /// The session main key `agents.list` reports (`mainKey`).
    public static let mainKey = "main"
    /// The session scope `agents.list` reports (`scope`: upstream's default `per-sender`).
    public static let scope = "per-sender"

    /// One agent, `main`, without a workspace.
    public static let standard = AgentRoster(agents: [AgentFixture(id: mainAgentId)], defaultId: mainAgentId)

    /// Creates a roster.
    public init(agents: [AgentFixture], defaultId: String) {
        self.agents = agents
        self.defaultId = defaultId
    }

    /// Reads `{defaultId?, agents: [{id, name?}]}` (the console's `fixture agents` argument): at
    /// least one agent, ids non-empty and distinct, `defaultId` one of them (by default the
    /// first). Workspace directories are not part of it (`--workspace`, the console's
    /// `workspace`); ``keepingWorkspaces(of:)`` carries them over.
    /// - Throws: ``GatewayFixtures/FixtureError`` naming the first value that does not fit.
    public init(json: JSONValue) throws(GatewayFixtures.FixtureError) {
        let reader = try FixtureReader(json, at: "", members: ["defaultId", "agents"], required: ["agents"])
        let items = try reader.array("agents")
        guard !items.isEmpty else {
            throw GatewayFixtures.FixtureError(pointer: "/agents", problem: "must NOT have fewer than 1 items")
        }
        var agents: [AgentFixture] = []
        for (index, item) in items.enumerated() {
            let entry = try FixtureReader(item, at: "/agents/\(index)", members: ["id", "name"], required: ["id"])
            let id = try entry.string("id", nonEmpty: true) ?? ""
            guard !agents.contains(where: { $0.id == id }) else {
                throw GatewayFixtures.FixtureError(pointer: "/agents/\(index)/id", problem: "duplicate agent id '\(id)'")
            }
            agents.append(AgentFixture(id: id, name: try entry.string("name")))
        }
        let defaultId = try reader.string("defaultId", nonEmpty: true) ?? agents[0].id
        guard agents.contains(where: { $0.id == defaultId }) else {
            throw GatewayFixtures.FixtureError(pointer: "/defaultId", problem: "must be one of the agents' ids")
        }
        self.init(agents: agents, defaultId: defaultId)
    }

    /// `{defaultId, agents: [{id, name?}]}`, the form ``init(json:)`` reads.
    public var json: JSONValue {
        ["defaultId": .string(defaultId),
         "agents": .array(agents.map { agent in
             var object: [String: JSONValue] = ["id": .string(agent.id)]
             if let name = agent.name { object["name"] = .string(name) }
             return .object(object)
         })]
    }

    /// This roster with the workspace directories `old` gave agents of the same id.
    public func keepingWorkspaces(of old: AgentRoster) -> AgentRoster {
        var next = self
        for index in next.agents.indices where next.agents[index].workspaceDirectory == nil {
            next.agents[index].workspaceDirectory = old.agent(next.agents[index].id)?.workspaceDirectory
        }
        return next
    }

    /// The agent `id`, if known.
    public func agent(_ id: String) -> AgentFixture? { agents.first { $0.id == id } }

    /// Sets (or, with `nil`, removes) the workspace directory of agent `id`, adding the agent when
    /// it is not known yet.
    public mutating func setWorkspace(_ directory: String?, forAgent id: String) {
        if let index = agents.firstIndex(where: { $0.id == id }) {
            agents[index].workspaceDirectory = directory
        } else {
            agents.append(AgentFixture(id: id, workspaceDirectory: directory))
        }
    }

    /// The agent named by a request's `agentId`, or upstream's refusal of an unknown agent:
    /// `INVALID_REQUEST "agent \"<id>\" not found"` (`resolveConfiguredAgentIdOrRespondError`,
    /// `src/gateway/server-methods/agent-id-shared.ts`).
    func resolve(_ agentId: String) -> Result<AgentFixture, GatewayError> {
        guard let agent = agent(agentId) else {
            return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                    message: "agent \"\(agentId)\" not found")))
        }
        return .success(agent)
    }

    /// `agents.list`: params are a closed empty object; the result
    /// `{defaultId, mainKey, scope, agents: [{id, name?}]}`.
    func agentsList(_ params: JSONValue?) -> Result<JSONValue, GatewayError> {
        do throws(GatewayError) {
            _ = try MethodParams(params, method: .agentsList, members: [])
        } catch {
            return .failure(error)
        }
        let summaries: [JSONValue] = agents.map { agent in
            var summary: [String: JSONValue] = ["id": .string(agent.id)]
            if let name = agent.name, !name.isEmpty { summary["name"] = .string(name) }
            return .object(summary)
        }
        return .success(["defaultId": .string(defaultId), "mainKey": .string(Self.mainKey),
                         "scope": .string(Self.scope), "agents": .array(summaries)])
    }
}
