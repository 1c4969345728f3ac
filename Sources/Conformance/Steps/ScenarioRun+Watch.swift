import GatewayProtocol
import MockGateway

/// Matchers of the Apple Watch direct mode (docs/protocol.md §13): the Gateway logs every answer
/// of its Watch routes (``GatewayEvent/watchAnswered(_:)``), which is how a scenario sees what a
/// Watch client did over HTTP.
extension EventMatcher where Output == WatchExchangeInfo {
    /// An answer of the Watch route `path` (`WatchDirectRules.connectPath`, ...), whatever its status.
    public static func watchAnswer(_ path: String) -> EventMatcher {
        EventMatcher("an answer to \(path)") { event in
            guard case .watchAnswered(let info) = event, info.path == path else { return nil }
            return info
        }
    }

    /// A Watch connect answered 200 (a new session).
    public static var watchSession: EventMatcher {
        watchAnswer(WatchDirectRules.connectPath).filter { $0.status == 200 }.named("a Watch connect answered 200 (a new session)")
    }

    /// A Watch poll answered `409 superseded poll`.
    public static var supersededPoll: EventMatcher {
        watchAnswer(WatchDirectRules.pollPath).filter { $0.status == 409 }.named("a poll answered 409 (superseded by a second poll)")
    }
}

extension EventMatcher where Output == String {
    /// A Watch request to `path` that reached the Gateway (logged before it is answered: a poll
    /// then waits); the method is the output.
    public static func watchRequest(_ path: String) -> EventMatcher {
        EventMatcher("a request to \(path)") { event in
            guard case .watchRequest(let method, let requestPath) = event, requestPath == path else { return nil }
            return method
        }
    }
}

extension ScenarioRun {
    /// Pairs the client as an Apple Watch: issues a `node` setup code, sends it with the
    /// `watch-pair` stimulus, and waits for the client's first Watch connect to be answered.
    /// - Returns: the first connect's answer (any status: a scenario judges it) and the setup code.
    public func watchPair() async throws -> (connect: WatchExchangeInfo, code: SetupCode) {
        let code = await gateway.makeSetupCode(profile: .nodeOnly)
        let cursor = mark()
        try await client.stimulate(.watchPair(code.encoded))
        let connect = try await waitForEvent(.watchAnswer(WatchDirectRules.connectPath).named("the Watch's first connect"), from: cursor)
        return (connect, code)
    }

    /// ``watchPair()`` that requires the first connect to open a session.
    /// - Returns: the node id of the Watch.
    @discardableResult
    public func watchSession() async throws -> String {
        let (connect, _) = try await watchPair()
        guard connect.status == 200, let nodeId = connect.nodeId else {
            try fail("the Watch's first connect did not open a session", expected: "200 with a session token",
                     actual: connect.summary)
        }
        return nodeId
    }
}
