import GatewayProtocol

// Params schemas of the chat and session methods (read for facts, nothing copied):
// `ChatSendParamsSchema` in logs-chat.ts (newest, and @058f7b075d19da2c32d72fcb5de9f05058c09527
// for the older generation); `SessionsPatchParamsSchema`, `SessionsResetParamsSchema`,
// `SessionsCompactParamsSchema` in packages/gateway-protocol/src/schema/sessions.ts (newest).

extension ChatStore {
    /// `chat.send`'s closed schema for `generation`. `sessionKey`, `message` and
    /// `idempotencyKey` are checked by the handler (its own messages); this refuses unknown
    /// members and badly typed optional ones.
    static func sendSchema(_ generation: ChatGeneration) -> ClosedParams {
        var members: [String: ParamRule] = [
            "sessionKey": .any, "message": .any, "idempotencyKey": .any,
            "agentId": .nonEmptyString, "sessionId": .nonEmptyString, "thinking": .string, "fastMode": .any,
            "fastAutoOnSeconds": .integer(min: 1, max: Int64.max), "deliver": .bool,
            "originatingChannel": .string, "originatingTo": .string, "originatingAccountId": .string,
            "originatingThreadId": .string, "attachments": .any, "timeoutMs": .integer(min: 0, max: Int64.max),
            "systemInputProvenance": .any, "systemProvenanceReceipt": .string, "suppressCommandInterpretation": .bool,
        ]
        switch generation {
        case .older:
            members["clarification"] = .any
        case .newest:
            members["queueMode"] = .oneOf(ChatQueueMode.allCases.map(\.rawValue))
            members["mentions"] = .any
            members["intent"] = .any
            members["replyToId"] = .nonEmptyString
            members["toolBindings"] = .any
            members["expectedLeafEntryId"] = .any
            members["expectedSessionRoutingContract"] = .nonEmptyString
            members["expectedPermissionMode"] = .any
            members["expectedToolOverrides"] = .any
        }
        return ClosedParams(method: GatewayMethod.chatSend.rawValue, members: members, required: [])
    }

    /// The session settings `sessions.patch` writes (member → rule).
    static let patchableSettings: [String: ParamRule] = [
        "label": .boundedStringOrNull(max: 512), "icon": .stringOrNull, "color": .stringOrNull,
        "category": .boundedStringOrNull(max: 512), "boardFace": .oneOf(["chat", "dashboard"]),
        "statusNote": .boundedStringOrNull(max: 120), "attention": .any,
        "ttlMinutes": .integer(min: 1, max: 120), "archived": .bool, "pinned": .bool, "unread": .bool,
        "contextWindow": .nonEmptyStringOrNull, "thinkingLevel": .nonEmptyStringOrNull, "fastMode": .any,
        "toolOverrides": .any, "verboseLevel": .nonEmptyStringOrNull, "traceLevel": .nonEmptyStringOrNull,
        "reasoningLevel": .nonEmptyStringOrNull, "responseUsage": .oneOfOrNull(["off", "tokens", "full", "on"]),
        "elevatedLevel": .nonEmptyStringOrNull, "execHost": .nonEmptyStringOrNull, "execSecurity": .nonEmptyStringOrNull,
        "execAsk": .nonEmptyStringOrNull, "execNode": .nonEmptyStringOrNull, "permissionMode": .any,
        "model": .nonEmptyStringOrNull, "completionOwnerSessionKey": .nonEmptyStringOrNull,
        "inheritedToolPolicyVersion": .any, "inheritedToolAllow": .nonEmptyStringsOrNull,
        "inheritedToolDeny": .nonEmptyStringsOrNull, "sendPolicy": .oneOfOrNull(["allow", "deny"]),
        "groupActivation": .oneOfOrNull(["mention", "always"]),
    ]

    /// `sessions.patch` `{key, agentId?, expected…?, …settings}` (closed).
    static let patchSchema: ClosedParams = {
        var members = patchableSettings
        members["key"] = .nonEmptyString
        members["agentId"] = .nonEmptyString
        members["expectedSessionId"] = .nonEmptyString
        members["expectedLifecycleRevision"] = .nonEmptyString
        members["expectedPermissionMode"] = .any
        members["expectedToolOverrides"] = .any
        members["expectedMarkedUnreadAt"] = .any
        return ClosedParams(method: GatewayMethod.sessionsPatch.rawValue, members: members, required: ["key"])
    }()

    /// `sessions.reset` `{key, agentId?, reason?: "new" | "reset"}` (closed).
    static let resetSchema = ClosedParams(method: GatewayMethod.sessionsReset.rawValue, members: [
        "key": .nonEmptyString, "agentId": .nonEmptyString, "reason": .oneOf(["new", "reset"]),
    ], required: ["key"])

    /// `sessions.compact` `{key, agentId?, maxLines? >= 1}` (closed).
    static let compactSchema = ClosedParams(method: GatewayMethod.sessionsCompact.rawValue, members: [
        "key": .nonEmptyString, "agentId": .nonEmptyString, "maxLines": .integer(min: 1, max: Int64(Int32.max)),
    ], required: ["key"])

    /// `sessions.delete` `{key, agentId?, deleteTranscript?, expectedSessionId?,
    /// expectedLifecycleRevision?, expectedSessionUpdatedAt? >= 0, emitLifecycleHooks?,
    /// admissionHandoffId?, exemptChatRunId?, archivedOnly?}` (closed; `SessionsDeleteParamsSchema`,
    /// packages/gateway-protocol/src/schema/sessions-delete.ts@3bdd76ebc8d5caaa0eecf562fb6ee41ccd5048ba).
    static let deleteSchema = ClosedParams(method: GatewayMethod.sessionsDelete.rawValue, members: [
        "key": .nonEmptyString, "agentId": .nonEmptyString, "deleteTranscript": .bool,
        "expectedSessionId": .nonEmptyString, "expectedLifecycleRevision": .nonEmptyString,
        "expectedSessionUpdatedAt": .nonNegativeNumber, "emitLifecycleHooks": .bool,
        "admissionHandoffId": .nonEmptyString, "exemptChatRunId": .nonEmptyString, "archivedOnly": .bool,
    ], required: ["key"])

    /// `sessions.branches.list` `{sessionKey, agentId?}` (closed; `SessionsBranchesListParamsSchema`,
    /// packages/gateway-protocol/src/schema/sessions.ts@7b6ec5108dccbd92a1a3130921e7c06c1b134c11).
    static let branchesListSchema = ClosedParams(method: GatewayMethod.sessionsBranchesList.rawValue, members: [
        "sessionKey": .nonEmptyString, "agentId": .nonEmptyString,
    ], required: ["sessionKey"])

    /// `sessions.fork` `{sessionKey, agentId?, entryId}` (closed; `SessionsForkParamsSchema`, same file).
    static let forkSchema = ClosedParams(method: GatewayMethod.sessionsFork.rawValue, members: [
        "sessionKey": .nonEmptyString, "agentId": .nonEmptyString, "entryId": .nonEmptyString,
    ], required: ["sessionKey", "entryId"])

    /// The longest group name (`SessionLabelString`: `SESSION_LABEL_MAX_LENGTH`,
    /// src/sessions/session-label.ts@439eddd17877bc231d7beaa1323c888488c34aa3).
    static let groupNameMaxLength = 64

    /// `sessions.groups.list` `{}`, `put` `{names, sectionOrder?}`, `rename` `{name, to}`,
    /// `delete` `{name}` (closed; packages/gateway-protocol/src/schema/session-groups.ts
    /// @86aafa682c3ca893ed39d36050c0e96649c1965b; section ids are 1...512 characters).
    static let groupsListSchema = ClosedParams(method: GatewayMethod.sessionsGroupsList.rawValue, members: [:], required: [])
    static let groupsPutSchema = ClosedParams(method: GatewayMethod.sessionsGroupsPut.rawValue, members: [
        "names": .boundedStrings(max: groupNameMaxLength), "sectionOrder": .boundedStrings(max: 512),
    ], required: ["names"])
    static let groupsRenameSchema = ClosedParams(method: GatewayMethod.sessionsGroupsRename.rawValue, members: [
        "name": .boundedString(max: groupNameMaxLength), "to": .boundedString(max: groupNameMaxLength),
    ], required: ["name", "to"])
    static let groupsDeleteSchema = ClosedParams(method: GatewayMethod.sessionsGroupsDelete.rawValue, members: [
        "name": .boundedString(max: groupNameMaxLength),
    ], required: ["name"])

    /// Rows a compaction without `maxLines` keeps (the fake does not write a summary row).
    static let defaultCompactionKeep = 2
}
