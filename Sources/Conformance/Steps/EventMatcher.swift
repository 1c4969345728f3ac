import MockGateway

/// An awaited Gateway event as a value: what it is in words (``description``, which failure
/// messages quote) and the function that recognises it and reads what the scenario needs from it
/// (``match``).
///
/// Scenarios pass matchers to the run's waits and checks, which take their failure text from the
/// matcher:
///
/// ```swift
/// let session = try await run.waitForEvent(.session(.node, device: deviceId))
/// try await run.expectNoEvent(.session(.node, device: deviceId), within: .seconds(3))
/// ```
///
/// The common matchers (``session(_:device:)``, ``superseded(of:)``, ``nodeEvent(_:node:)``,
/// ``invokeResult(id:)``, ...) are defined once, in `EventMatcher+Common.swift`; a scenario
/// narrows one with ``filter(_:)``, renames it with ``named(_:)`` or writes its own with
/// ``init(_:_:)``.
public struct EventMatcher<Output: Sendable>: Sendable, CustomStringConvertible {
    /// What the matcher waits for, as a failure message names it (`the client's node session of
    /// 3f2a… (hello-ok)`).
    public let description: String
    /// The wanted value for a matching event, `nil` for any other. It runs while the event log's
    /// lock is held, so it must not read the log (`gateway.events`, `run.events()`) itself.
    public let match: @Sendable (GatewayEvent) -> Output?

    /// A matcher that `match` decides, described as `description`.
    public init(_ description: String, _ match: @escaping @Sendable (GatewayEvent) -> Output?) {
        self.description = description
        self.match = match
    }

    /// The same matcher, described as `description` (for a failure message in the words of the
    /// scenario: `.session(.node, device: id).named("a node session after the restart")`).
    public func named(_ description: String) -> EventMatcher {
        EventMatcher(description, match)
    }

    /// The matcher that also requires `predicate` of the matched value.
    public func filter(_ predicate: @escaping @Sendable (Output) -> Bool) -> EventMatcher {
        let match = self.match
        return EventMatcher(description) { event in match(event).flatMap { predicate($0) ? $0 : nil } }
    }

    /// The matcher that reads something else from the matched value (`nil` skips the event).
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Output) -> T?) -> EventMatcher<T> {
        let match = self.match
        return EventMatcher<T>(description) { event in match(event).flatMap(transform) }
    }
}

extension EventMatcher where Output == GatewayEvent {
    /// Any event for which `predicate` holds, described as `description`.
    public static func event(_ description: String, where predicate: @escaping @Sendable (GatewayEvent) -> Bool) -> EventMatcher {
        EventMatcher(description) { predicate($0) ? $0 : nil }
    }
}
