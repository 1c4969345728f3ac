import Conformance
import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// `RootCauseAnalysis` on hand-made event logs, and the grouping of causes in a report.
@Suite struct RootCauseTests {
    /// Builds the events of one client connection.
    struct Log {
        var events: [GatewayEvent] = []

        mutating func open(_ id: String) {
            events.append(.connectionOpened(connectionId: id, remoteAddress: "127.0.0.1", nonce: "n-\(id)"))
        }

        mutating func connect(_ id: String, role: String = "node") {
            let request = RequestFrame(id: "r-\(id)", method: "connect", params: ["role": .string(role)])
            events.append(.frameIn(connectionId: id, frame: .request(request), binary: false))
        }

        mutating func refuse(_ id: String, code: String = "INVALID_REQUEST", detail: String?, close: Int = 1008) {
            let details: JSONValue? = detail.map { ["code": .string($0)] }
            events.append(.handshakeRejected(connectionId: id, error: ErrorShape(code: code, message: "no", details: details),
                                             closeCode: close))
            events.append(.connectionClosed(connectionId: id, code: close, reason: "refused"))
        }

        mutating func session(_ id: String, role: GatewayRole = .node) {
            events.append(.sessionOpened(SessionInfo(
                connectionId: id, role: role, scopes: [], deviceId: "d", clientId: "c", clientMode: "node",
                protocolVersion: 4, authMethod: "none", signatureVersion: "v3", presentedToken: nil, issuedDeviceToken: nil)))
        }

        mutating func close(_ id: String, code: Int = 1000, reason: String = "") {
            events.append(.connectionClosed(connectionId: id, code: code, reason: reason))
        }
    }

    static func cause(_ log: Log, _ message: String = "timed out waiting for the client's node session",
                      verdict: Verdict = .fail) -> RootCause {
        RootCauseAnalysis.cause(events: log.events, failure: .init(message: message, verdict: verdict))
    }

    @Test func noConnectionAtAll() {
        let cause = Self.cause(Log())
        #expect(cause == RootCause(key: "no-connection", summary: "the client never connected to the Gateway"))
        #expect(RootCauseAnalysis.lastClientActivity(in: []) == nil)
    }

    @Test func everyConnectRefusedWithTheSameDetailCode() {
        var log = Log()
        for id in ["a", "b", "c"] {
            log.open(id)
            log.connect(id)
            log.refuse(id, detail: "DEVICE_AUTH_NONCE_REQUIRED")
        }
        let cause = Self.cause(log)
        #expect(cause.key == "connect-refused:DEVICE_AUTH_NONCE_REQUIRED")
        #expect(cause.summary == "the client never got a session; its connects were refused with DEVICE_AUTH_NONCE_REQUIRED")
        // The same whatever the failing step said: the cause comes first.
        #expect(Self.cause(log, "device.id is the lowercase hex SHA-256 of the raw public key") == cause)
        #expect(RootCauseAnalysis.lastClientActivity(in: log.events)
            == "a node connect on connection 3 of 3, refused with DEVICE_AUTH_NONCE_REQUIRED and the connection closed with 1008 \"refused\"")
    }

    @Test func aRefusalWithoutDetailsIsNamedByItsCode() {
        var log = Log()
        log.open("a")
        log.connect("a")
        log.refuse("a", code: "UNAVAILABLE", detail: nil, close: 1013)
        #expect(Self.cause(log).key == "connect-refused:UNAVAILABLE")
    }

    @Test func theMostFrequentRefusalNamesTheCauseAndStartUpCountsLeast() {
        var log = Log()
        func attempt(_ id: String, _ code: String, _ detail: String?) {
            log.open(id)
            log.connect(id)
            log.refuse(id, code: code, detail: detail)
        }
        for id in ["u1", "u2", "u3"] { attempt(id, "UNAVAILABLE", nil) }
        attempt("a", "INVALID_REQUEST", "DEVICE_AUTH_DEVICE_ID_MISMATCH")
        attempt("b", "UNAUTHORIZED", "AUTH_TOKEN_MISSING")
        attempt("c", "INVALID_REQUEST", "DEVICE_AUTH_DEVICE_ID_MISMATCH")
        // Starting up is the Gateway's doing; of the rest the mismatch is the most frequent.
        #expect(Self.cause(log).key == "connect-refused:DEVICE_AUTH_DEVICE_ID_MISMATCH")
        // A tie goes to the refusal seen last.
        attempt("d", "UNAUTHORIZED", "AUTH_TOKEN_MISSING")
        #expect(Self.cause(log).key == "connect-refused:AUTH_TOKEN_MISSING")
    }

    @Test func connectionsClosedBeforeConnect() {
        var log = Log()
        log.open("a")
        log.close("a", code: 1001)
        log.open("b")
        log.close("b", code: 1001)
        let cause = Self.cause(log)
        #expect(cause.key == "closed-before-connect")
        #expect(cause.summary == "the client never got a session; its connections closed before it sent connect")
        #expect(RootCauseAnalysis.lastClientActivity(in: log.events)
            == "connection 2 of 2, which sent nothing and the connection closed with 1001")
    }

    @Test func aConnectionThatNeverSpeaks() {
        var log = Log()
        log.open("a")
        #expect(Self.cause(log).key == "no-connect-sent")
    }

    @Test func aFirstFrameThatIsNotConnect() {
        var log = Log()
        log.open("a")
        log.events.append(.frameIn(connectionId: "a", frame: nil, binary: false))
        #expect(Self.cause(log).key == "no-connect-frame")
        #expect(RootCauseAnalysis.lastClientActivity(in: log.events) == "a message that is not a valid frame on connection 1 of 1")
    }

    @Test func refusedReconnectsAfterASessionExplainAWaitThatTimedOut() {
        var log = Log()
        log.open("a")
        log.connect("a")
        log.session("a")
        log.close("a", code: 1012, reason: "service restart")
        log.open("b")
        log.connect("b")
        log.refuse("b", code: "UNAUTHORIZED", detail: "AUTH_DEVICE_TOKEN_MISMATCH")
        let cause = Self.cause(log)
        #expect(cause.key == "later-connects-refused:node AUTH_DEVICE_TOKEN_MISMATCH")
        #expect(cause.summary == "after its last session the client's node connects were refused with AUTH_DEVICE_TOKEN_MISMATCH")
        // A wait that nothing could satisfy any more counts as a wait too.
        #expect(Self.cause(log, "the client's node session never came: nothing more can happen in the run") == cause)
        // A check that did not time out keeps its own message.
        #expect(Self.cause(log, "the client sent two results").key == "step:the client sent two results")
    }

    @Test func afterASessionTheFailingStepIsTheCause() {
        var log = Log()
        log.open("a")
        log.connect("a")
        log.session("a")
        let request = RequestFrame(id: "1", method: "node.event", params: nil)
        log.events.append(.frameIn(connectionId: "a", frame: .request(request), binary: false))
        let cause = Self.cause(log, "expected 1 beacon within 3000 ms, got 2 (seq 41, 42)")
        #expect(cause.key == "step:expected # beacon within # ms, got # (seq #, #)")
        #expect(cause.summary == "expected 1 beacon within 3000 ms, got 2 (seq 41, 42)")
        #expect(RootCauseAnalysis.lastClientActivity(in: log.events) == "a node.event request on connection 1 of 1")
    }

    @Test func aHarnessErrorIsItsOwnCause() {
        let cause = Self.cause(Log(), "the client process exited with status 127", verdict: .error)
        #expect(cause.key == "step:the client process exited with status #")
    }

    @Test func keysIgnoreIdsAndNumbersButNotWords() {
        var log = Log()
        log.open("a")
        log.connect("a")
        log.session("a")
        let one = Self.cause(log, "request 1c4b63d3-aaaa-bbbb-cccc-0123456789ab was not resolved after 901 s")
        let two = Self.cause(log, "request 99999999-0000-1111-2222-333333333333 was not resolved after 5 s")
        let other = Self.cause(log, "request 99999999-0000-1111-2222-333333333333 was resolved twice")
        #expect(one.key == two.key)
        #expect(one.key != other.key)
    }

    @Test func reportsGroupRunsByKeyLargestFirst() {
        func result(_ id: String, _ profile: String, _ cause: RootCause?) -> RunResult {
            RunResult(id: id, title: "t", area: "HS", level: .must, requirement: "r", source: "s", profile: profile,
                      verdict: cause == nil ? .pass : .fail, message: cause?.summary ?? "", seed: 1, baseSeed: 1, durationMs: 0,
                      rootCause: cause)
        }
        let refused = RootCause(key: "connect-refused:X", summary: "refused with X")
        let other = RootCause(key: "step:y", summary: "y")
        let report = RunReport(seed: 1, slowness: 1, strict: false, client: "c", transcriptDirectory: nil, results: [
            result("HS-001", "current", other), result("HS-002", "current", nil), result("HS-004", "current", refused),
            result("HS-004", "legacy", refused),
        ])
        let groups = report.rootCauseGroups
        #expect(groups.map(\.cause.key) == ["connect-refused:X", "step:y"])
        #expect(groups.first?.runKeys == ["HS-004@current", "HS-004@legacy"])
        #expect(groups.first?.sentence == "2 runs: refused with X (first in HS-004 [current])")
        #expect(groups.last?.sentence == "1 run: y (first in HS-001 [current])")

        let terminal = TerminalReporter(color: false).render(report)
        #expect(terminal.contains("Root causes:\n  2 runs: refused with X (first in HS-004 [current])\n    HS-004 [current], HS-004 [legacy]\n"))
        #expect(terminal.contains("root cause:  refused with X (2 runs)"))
        let json = JSONReporter().value(report)
        let causes = json["rootCauses"]?.arrayValue ?? []
        #expect(causes.first?["key"] == "connect-refused:X")
        #expect(causes.first?["count"] == 2)
        #expect(causes.first?["runs"] == ["HS-004@current", "HS-004@legacy"])
        let runs = json["runs"]?.arrayValue ?? []
        #expect(runs.count == 4)
        #expect(runs.dropFirst(2).first?["rootCause"]?["summary"] == "refused with X")
        #expect(runs.dropFirst().first?["rootCause"] == .null)
        let junit = JUnitReporter().render(report)
        #expect(junit.contains("root cause: 2 runs: refused with X (first in HS-004 [current])"))
    }
}

extension RootCauseTests {
    @Test func theLastActivityReadsAsEnglish() {
        var log = Log()
        log.open("a")
        log.connect("a", role: "operator")
        log.session("a", role: "operator")
        #expect(RootCauseAnalysis.lastClientActivity(in: log.events) == "an operator connect on connection 1 of 1, which opened a session")
        log.open("b")
        #expect(RootCauseAnalysis.lastClientActivity(in: log.events) == "connection 2 of 2, which sent nothing")
    }
}
