import Foundation
import GatewayProtocol

/// The scope a `sessions.patch` or `sessions.delete` needs, decided from its params (upstream's
/// `dynamic` method scope). `sessions.patch`: chat-organisation fields and the addressing
/// envelope need `operator.write`, every other field `operator.admin`, and so do
/// `permissionMode: "full"` and `sandboxMode`; malformed params need only `operator.write`, so
/// that the schema's own error answers them. `sessions.delete`: `operator.admin`, except an
/// archive-then-delete (`archivedOnly: true`) naming only `key`, `agentId`, `deleteTranscript`,
/// `expectedSessionId` and `archivedOnly`, which `operator.write` may do; malformed params need
/// `operator.admin` (upstream `resolveSessionsDeleteRequiredScope`).
///
/// Upstream: `src/shared/session-method-scopes-base.ts@138e2233dcd634ddaf6329babe39a08ae9c98519`
/// (`resolveSessionsPatchRequiredScope`); the method table marks `sessions.patch` as `dynamic`
/// (`src/gateway/methods/core-descriptors.ts@006148272b3c58340b73645b63733f34db3adbbd`).
enum SessionMutationScope {
    /// The fields `operator.write` may change.
    static let writeScopeMutations: Set<String> = [
        "label", "autoLabel", "icon", "color", "category", "boardFace", "boardPresentation", "pinned", "archived",
        "snoozedUntil", "unread", "model", "agentRuntime", "thinkingLevel", "fastMode", "permissionMode",
    ]
    /// Addressing and optimistic-concurrency members, which never raise the scope.
    static let envelopeFields: Set<String> = [
        "key", "agentId", "expectedSessionId", "expectedLifecycleRevision", "expectedPermissionMode", "expectedMarkedUnreadAt",
    ]

    /// The members an `operator.write` archive-then-delete may carry.
    static let deleteWriteScopeFields: Set<String> = ["key", "agentId", "deleteTranscript", "expectedSessionId", "archivedOnly"]

    /// The scope `params` of a `sessions.delete` need.
    static func deleteRequires(_ params: JSONValue?) -> OperatorScope {
        guard let members = params?.objectValue, members["archivedOnly"] == .bool(true) else { return .admin }
        return members.keys.allSatisfy(deleteWriteScopeFields.contains) ? .write : .admin
    }

    /// The scope `params` of a `sessions.create` need: `operator.admin` for an incognito session
    /// (`incognito: true`, or an incognito `key` or `parentSessionKey`), an `execNode`, a
    /// `toolOverrides` member or `permissionMode: "full"`, `operator.write` otherwise
    /// (`resolveSessionsCreateRequiredScope`, src/shared/session-method-scopes-base.ts
    /// @138e2233dcd634ddaf6329babe39a08ae9c98519).
    static func createRequires(_ params: JSONValue?) -> OperatorScope {
        guard let members = params?.objectValue else { return .write }
        let incognitoKey = ["key", "parentSessionKey"].contains { members[$0]?.stringValue.map(isIncognitoKey) == true }
        if members["incognito"] == .bool(true) || incognitoKey || members["execNode"] != nil
            || members["toolOverrides"] != nil || members["permissionMode"]?.stringValue == "full" {
            return .admin
        }
        return .write
    }

    /// Whether `key` is an incognito session key: `agent:<id>:dashboard|subagent|internal-session-effects:incognito-<x>`,
    /// trimmed and lowercased (`isIncognitoSessionKey`, src/shared/incognito-session-key.ts).
    static func isIncognitoKey(_ key: String) -> Bool {
        let parts = key.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "agent", !parts[1].isEmpty else { return false }
        return ["dashboard", "subagent", "internal-session-effects"].contains(String(parts[2]))
            && parts[3].hasPrefix("incognito-") && parts[3].count > "incognito-".count
    }

    /// The scope `params` of a `sessions.patch` need.
    static func patchRequires(_ params: JSONValue?) -> OperatorScope {
        guard let members = params?.objectValue else { return .write }
        if members["permissionMode"]?.stringValue == "full" || members["sandboxMode"] != nil { return .admin }
        let onlyWriteFields = members.keys.allSatisfy { envelopeFields.contains($0) || writeScopeMutations.contains($0) }
        return onlyWriteFields ? .write : .admin
    }
}
