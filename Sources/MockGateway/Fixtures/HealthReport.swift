import GatewayProtocol

/// `health`: the Gateway's health summary, drawn from the fake's own state (its agents and chat
/// sessions, both scriptable), with no channels and heartbeats off.
///
/// Upstream (read for facts, nothing copied): the handler `src/gateway/server-methods/health.ts@0084ff27c04a38f5217837701c5f7a211abdd6eb`
/// (params are not validated; only `probe` is read) answers the `HealthSummary` of
/// `src/commands/health.types.ts@0d4128c19f49c37f39e9c74fc81d7a5337e1d3cd`: `{ok: true, ts,
/// durationMs, channels, channelOrder, channelLabels, heartbeatSeconds, defaultAgentId, agents:
/// [{agentId, name?, isDefault, heartbeat, sessions}], sessions: {path, count, recent: [{key,
/// updatedAt, age}]}}` plus optional sections; a disabled heartbeat is `{enabled: false, every:
/// "disabled", everyMs: null, prompt, target: "none", ackMaxChars: 300}`
/// (`resolveHeartbeatSummaryForAgent`, `src/infra/heartbeat-summary.ts@07a486b17d680246837dd1f036b716aa90bbc0a6`).
enum HealthReport {
    /// The session store `path` the summary names: the fake keeps its sessions in memory.
    static let sessionStorePath = "(in memory)"
    /// The heartbeat prompt the summary reports (the fake sends no heartbeat).
    static let heartbeatPrompt = "Mock Gateway: heartbeats are off."
    /// Upstream's `DEFAULT_HEARTBEAT_ACK_MAX_CHARS`.
    static let heartbeatAckMaxChars = 300

    /// One session of the summary: its key and when it last changed (`nil`: never).
    struct SessionStamp: Sendable, Hashable {
        var key: String
        var updatedAtMs: Int64?
    }

    /// The summary at `nowMs`. Every session belongs to the default agent (the fake's session
    /// keys name no agent); `recent` lists them newest first, then by key.
    static func summary(agents: AgentRoster, sessions: [SessionStamp], nowMs: Int64) -> JSONValue {
        let ordered = sessions.sorted { ($0.updatedAtMs ?? Int64.min, $1.key) > ($1.updatedAtMs ?? Int64.min, $0.key) }
        let recent: [JSONValue] = ordered.map { stamp in
            [
                "key": .string(stamp.key),
                "updatedAt": stamp.updatedAtMs.map(JSONValue.int) ?? .null,
                "age": stamp.updatedAtMs.map { JSONValue.int(max(0, nowMs - $0)) } ?? .null,
            ]
        }
        let all: JSONValue = ["path": .string(sessionStorePath), "count": .int(Int64(sessions.count)), "recent": .array(recent)]
        let none: JSONValue = ["path": .string(sessionStorePath), "count": 0, "recent": []]
        let heartbeat: JSONValue = [
            "enabled": false, "every": "disabled", "everyMs": .null, "prompt": .string(heartbeatPrompt),
            "target": "none", "ackMaxChars": .int(Int64(heartbeatAckMaxChars)),
        ]
        let agentSummaries: [JSONValue] = agents.agents.map { agent in
            let isDefault = agent.id == agents.defaultId
            var summary: [String: JSONValue] = [
                "agentId": .string(agent.id), "isDefault": .bool(isDefault), "heartbeat": heartbeat,
                "sessions": isDefault ? all : none,
            ]
            if let name = agent.name, !name.isEmpty { summary["name"] = .string(name) }
            return .object(summary)
        }
        return [
            "ok": true, "ts": .int(nowMs), "durationMs": 0,
            "channels": [:], "channelOrder": [], "channelLabels": [:],
            "heartbeatSeconds": 0, "defaultAgentId": .string(agents.defaultId),
            "agents": .array(agentSummaries), "sessions": all,
        ]
    }
}

extension ChatStore {
    /// Every session with rows or state, with the time of its newest row (`nil`: none).
    var healthSessionStamps: [HealthReport.SessionStamp] {
        sessionStates.keys.sorted().map { key in
            HealthReport.SessionStamp(key: key, updatedAtMs: messages(in: key).last?.timestampMs)
        }
    }
}
