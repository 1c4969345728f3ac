import Conformance
import GatewayProtocol
import MockGateway

/// Reconnect-rate steps of the pairing and lifecycle scenarios (docs/protocol.md §11.3). The
/// general steps (sessions, connects, pairing requests, approvals) are `ScenarioRun` API in
/// `Conformance`.
enum PairingSteps {
    /// Counts the client's connection attempts in each second of the run's time, by the role of
    /// their `connect` (`?` for a connection that sent none). This is a rule about time: the run
    /// lets `seconds` pass (virtual time in a simulated run, real time otherwise).
    /// - Parameters:
    ///   - seconds: how many seconds to watch.
    ///   - eachSecond: runs at the start of every second (for example to reject new requests).
    static func attemptsPerSecond(
        _ run: ScenarioRun, seconds: Int, eachSecond: () async -> Void = {}
    ) async -> [[String: Int]] {
        var starts: [Int] = []
        for _ in 0..<seconds {
            await eachSecond()
            starts.append(run.mark().position)
            await run.elapse(.seconds(1))
        }
        starts.append(run.mark().position)
        let log = run.events()
        var roles: [String: String] = [:]
        for connect in run.connects() { roles[connect.connectionId] = connect.role }
        return (0..<seconds).map { index in
            var bin: [String: Int] = [:]
            for event in log[starts[index]..<starts[index + 1]] {
                if case .connectionOpened(let id, _, _) = event { bin[roles[id] ?? "?", default: 0] += 1 }
            }
            return bin
        }
    }

    /// Requires at most two attempts per second per role in every bin of `bins`, and a backoff
    /// or pause: at most `atMost` attempts over all bins when given, otherwise no more attempts
    /// in the second half of the window than in the first.
    static func checkRate(_ run: ScenarioRun, _ bins: [[String: Int]], atMost: Int? = nil, while situation: String) throws {
        let roles = Set(bins.flatMap(\.keys)).sorted()
        for role in roles {
            let counts = bins.map { $0[role] ?? 0 }
            let table = counts.map(String.init).joined(separator: " ")
            if let worst = counts.max(), worst > 2 {
                try run.fail("the \(role) session reconnects more than twice per second \(situation)",
                             expected: "at most 2 connection attempts in every second",
                             actual: "\(worst) in one second; attempts per second: \(table)")
            }
            let half = counts.count / 2
            if let total = atMost {
                // A total over a long window decides with certainty where comparing two halves
                // depends on the phase of a steady retry against the seconds counted.
                let sum = counts.reduce(0, +)
                try run.expect(sum <= total, "the \(role) session does not back off or pause \(situation)",
                               expected: "at most \(total) connection attempts in \(counts.count) s",
                               actual: "\(sum); attempts per second: \(table)")
                continue
            }
            let early = counts.prefix(half).reduce(0, +)
            let late = counts.dropFirst(half).reduce(0, +)
            try run.expect(late <= early, "the \(role) session does not back off or pause \(situation)",
                           expected: "no more attempts in the last \(counts.count - half) s than in the first \(half) s",
                           actual: "\(early) then \(late); attempts per second: \(table)")
        }
    }
}
