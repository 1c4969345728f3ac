import GatewayProtocol
import Simulation

// The session list of the reference client, kept as the apps keep theirs: read with
// `sessions.list` after every operator (re)connect, followed live with `sessions.subscribe`, and
// changed by `sessions.changed`:
// - `reason: "delete"`: the row leaves the list and its cached transcript is dropped (Control UI
//   `applySessionsChangedEvent` in ui/src/ui/controllers/sessions.ts removes the row and its cached
//   chat row); a change the list cannot place is answered by reading `sessions.list` again
//   (OpenClawKit `applySessionChangeProjection` in ChatViewModel.swift);
// - `reason: "reset" | "new" | "compact"` for a session whose transcript the chat view caches:
//   the cached rows and cursor are dropped and a fresh tail is read (docs/protocol.md §8.6: a
//   reset or compaction ends the transcript the cache holds).
extension ReferenceClient {
    /// How long `expect-sessions` waits (client time) for a change in flight.
    static let sessionListSettleTimeout: Duration = .seconds(5)

    /// After every operator (re)connect: subscribe to `sessions.changed`, then read the list.
    func refreshSessionList(on connection: GatewayConnection, methods: Set<String>) async {
        if methods.contains(GatewayMethod.sessionsSubscribe.rawValue) {
            _ = await Self.result(of: connection, GatewayMethod.sessionsSubscribe.rawValue, [:])
        }
        guard methods.contains(GatewayMethod.sessionsList.rawValue) else { return }
        await readSessionList(on: connection)
    }

    private func readSessionList(on connection: GatewayConnection) async {
        guard case .success(let payload) = await Self.result(of: connection, GatewayMethod.sessionsList.rawValue, [:]) else { return }
        let keys = (payload["sessions"]?.arrayValue ?? []).compactMap { $0["key"]?.stringValue }
        sessionList = keys
        observations.append(.sessionListChanged(keys: keys))
    }

    /// A `sessions.changed` on the operator session.
    func applySessionsChangedEvent(_ event: EventFrame, on connection: GatewayConnection) {
        guard event.event == GatewayEventName.sessionsChanged.rawValue,
              let key = event.payload?["sessionKey"]?.stringValue else { return }
        switch event.payload?["reason"]?.stringValue {
        case "delete":
            if configuration.has(.keepDeletedSession) { return }
            sessionList.removeAll { $0 == key }
            chat.historyReset(gateway: gatewayKey, sessionKey: key, configuration: configuration)
            saveChat()
            observations.append(.sessionListChanged(keys: sessionList))
        case "reset", "new", "compact":
            if configuration.has(.ignoreSessionResetEvent) { return }
            spawnTask { await self.refreshSessionTranscript(key) }
        case "patch":
            break
        default:
            if !sessionList.contains(key) { spawnTask { await self.readSessionList(on: connection) } }
        }
    }

    /// `expect-sessions`: `ok` as soon as the session list shows exactly `expected` (in any
    /// order), waiting up to ``sessionListSettleTimeout`` of client time for a change in flight.
    func expectSessions(_ expected: [String]) async -> StimulusOutcome {
        let wanted = expected.sorted()
        if sessionList.sorted() == wanted { return .ok }
        let cursor = observations.count
        let seen = await observations.first(from: cursor, timeout: Self.sessionListSettleTimeout, on: configuration.clock.waitTimeline) { observation in
            if case .sessionListChanged(let keys) = observation { return keys.sorted() == wanted }
            return false
        }
        if seen != nil, sessionList.sorted() == wanted { return .ok }
        return .error("the session list shows \(JSONValue.array(sessionList.map(JSONValue.string)).jsonString)")
    }
}
