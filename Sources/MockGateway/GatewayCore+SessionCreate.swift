import Foundation
import GatewayProtocol

// `sessions.create`: glue around `SessionCreateRequest` (Chat/SessionCreate.swift, where the
// upstream sources are named) and `ChatStore.create`. Upstream's answer
// (src/gateway/server-methods/sessions-create.ts@0214f96109264efdf07467fdd0953476fcceef0e):
// `{ok: true, key, sessionId, entry, runStarted, …the initial chat.send's ack, runError?,
// resolved: {modelProvider, model}, worktree?}`, then `sessions.changed {sessionKey, agentId,
// reason: "create"}` and, when the first message started a run, `reason: "send"`.
extension GatewayCore {
    /// `sessions.create` (closed params; scope `dynamic`: `SessionMutationScope.createRequires`).
    func sessionsCreate(_ call: MethodCall) {
        if SessionMutationScope.createRequires(call.params) == .admin, !Set(wire: call.session.scopes).contains(.admin) {
            return fail(call, OperatorMethodPolicy.missingScopeError(.admin, requiredScopes: [.admin], style: profile.missingScopeStyle))
        }
        switch SessionCreateRequest.parse(call.params) {
        case .failure(let error): fail(call, error.shape)
        case .success(let request):
            switch createSession(request) {
            case .failure(let error): fail(call, error.shape)
            case .success(let outcome):
                reply(call, outcome.answer)
                emitSessionsChanged(outcome.key, reason: .create)
                if outcome.runStarted { emitSessionsChanged(outcome.key, reason: .send) }
                releaseDueChatMessages()
            }
        }
    }

    /// What a creation produced: the answer and what the events need.
    struct SessionCreateOutcome: Sendable {
        /// The session key.
        var key: String
        /// Whether the first message started a run.
        var runStarted: Bool
        /// The `sessions.create` answer.
        var answer: JSONValue
    }

    /// Creates (or adopts) the session and sends its first message through the scripted agent
    /// as `chat.send` does (the rows are published; the echo comes when the caller releases due rows).
    func createSession(_ request: SessionCreateRequest) -> Result<SessionCreateOutcome, GatewayError> {
        if let refusal = request.refusal(hasSession: chat.store.hasSession) { return .failure(GatewayError(refusal)) }
        let agentId = appSurfaces.agents.defaultId
        let key = request.key ?? "agent:\(agentId):dashboard:\(random.uuidString().lowercased())"
        let forkFrom = request.fork ? request.parentSessionKey : nil
        let isNew = chat.store.create(key: key, settings: request.settings, forkFrom: forkFrom)
        if let category = request.settings["category"]?.stringValue { _ = chat.store.registerGroup(category) }
        noteFault("session \(key) " + (isNew ? "created" : "adopted") + (forkFrom.map { " (forked from \($0))" } ?? ""))
        var ack: [String: JSONValue] = [:]
        if let text = request.initialMessage {
            switch chat.store.send(sessionKey: key, text: text, idempotencyKey: random.uuidString().lowercased(), mode: nil, nowMs: nowMs) {
            case .accepted(let messages, let first):
                for message in messages { publishChat(message) }
                ack = first.objectValue ?? [:]
            case .repeated(let first):
                ack = first.objectValue ?? [:]
            }
        }
        let runStarted = ack["status"] == "started"
        var entry = chat.store.sessionRow(key).objectValue ?? [:]
        if let parent = request.parentSessionKey { entry["parentSessionKey"] = .string(parent) }
        if forkFrom != nil, isNew { entry["forkedFromParent"] = true }
        var answer: [String: JSONValue] = [
            "ok": true, "key": .string(key), "sessionId": .string(chat.store.sessionId(key)),
            "entry": .object(entry), "runStarted": .bool(runStarted),
        ]
        answer.merge(ack) { current, _ in current }
        if let resolved = resolvedModel(request.settings["model"]?.stringValue) { answer["resolved"] = resolved }
        return .success(SessionCreateOutcome(key: key, runStarted: runStarted, answer: .object(answer)))
    }

    /// `resolved {modelProvider, model}`: the requested `provider/model`, else the first model of
    /// `models.list` (upstream: the agent's configured default, `resolveSessionModelRef`).
    private func resolvedModel(_ requested: String?) -> JSONValue? {
        if let requested, let slash = requested.firstIndex(of: "/"), slash != requested.startIndex,
           requested.index(after: slash) != requested.endIndex {
            return ["modelProvider": .string(String(requested[..<slash])),
                    "model": .string(String(requested[requested.index(after: slash)...]))]
        }
        guard let model = appSurfaces.models.first else { return nil }
        return ["modelProvider": .string(model.provider), "model": .string(model.id)]
    }

    /// The scripting API's creation (`Gateway.createChatSession`): as a `sessions.create` from another device.
    func scriptCreate(_ request: SessionCreateRequest) -> Result<SessionCreateOutcome, GatewayError> {
        let outcome = createSession(request)
        if case .success(let created) = outcome {
            emitSessionsChanged(created.key, reason: .create)
            if created.runStarted { emitSessionsChanged(created.key, reason: .send) }
            releaseDueChatMessages()
        }
        return outcome
    }
}
