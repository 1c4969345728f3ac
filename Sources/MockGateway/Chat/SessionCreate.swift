import Foundation
import GatewayProtocol

// `sessions.create` (read for facts, nothing copied):
// - params: the closed `SessionsCreateParamsSchema` of
//   packages/gateway-protocol/src/schema/sessions-create.ts@0b5a3c947da57d0272eb2462a427fc2b0ebdf6be,
//   plus `displayName`, `fastMode` and `mentions`, which the newest handler reads
//   (src/gateway/server-methods/sessions-create.ts@0214f96109264efdf07467fdd0953476fcceef0e) and a
//   later stored copy of the schema declares (with `repository`);
// - the initial turn: `task`, else `message`, when it is not blank (`resolveSessionCreateInitialTurn`,
//   src/gateway/server-methods/session-create-initial-turn.ts), sent as a `chat.send` with a fresh
//   idempotency key whose ack is spread into the answer;
// - the refusals the fake can meet: `sessions.create cwd must be absolute` (the handler above),
//   `fork requires parentSessionKey`, `unknown parent session: <key>` and `sessions.create key must
//   differ from parentSessionKey` (`createGatewaySession`, src/gateway/session-create-service.ts
//   @016cc6c430956ff80d7e0e97f1d5d2c37cf4e8ef);
// - a session without `key` is `agent:<agentId>:dashboard:<uuid>` (`buildDashboardSessionKey`, same file).

/// A `sessions.create` request that passed the schema and the checks that need only the params.
struct SessionCreateRequest: Sendable, Hashable {
    /// The requested key, trimmed (`nil`: a new dashboard key).
    var key: String?
    /// The parent session, trimmed.
    var parentSessionKey: String?
    /// Whether the new session starts with the parent's transcript.
    var fork: Bool
    /// The first user message (`task`, else `message`, when not blank).
    var initialMessage: String?
    /// The session settings the fake keeps (`label`, `category`, `model`, `thinkingLevel`,
    /// `contextWindow`), written as `sessions.patch` writes them.
    var settings: [String: JSONValue]

    /// The settings `sessions.create` writes into the session row.
    static let keptSettings: Set<String> = ["label", "category", "model", "thinkingLevel", "contextWindow"]

    /// `sessions.create`'s closed schema.
    static let schema: ClosedParams = {
        let label = ParamRule.boundedString(max: ChatStore.groupNameMaxLength)
        return ClosedParams(method: GatewayMethod.sessionsCreate.rawValue, members: [
            "key": .nonEmptyString, "idempotencyKey": .nonEmptyString, "agentId": .nonEmptyString,
            "label": label, "displayName": .boundedString(max: 500), "category": label,
            "inheritParentGroup": .bool, "model": .nonEmptyString, "contextWindow": .nonEmptyString,
            "thinkingLevel": .nonEmptyString, "fastMode": .any, "permissionMode": .any, "toolOverrides": .any,
            "incognito": .bool, "visibility": .any, "catalogId": .nonEmptyString, "parentSessionKey": .nonEmptyString,
            "spawnDepth": .integer(min: 1, max: Int64.max), "fork": .bool, "forkFrom": .oneOf(["last-completed"]),
            "emitCommandHooks": .bool, "succeedsParent": .bool, "task": .string, "message": .string,
            "mentions": .any, "attachments": .any, "projectId": .nonEmptyString,
            "projectGitUrl": .boundedString(max: 2048), "worktree": .bool, "worktreeBaseRef": .nonEmptyString,
            "worktreeName": .nonEmptyString, "execNode": .nonEmptyString, "cwd": .nonEmptyString,
        ], required: [])
    }()

    /// Validates the params; the error is the answer.
    static func parse(_ params: JSONValue?) -> Result<SessionCreateRequest, GatewayError> {
        let members: [String: JSONValue]
        switch schema.validate(params) {
        case .failure(let error): return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: error.message)))
        case .success(let valid): members = valid
        }
        if let cwd = members["cwd"]?.stringValue, !isAbsolute(cwd, onNode: members["execNode"] != nil) {
            return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "sessions.create cwd must be absolute")))
        }
        func trimmed(_ name: String) -> String? {
            guard let text = members[name]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
            return text
        }
        func nonBlank(_ name: String) -> String? {
            guard let text = members[name]?.stringValue, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
            return text
        }
        return .success(SessionCreateRequest(
            key: trimmed("key"), parentSessionKey: trimmed("parentSessionKey"), fork: members["fork"] == .bool(true),
            initialMessage: nonBlank("task") ?? nonBlank("message"),
            settings: members.filter { keptSettings.contains($0.key) }))
    }

    /// Node's `path.isAbsolute` on the Gateway host (POSIX), or for a path on an exec node also
    /// `path.win32.isAbsolute` (a drive letter and a slash, or a leading slash or backslash).
    static func isAbsolute(_ path: String, onNode: Bool) -> Bool {
        if path.hasPrefix("/") { return true }
        guard onNode else { return false }
        if path.hasPrefix("\\") { return true }
        let characters = Array(path)
        return characters.count >= 3 && characters[0].isLetter && characters[1] == ":" && (characters[2] == "\\" || characters[2] == "/")
    }

    /// `resolved {modelProvider, model}`: the requested `provider/model`, else `fallback` (the
    /// first model of `models.list`; upstream: the agent's configured default, `resolveSessionModelRef`).
    static func resolvedModel(_ requested: String?, default fallback: ModelFixture?) -> JSONValue? {
        if let requested, let slash = requested.firstIndex(of: "/"), slash != requested.startIndex,
           requested.index(after: slash) != requested.endIndex {
            return ["modelProvider": .string(String(requested[..<slash])),
                    "model": .string(String(requested[requested.index(after: slash)...]))]
        }
        guard let fallback else { return nil }
        return ["modelProvider": .string(fallback.provider), "model": .string(fallback.id)]
    }

    /// The refusals that need the session index, in upstream's order: a fork without a parent,
    /// an unknown parent, the new key equal to the parent's.
    func refusal(hasSession: (String) -> Bool) -> ErrorShape? {
        func invalid(_ message: String) -> ErrorShape { ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message) }
        if fork, parentSessionKey == nil { return invalid("fork requires parentSessionKey") }
        if let parent = parentSessionKey {
            if !hasSession(parent) { return invalid("unknown parent session: \(parent)") }
            if key == parent { return invalid("sessions.create key must differ from parentSessionKey") }
        }
        return nil
    }
}
