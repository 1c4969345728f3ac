/// A check that did not hold: what was required, what was expected and what happened.
///
/// Thrown by the scenario DSL (`run.expect`, `run.waitForEvent`, ...). In a `MUST` scenario it
/// yields `fail`; in a `SHOULD` scenario, `warn`.
public struct ScenarioFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in one sentence.
    public var message: String
    /// What the requirement wanted, when it can be said briefly.
    public var expected: String?
    /// What happened instead.
    public var actual: String?
    /// Overrides the scenario's level for this check (a `SHOULD` check inside a `MUST` scenario).
    public var level: RequirementLevel?

    /// Creates a failure.
    public init(_ message: String, expected: String? = nil, actual: String? = nil, level: RequirementLevel? = nil) {
        self.message = message
        self.expected = expected
        self.actual = actual
        self.level = level
    }

    /// The message with expected and actual values.
    public var description: String {
        var text = message
        if let expected { text += "; expected: \(expected)" }
        if let actual { text += "; actual: \(actual)" }
        return text
    }
}

/// The client lacks what the scenario needs: the verdict is `unsupported`, never `fail`.
public struct ScenarioUnsupported: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why (for example `the client does not support "reset-identity"`).
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// The client stopped answering in time: the verdict is `timeout`.
public struct ScenarioTimedOut: Error, Sendable, Hashable, CustomStringConvertible {
    /// What did not arrive in time.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// The harness, the environment or the client process broke: the verdict is `error`.
public struct HarnessError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What broke.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
