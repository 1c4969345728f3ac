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
}

extension ClientObservation: CustomStringConvertible {
    /// The observation as one client-log line, e.g. `connected(role: "node", generation: 1)` or
    /// `ended(role: "node", end: ended with close 1006, decision: ReferenceNode.ReconnectDecision.retry(afterMs: 522))`.
    ///
    /// Written out, character for character, as Swift's default (reflection-based) formatting
    /// of the enum prints it: strings quoted and escaped as `debugDescription` does, optionals
    /// as `Optional(…)` or `nil`, the reconnect decision with its qualified type name. Client
    /// logs and transcripts keep their text; the reflection was a measurable share of a
    /// conformance run.
    public var description: String {
        switch self {
        case .attemptStarted(let role): "attemptStarted(role: \(Self.quoted(role)))"
        case .connected(let role, let generation): "connected(role: \(Self.quoted(role)), generation: \(generation))"
        case .ended(let role, let end, let decision):
            "ended(role: \(Self.quoted(role)), end: \(end), decision: \(Self.describe(decision)))"
        case .pairingPending(let role, let requestId):
            "pairingPending(role: \(Self.quoted(role)), requestId: \(Self.quoted(requestId)))"
        case .invokeAnswered(let id, let ok): "invokeAnswered(id: \(Self.quoted(id)), ok: \(ok))"
        case .invokeDiscarded(let id, let reason): "invokeDiscarded(id: \(Self.quoted(id)), reason: \(Self.quoted(reason)))"
        case .beaconSent(let trigger): "beaconSent(trigger: \(Self.quoted(trigger)))"
        case .beaconReplied(let durable, let reason): "beaconReplied(durable: \(durable), reason: \(Self.quoted(reason)))"
        case .beaconSkipped: "beaconSkipped"
        case .pushRegistered(let transport, let gatewayDeviceId):
            "pushRegistered(transport: \(Self.quoted(transport)), gatewayDeviceId: \(Self.quoted(gatewayDeviceId)))"
        case .approvalChanged(let id): "approvalChanged(id: \(Self.quoted(id)))"
        case .approvalReadBack(let id): "approvalReadBack(id: \(Self.quoted(id)))"
        case .questionChanged(let id): "questionChanged(id: \(Self.quoted(id)))"
        case .questionsReloaded: "questionsReloaded"
        case .seqGap(let role): "seqGap(role: \(Self.quoted(role)))"
        case .chatChanged(let what): "chatChanged(\(Self.quoted(what)))"
        }
    }

    private static func quoted(_ text: String) -> String { text.debugDescription }

    private static func quoted(_ text: String?) -> String { text.map { "Optional(\($0.debugDescription))" } ?? "nil" }

    /// As `debugPrint` shows a ``ReconnectDecision`` (which has no description of its own).
    private static func describe(_ decision: ReconnectDecision) -> String {
        let type = "ReferenceNode.ReconnectDecision"
        return switch decision {
        case .retry(let afterMs): "\(type).retry(afterMs: \(afterMs))"
        case .pairingWait(let afterMs, let requestId): "\(type).pairingWait(afterMs: \(afterMs), requestId: \(quoted(requestId)))"
        case .pause(let reason): "\(type).pause(reason: \(quoted(reason)))"
        case .idle: "\(type).idle"
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
