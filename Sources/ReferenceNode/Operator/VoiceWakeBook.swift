import GatewayProtocol

/// The voice wake settings of the reference client (docs/protocol.md §9.4): the trigger words
/// are the Gateway's, one list for every device. As the iOS app does
/// (`apps/ios/Sources/Model/NodeAppModel.swift@013c24e7`, `startVoiceWakeSync` and
/// `refreshWakeWordsFromGateway`), the client reads them with `voicewake.get` after every
/// connect, saves a user's edit with `voicewake.set`, and takes every `voicewake.changed`
/// `{triggers}` as the new list: a change made on another device replaces the local list; the
/// client never writes its own list back over it.
///
/// Pure state: the client sends the requests and feeds the answers and events in.
struct VoiceWakeBook: Sendable, Hashable {
    /// How long `expect-voice-wake-triggers` waits for a change in flight to be shown.
    static let settleTimeout: Duration = .seconds(5)

    /// What `voicewake.changed` makes the client do.
    enum ChangeDecision: Sendable, Hashable {
        /// The event's list is shown now.
        case adopted([String])
        /// The list shown already is the event's (or the event is malformed).
        case unchanged
        /// The `overwrite-voice-wake-triggers` mutant: send this local list back (`voicewake.set`).
        case writeBack([String])
    }

    /// The trigger words the settings show (empty until the Gateway's list was read).
    private(set) var triggers: [String] = []
    /// Whether the user edited the list on this device (the mutant's notion of "mine").
    private(set) var editedHere = false

    /// The triggers of a `voicewake.get` / `voicewake.set` answer or a `voicewake.changed`
    /// payload, or `nil` when it has no `triggers` array of strings.
    static func triggers(in payload: JSONValue?) -> [String]? {
        guard let items = payload?["triggers"]?.arrayValue else { return nil }
        let words = items.compactMap(\.stringValue)
        return words.count == items.count ? words : nil
    }

    /// The params of `voicewake.set` for `triggers`.
    static func setParams(_ triggers: [String]) -> JSONValue {
        ["triggers": .array(triggers.map(JSONValue.string))]
    }

    /// The user typed a new list: the settings show it at once.
    mutating func edit(_ words: [String]) {
        triggers = words
        editedHere = true
    }

    /// Takes the Gateway's list from a `voicewake.get` or `voicewake.set` answer (the stored,
    /// normalised list); `true` when the shown list changed.
    @discardableResult
    mutating func adopt(answer payload: JSONValue) -> Bool {
        guard let words = Self.triggers(in: payload), words != triggers else { return false }
        triggers = words
        return true
    }

    /// A `voicewake.changed` event: the Gateway's list replaces the local one.
    mutating func applyChanged(_ payload: JSONValue?, configuration: ReferenceConfiguration) -> ChangeDecision {
        guard let words = Self.triggers(in: payload), words != triggers else { return .unchanged }
        // The mutant takes its own edit as the truth and writes it back over the other device's.
        if configuration.has(.overwriteVoiceWakeTriggers), editedHere { return .writeBack(triggers) }
        triggers = words
        return .adopted(words)
    }
}
