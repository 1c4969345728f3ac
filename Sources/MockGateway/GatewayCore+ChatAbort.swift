import GatewayProtocol

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

extension GatewayCore {
    /// `chat.abort`: without `runId`, every active run of the session stops; with it, that run
    /// (no such run: nothing stops; a run of another session: `INVALID_REQUEST "runId does not
    /// match sessionKey"`). Answers `{ok: true, aborted, runIds}`; each stopped run's reply is
    /// never written and every operator with `operator.read` gets `chat` `{runId, sessionKey,
    /// seq, state: "aborted", stopReason: "rpc"}`.
    func chatAbort(_ call: MethodCall) {
        answerParams(call, ChatStore.abortSchema.validate(call.params)) { members in
            let sessionKey = members["sessionKey"]?.stringValue ?? ""
            let stopped: [String]
            if let runId = members["runId"]?.stringValue {
                switch chat.store.activeRunSession(runId) {
                case nil:
                    stopped = []
                case sessionKey?:
                    stopped = [runId]
                case _?:
                    return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "runId does not match sessionKey"))
                }
            } else {
                stopped = chat.store.activeRunIds(in: sessionKey)
            }
            for runId in stopped { chat.store.abortRun(runId, nowMs: nowMs) }
            reply(call, ["ok": true, "aborted": .bool(!stopped.isEmpty), "runIds": .array(stopped.map(JSONValue.string))])
            for runId in stopped { announceAbortedRun(runId, sessionKey: sessionKey) }
            settleRunWaiters()
        }
    }

    /// The `chat` event of a stopped run. Its `seq` is the run's event sequence: 1, as the fake's
    /// runs send no event before their end (upstream: the run's last event sequence + 1).
    func announceAbortedRun(_ runId: String, sessionKey: String) {
        broadcast(event: GatewayEventName.chat.rawValue, payload: [
            "runId": .string(runId), "sessionKey": .string(sessionKey), "seq": 1,
            "state": "aborted", "stopReason": .string(ChatStore.abortStopReason),
        ])
    }
}
