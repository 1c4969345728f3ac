import GatewayProtocol

// The session group methods (rules in Chat/SessionGroups.swift). As upstream's handlers
// (src/gateway/server-methods/sessions-groups.ts@4402a791d2b11c1eaa0fb9810019f35f2124ef9f): a put
// sends `sessions.changed {reason: "groups"}` after it succeeds; a rename or delete sends it
// whether it succeeded or not.
extension GatewayCore {
    /// `sessions.groups.list {}` → `{groups: [{name, position}], sectionOrder}`.
    func sessionsGroupsList(_ call: MethodCall) {
        answerParams(call, ChatStore.groupsListSchema.validate(call.params)) { _ in reply(call, chat.store.groupsListing) }
    }

    /// `sessions.groups.put {names, sectionOrder?}` → `{ok: true, groups, sectionOrder}`.
    func sessionsGroupsPut(_ call: MethodCall) {
        answerParams(call, ChatStore.groupsPutSchema.validate(call.params)) { members in
            let names = (members["names"]?.arrayValue ?? []).compactMap(\.stringValue)
            let order = members["sectionOrder"]?.arrayValue?.compactMap(\.stringValue)
            switch putSessionGroups(names, sectionOrder: order) {
            case .failure(let error): fail(call, error.shape)
            case .success(let listing): reply(call, listing)
            }
        }
    }

    /// `sessions.groups.rename {name, to}` / `sessions.groups.delete {name}` →
    /// `{ok: true, groups, sectionOrder, updatedSessions}`.
    func sessionsGroupsRenameOrDelete(_ call: MethodCall, rename: Bool) {
        let schema = rename ? ChatStore.groupsRenameSchema : ChatStore.groupsDeleteSchema
        answerParams(call, schema.validate(call.params)) { members in
            let outcome = chat.store.renameOrDeleteGroup(members["name"]?.stringValue ?? "",
                                                        to: rename ? members["to"]?.stringValue ?? "" : nil)
            switch outcome {
            case .failure(let error): fail(call, error.shape)
            case .success(let updated):
                var listing = chat.store.groupsListing.objectValue ?? [:]
                listing["ok"] = true
                listing["updatedSessions"] = .int(Int64(updated))
                reply(call, .object(listing))
            }
            emitSessionGroupsChanged()
        }
    }

    /// The put of the wire and of the scripting API: `{ok: true, groups, sectionOrder}`, then
    /// `sessions.changed {reason: "groups"}`.
    func putSessionGroups(_ names: [String], sectionOrder: [String]?) -> Result<JSONValue, SessionGroupError> {
        switch chat.store.putGroups(names, sectionOrder: sectionOrder) {
        case .failure(let error): return .failure(error)
        case .success:
            var listing = chat.store.groupsListing.objectValue ?? [:]
            listing["ok"] = true
            emitSessionGroupsChanged()
            return .success(.object(listing))
        }
    }
}
