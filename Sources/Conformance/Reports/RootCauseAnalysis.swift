import GatewayProtocol
import MockGateway

/// Finds the first cause of a failed run in what the Gateway saw: whether the client ever
/// connected, whether its connects were refused (and with which detail code), whether it closed
/// its connections before `connect`, whether its connects after a session were refused while a
/// step waited; otherwise the failing step's own message.
///
/// Pure: it reads a list of `GatewayEvent`s (the run's Gateways' event logs, in order) and the
/// failure, and returns a `RootCause` whose key is stable across runs, so that the 42 failures
/// of a client whose connects are all refused with the same code form one group.
public enum RootCauseAnalysis {
    /// What the run reported.
    public struct Failure: Sendable, Hashable {
        /// The failure message.
        public var message: String
        /// The verdict. An `error` (the harness, the environment or the client process broke) is
        /// its own cause: its message is used whatever the Gateway saw.
        public var verdict: Verdict

        /// Creates a failure description.
        public init(message: String, verdict: Verdict = .fail) {
            self.message = message
            self.verdict = verdict
        }
    }

    /// One client connection as the Gateway saw it.
    struct Connection: Sendable, Hashable {
        var id: String
        var role: String?
        var sentSomething = false
        var sentConnect = false
        var refusal: String?
        var hadSession = false
        var closeCode: Int?
        var closeReason = ""
    }

    /// What the event log says about the client's connections.
    struct Activity {
        /// In the order they opened.
        var connections: [Connection] = []
        /// Refusal codes in the order they happened, with the connection's index.
        var refusals: [(index: Int, code: String)] = []
        /// The index of the connection whose session opened last, if any.
        var lastSessionIndex: Int?

        init(_ events: [GatewayEvent]) {
            var index: [String: Int] = [:]
            for event in events {
                switch event {
                case .connectionOpened(let id, _, _):
                    index[id] = connections.count
                    connections.append(Connection(id: id))
                case .frameIn(let id, let frame, _):
                    guard let position = index[id] else { continue }
                    connections[position].sentSomething = true
                    if case .request(let request)? = frame, request.method == GatewayMethod.connect.rawValue,
                       !connections[position].sentConnect {
                        connections[position].sentConnect = true
                        connections[position].role = request.params?["role"]?.stringValue
                    }
                case .handshakeRejected(let id, let error, _):
                    guard let position = index[id] else { continue }
                    let code = error.detailCode ?? error.code
                    connections[position].refusal = code
                    refusals.append((position, code))
                case .sessionOpened(let info):
                    guard let position = index[info.connectionId] else { continue }
                    connections[position].hadSession = true
                    if connections[position].role == nil { connections[position].role = info.role.rawValue }
                    lastSessionIndex = position
                case .connectionClosed(let id, let code, let reason):
                    guard let position = index[id] else { continue }
                    connections[position].closeCode = code
                    connections[position].closeReason = reason
                default:
                    continue
                }
            }
        }
    }

    /// The root cause of a failure.
    /// - Parameters:
    ///   - events: the event logs of the run's Gateways, each in order.
    ///   - failure: what the run reported.
    /// - Returns: the cause; runs with equal keys share it.
    public static func cause(events: [GatewayEvent], failure: Failure) -> RootCause {
        guard failure.verdict != .error else { return stepCause(failure.message) }
        let activity = Activity(events)
        let connections = activity.connections
        if connections.isEmpty {
            return RootCause(key: "no-connection", summary: "the client never connected to the Gateway")
        }
        if activity.lastSessionIndex == nil {
            if let code = dominantCode(activity.refusals.map(\.code)) {
                return RootCause(key: "connect-refused:\(code)",
                                 summary: "the client never got a session; its connects were refused with \(code)")
            }
            if connections.contains(where: { !$0.sentSomething && $0.closeCode != nil }) {
                return RootCause(key: "closed-before-connect",
                                 summary: "the client never got a session; its connections closed before it sent connect")
            }
            if connections.contains(where: { $0.sentSomething && !$0.sentConnect }) {
                return RootCause(key: "no-connect-frame",
                                 summary: "the client never got a session; its first frame was not a connect request")
            }
            return RootCause(key: "no-connect-sent",
                             summary: "the client never got a session; it opened a connection but never sent connect")
        }
        if isWaitTimeout(failure.message), let sessionIndex = activity.lastSessionIndex {
            let later = activity.refusals.filter { $0.index > sessionIndex }
            if let code = dominantCode(later.map(\.code)), let last = later.last(where: { $0.code == code }) {
                let role = connections[last.index].role.map { "\($0) " } ?? ""
                return RootCause(key: "later-connects-refused:\(role)\(code)",
                                 summary: "after its last session the client's \(role)connects were refused with \(code)")
            }
        }
        return stepCause(failure.message)
    }

    /// The failing step's message as the cause.
    static func stepCause(_ text: String) -> RootCause {
        let message = text.isEmpty ? "the run failed without a message" : text
        return RootCause(key: "step:" + normalizedKey(message), summary: message)
    }

    /// The last thing the Gateway saw from the client, as a clause for a failure message
    /// (`its node connect was refused with NOT_PAIRED and the connection closed with 1008`), or
    /// `nil` when the client never connected.
    public static func lastClientActivity(in events: [GatewayEvent]) -> String? {
        var lastFrame: (connection: String, frame: Frame?)?
        var lastOpen: String?
        for event in events {
            switch event {
            case .frameIn(let id, let frame, _): lastFrame = (id, frame)
            case .connectionOpened(let id, _, _): lastOpen = id
            default: continue
            }
        }
        let activity = Activity(events)
        guard let lastOpenId = lastOpen,
              let opened = activity.connections.firstIndex(where: { $0.id == lastOpenId }) else { return nil }
        let number = { (index: Int) in "connection \(index + 1) of \(activity.connections.count)" }
        func ending(_ connection: Connection) -> String {
            guard let code = connection.closeCode else { return "" }
            let reason = connection.closeReason.isEmpty ? "" : " \"\(connection.closeReason)\""
            return " and the connection closed with \(code)\(reason)"
        }
        if let (connectionId, frame) = lastFrame,
           let index = activity.connections.firstIndex(where: { $0.id == connectionId }), index >= opened {
            let connection = activity.connections[index]
            switch frame {
            case .request(let request)? where request.method == GatewayMethod.connect.rawValue:
                let what = withArticle((connection.role.map { "\($0) " } ?? "") + "connect")
                if let refusal = connection.refusal {
                    return "\(what) on \(number(index)), refused with \(refusal)\(ending(connection))"
                }
                if connection.hadSession { return "\(what) on \(number(index)), which opened a session\(ending(connection))" }
                return "\(what) on \(number(index)), not answered yet\(ending(connection))"
            case .request(let request)?:
                return "\(withArticle(request.method)) request on \(number(index))\(ending(connection))"
            case .response(let response)?:
                return "a response to \(response.id) on \(number(index))\(ending(connection))"
            case .event(let event)?:
                return "\(withArticle(event.event)) event on \(number(index))\(ending(connection))"
            case .cancel?:
                return "a cancel frame on \(number(index))\(ending(connection))"
            case nil:
                return "a message that is not a valid frame on \(number(index))\(ending(connection))"
            }
        }
        let connection = activity.connections[opened]
        return "\(number(opened)), which sent nothing\(ending(connection))"
    }

    /// The refusal code that names the cause: the most frequent one, ties going to the one seen
    /// last. `UNAVAILABLE` (the Gateway was starting up, the client did nothing wrong) counts only
    /// when nothing else refused the client.
    static func dominantCode(_ codes: [String]) -> String? {
        let blamed = codes.filter { $0 != ErrorCode.unavailable.rawValue }
        let considered = blamed.isEmpty ? codes : blamed
        var counts: [String: Int] = [:]
        var lastSeen: [String: Int] = [:]
        for (position, code) in considered.enumerated() {
            counts[code, default: 0] += 1
            lastSeen[code] = position
        }
        return counts.keys.max { lhs, rhs in
            let left = counts[lhs] ?? 0, right = counts[rhs] ?? 0
            return left != right ? left < right : (lastSeen[lhs] ?? 0) < (lastSeen[rhs] ?? 0)
        }
    }

    /// `a node connect`, `an operator connect`.
    static func withArticle(_ phrase: String) -> String {
        let vowel = phrase.first.map { "aeiouAEIOU".contains($0) } ?? false
        return (vowel ? "an " : "a ") + phrase
    }

    /// Whether a message is a step that timed out waiting for something.
    static func isWaitTimeout(_ message: String) -> Bool {
        message.hasPrefix("timed out waiting") || message.hasPrefix("no reply to stimulus")
            || message.contains("never came: nothing more can happen")
    }

    /// `message` with the parts that differ between runs of the same cause (numbers, ids,
    /// hex strings, quoted values) replaced, so that equal causes get equal keys.
    static func normalizedKey(_ message: String) -> String {
        var out = ""
        var token = ""
        func flush() {
            guard !token.isEmpty else { return }
            let hasDigit = token.contains { $0.isNumber }
            let isHex = token.count >= 8 && token.allSatisfy { $0.isHexDigit || $0 == "-" }
            out += hasDigit || isHex ? "#" : token
            token = ""
        }
        for character in message {
            if character.isLetter || character.isNumber || character == "-" || character == "_" {
                token.append(character)
            } else {
                flush()
                out.append(character)
            }
        }
        flush()
        return out
    }
}
