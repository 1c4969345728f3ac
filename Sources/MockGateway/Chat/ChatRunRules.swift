import GatewayProtocol

// The rules of a run's end that `chat.abort` and `agent.wait` answer from (the machine that
// applies them: State/ChatState+Machine.swift).

// `chat.abort` (read for facts, nothing copied): the handler in
// src/gateway/server-methods/chat.ts@00d420411002f771adc6ec05e834a383e0600f4b, the abort
// helpers and the `aborted` event in src/gateway/chat-abort.ts@00da33b49fefaf77ac30ede9b83100ed461658e4,
// `ChatAbortParamsSchema` in packages/gateway-protocol/src/schema/logs-chat.ts@058f7b075d19da2c32d72fcb5de9f05058c09527
// (closed `{sessionKey, agentId?, runId?}`, each a non-empty string).

extension ChatStore {
    /// `chat.abort` `{sessionKey, agentId?, runId?}` (closed).
    static let abortSchema = ClosedParams(method: GatewayMethod.chatAbort.rawValue, members: [
        "sessionKey": .nonEmptyString, "agentId": .nonEmptyString, "runId": .nonEmptyString,
    ], required: ["sessionKey"])

    /// Why an aborted run stopped when `chat.abort` stopped it (upstream `stopReason: "rpc"`).
    static let abortStopReason = "rpc"
}

// `agent.wait` (read for facts, nothing copied): the handler in
// src/gateway/server-methods/agent.ts@001014f757b6c3fbce5fb9932a36cddbd9afc3bb (default wait
// 30 s; the answers `{runId, status, startedAt?, endedAt?, error?, stopReason?, …}` and, when
// nothing ended in time, `{runId, status: "timeout", timeoutPhase}`), the terminal snapshot of a
// `chat.send` run in src/gateway/server-methods/agent-wait-dedupe.ts@05650168b6ce988b7fb3110c16ff07ac7a1f25e3
// (a finished run is stored as `{status: "ok"}` and read back with `endedAt` = when it was
// stored: src/gateway/server-methods/chat.ts@00d420411002f771adc6ec05e834a383e0600f4b), and
// `AgentWaitParamsSchema` in packages/gateway-protocol/src/schema/agent.ts@8316db290391d0f772b447b72cd687c321316b0b
// (closed `{runId: NonEmptyString, timeoutMs?: integer >= 0}`).

extension ChatStore {
    /// `agent.wait` `{runId, timeoutMs?}` (closed).
    static let waitSchema = ClosedParams(method: GatewayMethod.agentWait.rawValue, members: [
        "runId": .nonEmptyString, "timeoutMs": .integer(min: 0, max: Int64.max),
    ], required: ["runId"])

    /// How long `agent.wait` waits without `timeoutMs` (upstream: 30 s).
    static let defaultWaitTimeoutMs: Int64 = 30_000

    /// The answer for a run that ended: `{runId, status: "ok", endedAt}`; a run `chat.abort`
    /// stopped answers `{runId, status: "timeout", endedAt, stopReason: "rpc"}` (⚠️ not confirmed,
    /// docs/fidelity.md). `nil` while the run is going or unknown.
    func waitResult(runId: String) -> JSONValue? {
        guard case .ended(let end) = runState(runId) else { return nil }
        var result: [String: JSONValue] = ["runId": .string(runId), "status": "ok", "endedAt": .int(end.atMs)]
        if end.aborted {
            result["status"] = "timeout"
            result["stopReason"] = .string(Self.abortStopReason)
        }
        return .object(result)
    }

    /// The answer when nothing ended in time: a run that is going (`timeoutPhase:
    /// "gateway_draining"`), or one no send started (`timeoutPhase: "queue"`, `providerStarted: false`).
    func waitTimeout(runId: String) -> JSONValue {
        if runState(runId) == .going {
            return ["runId": .string(runId), "status": "timeout", "timeoutPhase": "gateway_draining"]
        }
        return ["runId": .string(runId), "status": "timeout", "timeoutPhase": "queue", "providerStarted": false]
    }
}
