import Foundation
import GatewayProtocol

// `agent.wait` (read for facts, nothing copied): the handler in
// src/gateway/server-methods/agent.ts@001014f757b6c3fbce5fb9932a36cddbd9afc3bb (default wait
// 30 s; the answers `{runId, status, startedAt?, endedAt?, error?, stopReason?, …}` and, when
// nothing ended in time, `{runId, status: "timeout", timeoutPhase}`), the terminal snapshot of a
// `chat.send` run in src/gateway/server-methods/agent-wait-dedupe.ts@05650168b6ce988b7fb3110c16ff07ac7a1f25e3
// (a finished run is stored as `{status: "ok"}` and read back with `endedAt` = when it was
// stored: src/gateway/server-methods/chat.ts@00d420411002f771adc6ec05e834a383e0600f4b), and
// `AgentWaitParamsSchema` in packages/gateway-protocol/src/schema/agent.ts@8316db290391d0f772b447b72cd687c321316b0b
// (closed `{runId: NonEmptyString, timeoutMs?: integer >= 0}`).

/// One parked `agent.wait`.
struct ChatRunWaiter: Sendable {
    /// The request, answered when the run ends or at ``deadlineMs``.
    var call: MethodCall
    /// The run waited for (trimmed).
    var runId: String
    /// When the wait gives up (Gateway clock).
    var deadlineMs: Int64
}

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

extension GatewayCore {
    /// `agent.wait`: answers at once when the run has ended (or `timeoutMs` is 0), otherwise
    /// parks the request until the run ends or the wait times out on the Gateway clock.
    func agentWait(_ call: MethodCall) {
        answerParams(call, ChatStore.waitSchema.validate(call.params)) { members in
            let runId = (members["runId"]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let timeoutMs = members["timeoutMs"]?.int64Value ?? ChatStore.defaultWaitTimeoutMs
            if let result = chat.store.waitResult(runId: runId) { return reply(call, result) }
            if timeoutMs <= 0 { return reply(call, chat.store.waitTimeout(runId: runId)) }
            chat.runWaiters.append(ChatRunWaiter(call: call, runId: runId, deadlineMs: nowMs + timeoutMs))
        }
    }

    /// Answers the parked waits whose run ended, then those whose deadline passed, in the order
    /// they were parked.
    func settleRunWaiters() {
        guard !chat.runWaiters.isEmpty else { return }
        let waiters = chat.runWaiters
        chat.runWaiters = []
        for waiter in waiters {
            if let result = chat.store.waitResult(runId: waiter.runId) {
                reply(waiter.call, result)
            } else if waiter.deadlineMs <= nowMs {
                reply(waiter.call, chat.store.waitTimeout(runId: waiter.runId))
            } else {
                chat.runWaiters.append(waiter)
            }
        }
    }
}
