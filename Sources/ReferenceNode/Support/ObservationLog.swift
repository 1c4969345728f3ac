import GatewayProtocol
import Simulation

/// Something the reference client did, recorded so that tests and tools can wait for it (with
/// a deadline) instead of sleeping.
public enum ClientObservation: Sendable, Hashable {
    /// A session of `role` starts a connect attempt.
    case attemptStarted(role: String)
    /// A session of `role` received `hello-ok` (connection `generation`).
    case connected(role: String, generation: Int)
    /// A session of `role` ended an attempt or session and decided what to do next.
    case ended(role: String, end: ConnectionEnd, decision: ReconnectDecision)
    /// The Gateway asked for pairing approval of `requestId`.
    case pairingPending(role: String, requestId: String?)
    /// A `node.invoke.result` was sent for `id`.
    case invokeAnswered(id: String, ok: Bool)
    /// A result for `id` was not sent (`reason`: for example its socket is gone).
    case invokeDiscarded(id: String, reason: String)
    /// A presence beacon was sent with `trigger`.
    case beaconSent(trigger: String)
    /// The reply to a beacon arrived; `durable` says whether it counts as recorded.
    case beaconReplied(durable: Bool, reason: String?)
    /// A background wake skipped the beacon (a durable one is recent).
    case beaconSkipped
    /// `push.apns.register` was sent with `gatewayDeviceId`.
    case pushRegistered(transport: String, gatewayDeviceId: String?)
    /// An approval card changed.
    case approvalChanged(id: String)
    /// A read-back of approval `id` was made.
    case approvalReadBack(id: String)
    /// A question card changed.
    case questionChanged(id: String)
    /// Pending questions were reloaded (`question.list`).
    case questionsReloaded
    /// An event `seq` skipped numbers (tolerated).
    case seqGap(role: String)
    /// The chat view changed: an outbox message or the transcript (`what` says how).
    case chatChanged(String)
    /// `canvas.present` loaded the canvas page: the last status (`nil`: no answer), and whether
    /// the URL was refreshed after a 401.
    case canvasLoaded(status: Int?, refreshed: Bool)
    /// The Files view changed: a folder page or a preview (`what` says how).
    case workspaceChanged(String)
    /// The voice wake settings show `triggers` now.
    case voiceWakeChanged(triggers: [String])
    /// The session list shows `keys` now.
    case sessionListChanged(keys: [String])
}

extension ClientObservation: CustomStringConvertible {
    /// The observation as one client-log line: its name, then `key=value` fields, e.g.
    /// `connected role=node generation=1` or
    /// `ended role=node end="ended with close 1006" decision="retry after 522 ms"`.
    ///
    /// A value is written bare when it is a non-empty run of letters, digits and `._:/@-`, and
    /// otherwise quoted and escaped as a Swift string literal, so that one line is always one
    /// observation whatever a Gateway or a client sent; an absent optional is left out.
    public var description: String {
        switch self {
        case .attemptStarted(let role): Self.line("attemptStarted", ("role", role))
        case .connected(let role, let generation): Self.line("connected", ("role", role), ("generation", "\(generation)"))
        case .ended(let role, let end, let decision):
            Self.line("ended", ("role", role), ("end", "\(end)"), ("decision", Self.describe(decision)))
        case .pairingPending(let role, let requestId): Self.line("pairingPending", ("role", role), ("requestId", requestId))
        case .invokeAnswered(let id, let ok): Self.line("invokeAnswered", ("id", id), ("ok", "\(ok)"))
        case .invokeDiscarded(let id, let reason): Self.line("invokeDiscarded", ("id", id), ("reason", reason))
        case .beaconSent(let trigger): Self.line("beaconSent", ("trigger", trigger))
        case .beaconReplied(let durable, let reason): Self.line("beaconReplied", ("durable", "\(durable)"), ("reason", reason))
        case .beaconSkipped: "beaconSkipped"
        case .pushRegistered(let transport, let gatewayDeviceId):
            Self.line("pushRegistered", ("transport", transport), ("gatewayDeviceId", gatewayDeviceId))
        case .approvalChanged(let id): Self.line("approvalChanged", ("id", id))
        case .approvalReadBack(let id): Self.line("approvalReadBack", ("id", id))
        case .questionChanged(let id): Self.line("questionChanged", ("id", id))
        case .questionsReloaded: "questionsReloaded"
        case .seqGap(let role): Self.line("seqGap", ("role", role))
        case .chatChanged(let what): Self.line("chatChanged", ("what", what))
        case .canvasLoaded(let status, let refreshed):
            Self.line("canvasLoaded", ("status", status.map(String.init) ?? "none"), ("refreshed", "\(refreshed)"))
        case .workspaceChanged(let what): Self.line("workspaceChanged", ("what", what))
        case .voiceWakeChanged(let triggers):
            Self.line("voiceWakeChanged", ("triggers", JSONValue.array(triggers.map(JSONValue.string)).jsonString))
        case .sessionListChanged(let keys):
            Self.line("sessionListChanged", ("keys", JSONValue.array(keys.map(JSONValue.string)).jsonString))
        }
    }

    /// `name key=value ...`, leaving out absent values.
    private static func line(_ name: String, _ fields: (String, String?)...) -> String {
        fields.reduce(into: name) { line, field in
            if let value = field.1 { line += " \(field.0)=\(Self.value(value))" }
        }
    }

    /// `text` bare when it is a plain token, else quoted and escaped.
    private static func value(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._:/@-".unicodeScalars.contains(scalar))
        }
        return plain ? text : text.debugDescription
    }

    /// A reconnect decision in words.
    private static func describe(_ decision: ReconnectDecision) -> String {
        switch decision {
        case .retry(let afterMs): "retry after \(afterMs) ms"
        case .pairingWait(let afterMs, let requestId):
            "wait for pairing, retry after \(afterMs) ms" + (requestId.map { " (request \($0))" } ?? "")
        case .pause(let reason): reason.isEmpty ? "pause" : "pause: \(reason)"
        case .idle: "idle"
        }
    }
}

/// An append-only list of observations with deadline-bounded waiting (the project's one wait
/// primitive, `EventLog`, holding ``ClientObservation`` values).
public final class ObservationLog: Sendable {
    private let log = EventLog<ClientObservation>()

    init() {}

    /// Every observation so far.
    public var all: [ClientObservation] { log.all }

    /// The number of observations so far (a cursor for ``first(from:timeout:on:where:)``).
    public var count: Int { log.count }

    func append(_ observation: ClientObservation) { log.append(observation) }

    /// The first observation at or after `cursor` that `predicate` accepts, waiting up to
    /// `timeout` for it.
    /// - Parameters:
    ///   - cursor: where to start looking.
    ///   - timeout: how long to wait on `timeline`.
    ///   - timeline: real time by default; a simulated run's virtual time when the client runs in one.
    ///   - predicate: which observation is wanted.
    /// - Returns: the observation, or `nil` on timeout or cancellation.
    public func first(from cursor: Int = 0, timeout: Duration, on timeline: any Timeline = WallTimeline(),
                      where predicate: @escaping @Sendable (ClientObservation) -> Bool) async -> ClientObservation? {
        await log.first(from: cursor, timeout: timeout, on: timeline, where: predicate)?.element
    }
}
