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
