import MockGateway

/// The run's waits and checks for an ``EventMatcher``: the failure text comes from the matcher's
/// description (`timed out waiting for the client's node session of 3f2a… (hello-ok)`).
extension ScenarioRun {
    /// Waits for the first event `matcher` matches; see ``waitForEvent(_:within:from:on:level:_:)``.
    /// - Returns: the matched value.
    @discardableResult
    public func waitForEvent<T: Sendable>(
        _ matcher: EventMatcher<T>, within: Duration? = nil, from: EventCursor? = nil, on gateway: Gateway? = nil,
        level: RequirementLevel? = nil
    ) async throws -> T {
        try await waitForEvent(matcher.description, within: within, from: from, on: gateway, level: level, matcher.match)
    }

    /// ``waitForEvent(_:within:from:on:level:)`` that also returns the cursor just after the
    /// matched event.
    public func waitForMatch<T: Sendable>(
        _ matcher: EventMatcher<T>, within: Duration? = nil, from: EventCursor? = nil, on gateway: Gateway? = nil,
        level: RequirementLevel? = nil
    ) async throws -> (value: T, next: EventCursor) {
        try await waitForMatch(matcher.description, within: within, from: from, on: gateway, level: level, matcher.match)
    }

    /// Waits until `matcher` matched `count` events, all within one deadline; see
    /// ``waitForEvents(_:count:within:from:on:level:_:)``.
    public func waitForEvents<T: Sendable>(
        _ matcher: EventMatcher<T>, count: Int, within: Duration? = nil, from: EventCursor? = nil, on gateway: Gateway? = nil,
        level: RequirementLevel? = nil
    ) async throws -> [T] {
        try await waitForEvents("\(count) × \(matcher.description)", count: count, within: within, from: from, on: gateway,
                                level: level, matcher.match)
    }

    /// Requires that `matcher` matches no event within `within` (scaled), counting from `from`
    /// (default: now); the failure names the matcher and the event that happened.
    public func expectNoEvent<T: Sendable>(
        _ matcher: EventMatcher<T>, within: Duration, from: EventCursor? = nil, on gateway: Gateway? = nil,
        level: RequirementLevel? = nil
    ) async throws {
        let match = matcher.match
        try await expectNoEvent(within: within, matcher.description, from: from, on: gateway, level: level) { match($0) != nil }
    }

    /// Waits for an event the client causes by itself, prompting it with the `connect` stimulus
    /// when it does not come; see ``untilClient(_:from:within:connectFallback:_:)``.
    @discardableResult
    public func untilClient<T: Sendable>(
        _ matcher: EventMatcher<T>, from cursor: EventCursor, within: Duration = .seconds(12), connectFallback: Bool = true
    ) async throws -> T {
        try await untilClient(matcher.description, from: cursor, within: within, connectFallback: connectFallback, matcher.match)
    }

    /// The values `matcher` reads from the events of `gateway` from `cursor` on (no waiting).
    public func matches<T: Sendable>(_ matcher: EventMatcher<T>, from cursor: EventCursor = .start, on gateway: Gateway? = nil) -> [T] {
        events(from: cursor, on: gateway).compactMap(matcher.match)
    }
}
