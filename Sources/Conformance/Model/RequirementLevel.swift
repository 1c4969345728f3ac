/// How strong a requirement is, in RFC 2119 terms. A violated `MUST` yields `fail`; a violated
/// `SHOULD` yields `warn` (which fails the run only with `--strict`).
public enum RequirementLevel: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An absolute requirement.
    case must = "MUST"
    /// A recommendation: a violation is reported as a warning.
    case should = "SHOULD"

    /// `MUST` or `SHOULD`.
    public var description: String { rawValue }
}
