import GatewayProtocol

/// The Gateway-wide voice wake triggers (`voicewake.get` / `voicewake.set`, the
/// `voicewake.changed` broadcast), a fixture a test or the console changes.
///
/// Upstream: `src/gateway/server-methods/voicewake.ts` (handlers), `normalizeVoiceWakeTriggers`
/// in `src/gateway/server-utils.ts` (trimmed strings, empty ones dropped, at most 32, each cut to
/// 64 UTF-16 code units without splitting a surrogate pair, the defaults when nothing is left),
/// and `broadcastVoiceWakeChanged` (`voicewake.changed {triggers}` to operators and nodes).
struct VoiceWakeSettings: Sendable, Hashable {
    /// The current triggers.
    private(set) var triggers: [String]
    /// What an empty list becomes (the Gateway's configured triggers).
    let defaults: [String]

    /// At most this many triggers are kept.
    static let maxTriggers = 32
    /// Each trigger is cut to this many UTF-16 code units.
    static let maxTriggerLength = 64

    /// Starts with `defaults`.
    init(defaults: [String]) {
        self.defaults = defaults
        self.triggers = defaults
    }

    /// `voicewake.get`: `{triggers}` (params are not read, as upstream's handler).
    var getResult: JSONValue { ["triggers": .array(triggers.map(JSONValue.string))] }

    /// `voicewake.set`: a `triggers` array is normalised and replaces the list (the caller
    /// broadcasts `voicewake.changed` with ``getResult``); anything else is
    /// `INVALID_REQUEST "voicewake.set requires triggers: string[]"`.
    mutating func set(_ params: JSONValue?) -> Result<JSONValue, GatewayError> {
        guard let items = params?["triggers"]?.arrayValue else {
            return .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                    message: "\(GatewayMethod.voicewakeSet) requires triggers: string[]")))
        }
        replace(with: items.compactMap(\.stringValue))
        return .success(getResult)
    }

    /// Replaces the list with `candidates`, normalised.
    mutating func replace(with candidates: [String]) {
        triggers = Self.normalize(candidates, defaults: defaults)
    }

    /// Upstream's normalisation: trim, drop empty, keep 32, cut each to 64 UTF-16 units; an empty
    /// result is `defaults`.
    static func normalize(_ candidates: [String], defaults: [String]) -> [String] {
        let cleaned = candidates.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }.prefix(maxTriggers)
            .map { truncateUTF16($0, to: maxTriggerLength) }
        return cleaned.isEmpty ? defaults : Array(cleaned)
    }

    /// `truncateUtf16Safe`: at most `limit` UTF-16 code units, never half a surrogate pair.
    static func truncateUTF16(_ text: String, to limit: Int) -> String {
        guard text.utf16.count > limit else { return text }
        var result = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let width = UTF16.width(scalar)
            guard used + width <= limit else { break }
            result.unicodeScalars.append(scalar)
            used += width
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing white space (JavaScript `trim`).
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }
}
