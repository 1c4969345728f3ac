import GatewayProtocol

/// Which broadcast events a session may receive (docs/protocol.md §2.6, "Broadcast event
/// scoping").
///
/// Broadcasts are filtered per socket; events the Gateway targets at one connection on purpose
/// (`connect.challenge`, `node.invoke.request`, ...) are not broadcasts and are not filtered here,
/// except that `node.invoke.*` is only ever meant for node sockets.
public enum EventScopeGate {
    /// Events every authenticated socket receives (never scope-gated).
    public static let unrestrictedEvents: Set<String> = Set([
        GatewayEventName.tick, .presence, .heartbeat, .health, .shutdown, .connectChallenge, .updateAvailable,
    ].map(\.rawValue))

    /// Scoped events that node sockets receive anyway (nodes reconfigure their wake words on it).
    public static let nodeAllowedEvents: Set<String> = [GatewayEventName.voicewakeChanged.rawValue]

    /// Whether a session with `role` and `scopes` receives the broadcast `event`.
    ///
    /// A `role:"node"` socket holds no operator scopes whatever it asked for; of the scoped events
    /// it receives only `voicewake.changed`. Unknown event families fail closed, even for
    /// `operator.admin` (upstream `server-broadcast.ts`).
    public static func allows(event: String, scopes: Set<OperatorScope>, role: GatewayRole) -> Bool {
        if unrestrictedEvents.contains(event) { return true }
        if event.hasPrefix("node.invoke.") { return role == .node }
        if role == .node { return nodeAllowedEvents.contains(event) }
        guard role == .operator, let requirement = requirement(forEvent: event) else { return false }
        return requirement.contains { $0.isGranted(by: scopes) }
    }

    /// `allows(event:scopes:role:)` for a session described by its wire strings.
    public static func allows(event: String, role: String, scopes: [String]) -> Bool {
        allows(event: event, scopes: Set(wire: scopes), role: GatewayRole(rawValue: role))
    }

    /// The scopes of which any one admits a session to `event`, or `nil` for an unrestricted or
    /// unknown event.
    public static func requirement(forEvent event: String) -> [OperatorScope]? {
        func family(_ family: GatewayEventFamily) -> Bool { family.contains(event) }
        if family(.devicePair) || family(.nodePair) { return [.pairing] }
        if family(.execApproval) || family(.pluginApproval) || family(.openclawApproval)
            || event == GatewayEventName.sessionApproval.rawValue
        {
            // A session subscription alone never grants approval visibility
            // (docs/protocol.md §7.3).
            return [.approvals]
        }
        if family(.question) {
            // The same scopes that admit question.list (docs/protocol.md §7.7).
            let requirement = OperatorMethodPolicy.requirement(for: GatewayMethod.questionList.rawValue)
            return [requirement.scope] + requirement.alsoAdmittedBy
        }
        if family(.plugin) { return [.write] }
        if event == GatewayEventName.talkMode.rawValue { return [.write] }
        if event == GatewayEventName.voicewakeChanged.rawValue || event == GatewayEventName.talkEvent.rawValue { return [.read] }
        if family(.chat) || family(.agent) || family(.session) || family(.sessions) || event == GatewayEventName.nodePresence.rawValue {
            return [.read]
        }
        return nil
    }
}
