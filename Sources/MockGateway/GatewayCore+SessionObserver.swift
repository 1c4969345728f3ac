import GatewayProtocol

// `sessions.observer.visibility {visible}` → `{ok: true}` (closed params). Upstream's handler
// (src/gateway/session-observer-rpc.ts; the stored versions with it answer alike) refuses a
// request without a connection (`FORBIDDEN "Session observer visibility requires a connected
// client."`) and a Gateway without a session observer (`UNAVAILABLE "Session observer is
// unavailable."`), and otherwise records the connection's visibility
// (`setConnectionVisibility`), which decides who the observer's digests are for. Session
// observation is on by default (docs/web/control-ui.md@bd64650fe327b392905e1caa727e049a5b5bd3a8),
// and every request here comes over a connection, so the fake gives the answer of a stock
// Gateway to a connected client. It records the visibility but has no observer: it never sends
// a digest.
extension GatewayCore {
    /// `sessions.observer.visibility {visible}` → `{ok: true}`.
    func sessionsObserverVisibility(_ call: MethodCall) {
        answerParams(call, ChatStore.observerVisibilitySchema.validate(call.params)) { members in
            messageSubscriptions.setObserverVisible(members["visible"] == .bool(true), connectionId: call.connectionId)
            reply(call, ["ok": true])
        }
    }
}
