import Foundation
import GatewayProtocol

// `sessions.rewind` and `sessions.branches.switch`: glue around the transcript tree of ChatStore
// (rules in Chat/ChatStore.swift, Chat/TranscriptTree.swift, refusals in Chat/SessionBranches.swift).
// Upstream: `mutateSessionAtMessage(…, "rewind" | "switch")` in
// src/gateway/server-methods/sessions-rewind.ts@0214f96109264efdf07467fdd0953476fcceef0e: the key
// and entry id trimmed; a rewind answers `{editorText?}`, a switch `{}`; then `sessions.changed
// {sessionKey, reason: "rewind" | "branch-switch"}`.
extension GatewayCore {
    /// `sessions.rewind {sessionKey, agentId?, entryId}` → `{editorText?}`.
    func sessionsRewind(_ call: MethodCall) {
        answerParams(call, ChatStore.rewindSchema.validate(call.params)) { members in
            let key = Self.trimmedMember(members, "sessionKey")
            switch rewindSession(key, entryId: Self.trimmedMember(members, "entryId")) {
            case .failure(let refusal): fail(call, refusal.shape)
            case .success(let editorText):
                reply(call, .object(editorText.map { ["editorText": .string($0)] } ?? [:]))
                emitSessionsChanged(key, reason: .rewind)
            }
        }
    }

    /// `sessions.branches.switch {sessionKey, agentId?, leafEntryId}` → `{}`.
    func sessionsBranchesSwitch(_ call: MethodCall) {
        answerParams(call, ChatStore.branchesSwitchSchema.validate(call.params)) { members in
            let key = Self.trimmedMember(members, "sessionKey")
            switch switchSessionBranch(key, leafEntryId: Self.trimmedMember(members, "leafEntryId")) {
            case .failure(let refusal): fail(call, refusal.shape)
            case .success:
                reply(call, [:])
                emitSessionsChanged(key, reason: .branchSwitch)
            }
        }
    }

    /// The rewind of the wire and of the scripting API.
    func rewindSession(_ key: String, entryId: String) -> Result<String?, MessageCutRefusal> {
        let outcome = chat.store.rewind(sessionKey: key, entryId: entryId)
        if case .success = outcome { noteFault("session \(key) rewound to before \(entryId)") }
        return outcome
    }

    /// The branch switch of the wire and of the scripting API.
    func switchSessionBranch(_ key: String, leafEntryId: String) -> Result<Void, MessageCutRefusal> {
        let outcome = chat.store.switchBranch(sessionKey: key, leafEntryId: leafEntryId)
        if case .success = outcome { noteFault("session \(key) switched to the branch ending at \(leafEntryId)") }
        return outcome
    }

    /// The scripting API's rewind (`Gateway.rewindChatSession`): as a `sessions.rewind` from another device.
    func scriptRewind(sessionKey: String, entryId: String) -> Result<String?, MessageCutRefusal> {
        let outcome = rewindSession(sessionKey, entryId: entryId)
        if case .success = outcome { emitSessionsChanged(sessionKey, reason: .rewind) }
        return outcome
    }

    /// The scripting API's branch switch (`Gateway.switchChatBranch`): as a `sessions.branches.switch` from another device.
    func scriptSwitchBranch(sessionKey: String, leafEntryId: String) -> Result<Void, MessageCutRefusal> {
        let outcome = switchSessionBranch(sessionKey, leafEntryId: leafEntryId)
        if case .success = outcome { emitSessionsChanged(sessionKey, reason: .branchSwitch) }
        return outcome
    }

    /// A string member, trimmed (upstream trims the key and the entry id before using them).
    static func trimmedMember(_ members: [String: JSONValue], _ name: String) -> String {
        (members[name]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
