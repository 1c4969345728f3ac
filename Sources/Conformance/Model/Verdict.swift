/// The outcome of one scenario against one profile.
public enum Verdict: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Every check held.
    case pass
    /// A `MUST` was violated.
    case fail
    /// A `SHOULD` was violated (a failure only with `--strict`).
    case warn
    /// The client lacks a stimulus the scenario needs.
    case unsupported
    /// The harness, the environment or the client process broke (crash, protocol violation).
    case error
    /// The client stopped answering: no hello, no stimulus reply, or the scenario's deadline passed.
    case timeout

    /// Whether this verdict fails a run (`warn` only when `strict`).
    public func isGatedFailure(strict: Bool) -> Bool {
        switch self {
        case .pass, .unsupported: false
        case .warn: strict
        case .fail, .error, .timeout: true
        }
    }

    /// Report order: the worst first.
    var severity: Int {
        switch self {
        case .error: 0
        case .timeout: 1
        case .fail: 2
        case .warn: 3
        case .unsupported: 4
        case .pass: 5
        }
    }

    /// Orders by declaration (pass, fail, warn, unsupported, error, timeout).
    public static func < (lhs: Verdict, rhs: Verdict) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }

    /// The lowercase name.
    public var description: String { rawValue }
}
