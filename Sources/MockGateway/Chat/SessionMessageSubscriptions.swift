import GatewayProtocol

/// Which operator connections receive `session.message` for which session keys.
///
/// Upstream (read for facts, nothing copied): a transcript update is sent as `session.message`
/// to the union of the connections that called `sessions.subscribe` (every session) and those
/// that called `sessions.messages.subscribe {key}` for its session key, and to nobody else
/// (`handleTranscriptUpdateBroadcast`, src/gateway/server-session-events.ts
/// @08eec41769bd918a21e247404ad691d5707a79e1; the registries in src/gateway/server-chat.ts
/// @006a22e92263992cfb05b9209a46767f7dfd615a). `sessions.messages.unsubscribe {key}` and
/// `sessions.unsubscribe` end them, and a closed connection loses all of them. The handlers
/// answer `{subscribed:true, key}` / `{subscribed:false, key}` and `{subscribed:true}` /
/// `{subscribed:false}` (src/gateway/server-methods/sessions-subscriptions.ts
/// @c2b8ccdc2fd9872dec93c717ac773a95634f135a); `docs/gateway/protocol.md` "Session control" of the
/// `openclaw/docs` mirror describes both methods the same way.
///
/// The fake matches session keys exactly. Upstream canonicalises a key first (`loadSessionEntry`
/// maps an alias such as `main` to its canonical form, and `global` to a per-agent key); this
/// Gateway's sessions have no aliases, so a client must subscribe with the key it chats in.
struct SessionMessageSubscriptions: Sendable, Hashable {
    private(set) var keysByConnection: [String: Set<String>] = [:]
    /// The connections subscribed to every session (`sessions.subscribe`).
    private(set) var everySession: Set<String> = []
    /// The connections that declared they show the session observer's output
    /// (`sessions.observer.visibility {visible: true}`).
    private(set) var observerVisible: Set<String> = []

    /// `sessions.messages.subscribe {key}`: the connection receives `key`'s messages.
    mutating func subscribe(connectionId: String, key: String) {
        keysByConnection[connectionId, default: []].insert(key)
    }

    /// `sessions.messages.unsubscribe {key}`.
    mutating func unsubscribe(connectionId: String, key: String) {
        keysByConnection[connectionId]?.remove(key)
        if keysByConnection[connectionId]?.isEmpty == true { keysByConnection[connectionId] = nil }
    }

    /// `sessions.subscribe` (`true`) or `sessions.unsubscribe` (`false`).
    mutating func setEverySession(_ subscribed: Bool, connectionId: String) {
        if subscribed { everySession.insert(connectionId) } else { everySession.remove(connectionId) }
    }

    /// `sessions.observer.visibility {visible}` of a connection.
    mutating func setObserverVisible(_ visible: Bool, connectionId: String) {
        if visible { observerVisible.insert(connectionId) } else { observerVisible.remove(connectionId) }
    }

    /// Forgets a closed connection.
    mutating func drop(connectionId: String) {
        keysByConnection[connectionId] = nil
        everySession.remove(connectionId)
        observerVisible.remove(connectionId)
    }

    /// Whether the connection receives `session.message` for `sessionKey`.
    func receives(connectionId: String, sessionKey: String) -> Bool {
        everySession.contains(connectionId) || keysByConnection[connectionId]?.contains(sessionKey) == true
    }
}
