import GatewayProtocol

/// How pairing reads scope lists: the wire strings of `connect.scopes`, pending requests,
/// records and tokens, judged by the one implication rule `OperatorScope.isGranted(by:)`
/// (docs/protocol.md §7.10).
///
/// Pairing applies that rule three times: the scope-upgrade check, whether a pending request
/// already covers a retry, and the approver's authority.
enum PairingScopes {
    /// Whether `granted` satisfies `requested`; a scope outside `operator.` never is.
    static func isSatisfied(_ requested: String, by granted: Set<OperatorScope>) -> Bool {
        requested.hasPrefix("operator.") && OperatorScope(rawValue: requested).isGranted(by: granted)
    }

    /// The first scope of `requested` that `granted` does not satisfy, or `nil` when all are.
    static func firstMissing(_ requested: some Sequence<String>, granted: some Sequence<String>) -> String? {
        let granted = Set(wire: granted)
        return requested.first { !isSatisfied($0, by: granted) }
    }

    /// The operator scopes of `scopes`, trimmed, without duplicates, in their first order:
    /// records and tokens only ever hold operator scopes (docs/protocol.md §5.4).
    static func normalized(_ scopes: some Sequence<String>) -> [String] {
        uniqued(scopes.map { $0.trimmingASCIIWhitespace() }.filter { $0.hasPrefix("operator.") })
    }

    /// The scopes a connection with `role` may hold: the normalised operator scopes for an
    /// operator, none for any other role.
    static func grantable(for role: GatewayRole, from scopes: some Sequence<String>) -> [String] {
        role == .operator ? normalized(scopes) : []
    }
}

/// Removes empty and repeated elements, keeping the first occurrence of each.
func uniqued(_ values: some Sequence<String>) -> [String] {
    var seen = Set<String>()
    return values.filter { !$0.isEmpty && seen.insert($0).inserted }
}

/// Removes repeated roles, keeping the first occurrence of each.
func uniqued(_ roles: some Sequence<GatewayRole>) -> [GatewayRole] {
    var seen = Set<GatewayRole>()
    return roles.filter { !$0.rawValue.isEmpty && seen.insert($0).inserted }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }

    /// Lower-cases ASCII `A`–`Z` only, as the v3 signature payload normalises metadata
    /// (docs/protocol.md §3.9).
    func asciiLowercased() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { scalar in
            (65...90).contains(scalar.value) ? Unicode.Scalar(scalar.value + 32) ?? scalar : scalar
        }))
    }
}
