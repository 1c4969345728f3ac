import Foundation
import GatewayProtocol

// The custom session group catalog (read for facts, nothing copied): the catalog holds which
// groups exist and their order; membership is each session's `category` setting
// (src/gateway/session-groups.ts@2ae68f3c1efb0644cf978f25e7e57aa3d64c4d9e). The handlers and their
// error mapping: src/gateway/server-methods/sessions-groups.ts@4402a791d2b11c1eaa0fb9810019f35f2124ef9f.

/// Why a group catalog change was refused: `invalidRequest` for the caller's input (a put that
/// drops a group with members, a rename of an unknown group), `unavailable` for the rest.
struct SessionGroupError: Error, Sendable, Hashable {
    /// `INVALID_REQUEST` (`true`) or `UNAVAILABLE`.
    var invalidRequest: Bool
    var message: String

    /// The wire error.
    var shape: ErrorShape {
        ErrorShape(code: (invalidRequest ? ErrorCode.invalidRequest : ErrorCode.unavailable).rawValue, message: message)
    }
}

extension ChatStore {
    /// `{groups: [{name, position}], sectionOrder}`.
    var groupsListing: JSONValue {
        ["groups": groupsJSON, "sectionOrder": .array(sectionOrder.map(JSONValue.string))]
    }

    /// `[{name, position}]`, positions from 0 in catalog order.
    var groupsJSON: JSONValue {
        .array(groupCatalog.enumerated().map { ["name": .string($0.element), "position": .int(Int64($0.offset))] })
    }

    /// The sessions whose `category` is `name`.
    func groupMembers(_ name: String) -> [String] {
        sessionStates.filter { $0.value.settings["category"] == .string(name) }.map(\.key).sorted()
    }

    /// `sessions.groups.put`: the catalog becomes `names` (trimmed, blanks and repeats dropped);
    /// dropping a group that still has member sessions is refused. `sectionOrder` keeps the ids
    /// `ungrouped`, `groups`, `work`, `category:<a listed group>` and `catalog:<id>`, once each.
    mutating func putGroups(_ names: [String], sectionOrder order: [String]?) -> Result<Void, SessionGroupError> {
        var normalized: [String] = []
        for name in names.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) where !name.isEmpty && !normalized.contains(name) {
            normalized.append(name)
        }
        let nonEmpty = groupCatalog.filter { !normalized.contains($0) }.map { ($0, groupMembers($0).count) }.filter { $0.1 > 0 }
        if !nonEmpty.isEmpty {
            let listed = nonEmpty.map { "\"\($0.0)\" (\($0.1))" }.joined(separator: ", ")
            return .failure(SessionGroupError(invalidRequest: true, message: "sessions.groups.put cannot drop groups that still have member sessions: \(listed); include them in names or remove them via sessions.groups.delete"))
        }
        groupCatalog = normalized
        if let order { sectionOrder = Self.normalizedSectionOrder(order, groups: normalized) }
        return .success(())
    }

    private static func normalizedSectionOrder(_ order: [String], groups: [String]) -> [String] {
        var result: [String] = []
        for raw in order {
            let id = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            var canonical: String?
            if ["ungrouped", "groups", "work"].contains(id) {
                canonical = id
            } else if id.hasPrefix("category:") {
                let name = id.dropFirst("category:".count).trimmingCharacters(in: .whitespacesAndNewlines)
                if !name.isEmpty, groups.contains(name) { canonical = "category:\(name)" }
            } else if id.hasPrefix("catalog:") {
                let catalogId = id.dropFirst("catalog:".count).trimmingCharacters(in: .whitespacesAndNewlines)
                if !catalogId.isEmpty { canonical = "catalog:\(catalogId)" }
            }
            if let canonical, !result.contains(canonical) { result.append(canonical) }
        }
        return result
    }

    /// `sessions.groups.rename` (`to` given) or `sessions.groups.delete`: the members' `category`
    /// moves to `to` (or is cleared) and the catalog entry is renamed in place (or removed).
    /// A rename onto the same name changes nothing. - Returns: how many sessions changed.
    mutating func renameOrDeleteGroup(_ rawName: String, to rawTo: String?) -> Result<Int, SessionGroupError> {
        let name = rawName.trimmingCharacters(in: .whitespacesAndNewlines)
        let to = rawTo?.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty || to?.isEmpty == true {
            return .failure(SessionGroupError(invalidRequest: false, message: to == nil
                ? "group delete requires a non-empty name" : "group rename requires non-empty names"))
        }
        if name == to { return .success(0) }
        guard let index = groupCatalog.firstIndex(of: name) else {
            // Upstream maps the unknown group to INVALID_REQUEST for a rename, UNAVAILABLE for a delete.
            return .failure(SessionGroupError(invalidRequest: to != nil, message: "unknown session group: \(name)"))
        }
        let members = groupMembers(name)
        for key in members { patch(sessionKey: key, settings: ["category": to.map(JSONValue.string) ?? .null]) }
        if let to {
            groupCatalog[index] = to
            groupCatalog = groupCatalog.enumerated().filter { $0.element != to || $0.offset == index }.map(\.element)
            sectionOrder = sectionOrder.map { $0 == "category:\(name)" ? "category:\(to)" : $0 }
            sectionOrder = sectionOrder.enumerated().filter { sectionOrder.firstIndex(of: $0.element) == $0.offset }.map(\.element)
        } else {
            groupCatalog.remove(at: index)
            sectionOrder.removeAll { $0 == "category:\(name)" }
        }
        return .success(members.count)
    }

    /// A category set through `sessions.patch` joins the catalog at the end
    /// (`ensureSessionGroupRegistered`). - Returns: whether the catalog changed.
    mutating func registerGroup(_ name: String) -> Bool {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, !groupCatalog.contains(name) else { return false }
        groupCatalog.append(name)
        return true
    }
}
