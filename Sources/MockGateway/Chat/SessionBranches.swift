import Foundation
import GatewayProtocol

// `sessions.branches.list`: the tips of a session's transcript tree, as upstream summarises them
// (`summarizeSessionBranches` / `summarizeSessionBranch` in
// src/config/sessions/session-accessor.sqlite-message-cut.ts@c11e5d63df35ec51de9d44d9990671e083ab3baa).
// The fake's transcript is one path (no rewind or fork writes a second tip), so a session with rows
// has exactly one branch, the active one; a session without rows, or an unknown key, has none
// (upstream answers `{branches: []}` for a key that has not materialised, sessions-rewind.ts).
extension ChatStore {
    /// The longest headline, in Unicode code points (`BRANCH_HEADLINE_MAX_CHARS`); a longer one is
    /// cut to one less and ends in `…`.
    static let branchHeadlineMaxChars = 120

    /// `{branches: [{leafEntryId, headline, messageCount, updatedAt, active}]}` for `key`.
    func branchesListing(_ key: String) -> JSONValue {
        let rows = messages(in: key)
        guard let leaf = rows.last else { return ["branches": []] }
        // The headline is the newest message on the path with text (whitespace runs collapsed).
        let headline = rows.reversed().lazy.map { Self.collapsedWhitespace($0.text) }.first { !$0.isEmpty } ?? ""
        let branch: [String: JSONValue] = [
            "leafEntryId": .string(leaf.id),
            "headline": .string(Self.truncatedHeadline(headline)),
            "messageCount": .int(Int64(rows.count)),
            "updatedAt": .string(Self.isoTimestamp(leaf.timestampMs)),
            "active": true,
        ]
        return ["branches": [.object(branch)]]
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

/// Why a message cut (`sessions.fork`) was refused, in upstream's order
/// (`mutateSessionAtMessage` in src/gateway/server-methods/sessions-rewind.ts
/// @50667d65e3e02e5be767d65d5a590d9bbcd3950d, `resolveMessageCut` in
/// src/config/sessions/session-accessor.sqlite-message-cut.ts@c11e5d63df35ec51de9d44d9990671e083ab3baa).
enum MessageCutRefusal: Error, Sendable, Hashable {
    /// No session under the key: `INVALID_REQUEST "session not found: <key>"`.
    case missingSession(String)
    /// The agent has a run that has not ended: `UNAVAILABLE "Fork is unavailable while the agent is working."`.
    case busy
    /// No entry with the id on the session's transcript: `message entry not found: <id>`.
    case missingEntry(String)
    /// The entry is not a user message: `entry is not a user message: <id>`.
    case notUserMessage(String)

    /// The refusal as upstream answers it.
    var shape: ErrorShape {
        switch self {
        case .missingSession(let key): ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "session not found: \(key)")
        case .busy: ErrorShape(code: ErrorCode.unavailable.rawValue, message: "Fork is unavailable while the agent is working.")
        case .missingEntry(let id): ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "message entry not found: \(id)")
        case .notUserMessage(let id): ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "entry is not a user message: \(id)")
        }
    }
}
