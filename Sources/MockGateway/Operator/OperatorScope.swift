import GatewayProtocol

/// An operator scope, such as `operator.read` (docs/protocol.md §7.10).
///
/// A string wrapper rather than a closed enum: clients send scopes the fake Gateway does not know,
/// and those must still match exactly.
public struct OperatorScope: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `operator.admin`: satisfies every operator scope.
    public static let admin: OperatorScope = "operator.admin"
    /// `operator.read`: read-only methods; also satisfied by `operator.write`.
    public static let read: OperatorScope = "operator.read"
    /// `operator.write`: mutating methods such as `node.invoke`.
    public static let write: OperatorScope = "operator.write"
    /// `operator.approvals`: the exec and plugin approval APIs (legacy and unified).
    public static let approvals: OperatorScope = "operator.approvals"
    /// `operator.pairing`: `device.pair.*`, `node.pair.*`, device tokens.
    public static let pairing: OperatorScope = "operator.pairing"
    /// `operator.questions`: listing, reading, answering and resolving agent questions.
    public static let questions: OperatorScope = "operator.questions"
    /// `operator.talk`: talk mode; also satisfied by `operator.write`.
    public static let talk: OperatorScope = "operator.talk"
    /// `operator.talk.secrets`.
    public static let talkSecrets: OperatorScope = "operator.talk.secrets"
    /// `operator.sessions.read`; also satisfied by `operator.sessions.write`.
    public static let sessionsRead: OperatorScope = "operator.sessions.read"
    /// `operator.sessions.write`: also admitted for own-run ordinary questions.
    public static let sessionsWrite: OperatorScope = "operator.sessions.write"

    /// Whether a session holding `granted` has this scope, by the implication rules of
    /// docs/protocol.md §7.10: `operator.admin` satisfies every operator scope,
    /// `operator.write` satisfies `operator.read` and `operator.talk`, `operator.sessions.write`
    /// satisfies `operator.sessions.read`; any other scope (including unknown future ones) needs
    /// an exact match.
    public func isGranted(by granted: Set<OperatorScope>) -> Bool {
        if granted.contains(self) { return true }
        if granted.contains(.admin) && rawValue.hasPrefix("operator.") { return true }
        switch self {
        case .read, .talk: return granted.contains(.write)
        case .sessionsRead: return granted.contains(.sessionsWrite)
        default: return false
        }
    }
}

extension Set where Element == OperatorScope {
    /// The scopes of a session, from the strings of `connect.scopes` / `hello-ok.auth.scopes`.
    public init<S: Sequence>(wire scopes: S) where S.Element == String {
        self.init(scopes.map(OperatorScope.init(rawValue:)))
    }
}
