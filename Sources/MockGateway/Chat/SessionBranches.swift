import Foundation
import GatewayProtocol

// `sessions.branches.list`: the tips of a session's transcript tree, as upstream summarises them
// (`summarizeSessionBranches` / `summarizeSessionBranch` in
// src/config/sessions/session-accessor.sqlite-message-cut.ts@c11e5d63df35ec51de9d44d9990671e083ab3baa):
// one branch per tip (TranscriptTree.swift), the active one first, then the newest written first.
// A session without rows, or an unknown key, has none (upstream answers `{branches: []}` for a key
// that has not materialised, sessions-rewind.ts). A linear transcript has exactly one branch.
extension ChatStore {
    /// The longest headline, in Unicode code points (`BRANCH_HEADLINE_MAX_CHARS`); a longer one is
    /// cut to one less and ends in `…`.
    static let branchHeadlineMaxChars = 120

    /// `{branches: [{leafEntryId, headline, messageCount, updatedAt, active}]}` for `key`.
    func branchesListing(_ key: String) -> JSONValue {
        guard let state = sessionStates[key] else { return ["branches": []] }
        let branches: [JSONValue] = state.tree.tips.compactMap { tip in
            // The path's rows a compaction did not hide; a tip with none is not listed.
            let rows = state.tree.path(to: tip).filter { !state.hiddenIds.contains($0.id) }
            guard let leaf = rows.last else { return nil }
            // The headline is the newest message on the path with text (whitespace runs collapsed).
            let headline = rows.reversed().lazy.map { Self.collapsedWhitespace($0.text) }.first { !$0.isEmpty } ?? ""
            let branch: [String: JSONValue] = [
                "leafEntryId": .string(leaf.id),
                "headline": .string(Self.truncatedHeadline(headline)),
                "messageCount": .int(Int64(rows.count)),
                "updatedAt": .string(Self.isoTimestamp(leaf.timestampMs)),
                "active": .bool(tip == state.tree.leafId),
            ]
            return .object(branch)
        }
        return ["branches": .array(branches)]
    }

    /// `text` with every whitespace run replaced by one space, trimmed (upstream `\s+` → " ").
    static func collapsedWhitespace(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// `headline` cut to `branchHeadlineMaxChars` code points (the last one `…`) when longer.
    static func truncatedHeadline(_ headline: String) -> String {
        let scalars = Array(headline.unicodeScalars)
        guard scalars.count > branchHeadlineMaxChars else { return headline }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: scalars.prefix(branchHeadlineMaxChars - 1))
        return String(cut) + "…"
    }

    /// A transcript entry's `timestamp`: `Date.toISOString()` (UTC with milliseconds) of `ms`.
    static func isoTimestamp(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

/// The three message-cut methods, whose refusals name them.
enum MessageCutAction: Sendable, Hashable {
    /// `sessions.fork`.
    case fork
    /// `sessions.rewind`.
    case rewind
    /// `sessions.branches.switch`.
    case switchBranch
}

/// Why a message cut (`sessions.fork`, `sessions.rewind`, `sessions.branches.switch`) was
/// refused, in upstream's order (`mutateSessionAtMessage` and `respondMessageCutError` in
/// src/gateway/server-methods/sessions-rewind.ts@0214f96109264efdf07467fdd0953476fcceef0e;
/// `resolveMessageCut` and `validateBranchTip` in
/// src/config/sessions/session-message-cut-plan.ts@57919cb8c480af88442904719ee786073d0e2f8b).
enum MessageCutRefusal: Error, Sendable, Hashable {
    /// No session under the key: `INVALID_REQUEST "session not found: <key>"`.
    case missingSession(String)
    /// The agent has a run that has not ended: `UNAVAILABLE "Fork is unavailable while the agent
    /// is working."` (`Rewind …`, `Branch switch …`).
    case busy(MessageCutAction)
    /// A rewind or switch of an archived session: `Rewind is unavailable for archived sessions.`
    /// (`Branch switch …`).
    case archived(MessageCutAction)
    /// No entry with the id in the session's transcript: `message entry not found: <id>`.
    case missingEntry(String)
    /// The entry is not a user message: `entry is not a user message: <id>`.
    case notUserMessage(String)
    /// The user message is on another branch: `message entry is not on the active path: <id>`.
    case offActivePath(String)
    /// A switch to an id the transcript does not hold: `branch entry not found: <id>`.
    case missingBranch(String)
    /// A switch to an entry that is not a tip: `entry is not a branch tip: <id>`.
    case notBranchTip(String)
    /// A switch to the active tip: `branch is already active: <id>`.
    case alreadyActive(String)

    /// The refusal as upstream answers it.
    var shape: ErrorShape {
        func invalid(_ message: String) -> ErrorShape { ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message) }
        switch self {
        case .missingSession(let key): return invalid("session not found: \(key)")
        case .busy(let action):
            let name = switch action {
            case .fork: "Fork"
            case .rewind: "Rewind"
            case .switchBranch: "Branch switch"
            }
            return ErrorShape(code: ErrorCode.unavailable.rawValue, message: "\(name) is unavailable while the agent is working.")
        case .archived(let action):
            return invalid("\(action == .switchBranch ? "Branch switch" : "Rewind") is unavailable for archived sessions.")
        case .missingEntry(let id): return invalid("message entry not found: \(id)")
        case .notUserMessage(let id): return invalid("entry is not a user message: \(id)")
        case .offActivePath(let id): return invalid("message entry is not on the active path: \(id)")
        case .missingBranch(let id): return invalid("branch entry not found: \(id)")
        case .notBranchTip(let id): return invalid("entry is not a branch tip: \(id)")
        case .alreadyActive(let id): return invalid("branch is already active: \(id)")
        }
    }
}

extension ChatStore {
    /// `sessions.rewind` `{sessionKey, agentId?, entryId}` (closed; `SessionsRewindParamsSchema`,
    /// packages/gateway-protocol/src/schema/sessions.ts@7b6ec5108dccbd92a1a3130921e7c06c1b134c11).
    static let rewindSchema = ClosedParams(method: GatewayMethod.sessionsRewind.rawValue, members: [
        "sessionKey": .nonEmptyString, "agentId": .nonEmptyString, "entryId": .nonEmptyString,
    ], required: ["sessionKey", "entryId"])

    /// `sessions.branches.switch` `{sessionKey, agentId?, leafEntryId}` (closed;
    /// `SessionsBranchesSwitchParamsSchema`, same file).
    static let branchesSwitchSchema = ClosedParams(method: GatewayMethod.sessionsBranchesSwitch.rawValue, members: [
        "sessionKey": .nonEmptyString, "agentId": .nonEmptyString, "leafEntryId": .nonEmptyString,
    ], required: ["sessionKey", "leafEntryId"])

    /// `sessions.observer.visibility` `{visible: boolean}` (closed;
    /// `SessionsObserverVisibilityParamsSchema`, same file).
    static let observerVisibilitySchema = ClosedParams(method: GatewayMethod.sessionsObserverVisibility.rawValue, members: [
        "visible": .bool,
    ], required: ["visible"])
}
