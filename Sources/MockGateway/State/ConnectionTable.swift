import GatewayProtocol

/// The sockets the Gateway tracks, whether it takes new ones, and the tick schedule: the
/// connection surface's state, and a state machine over it. A socket accepted, a session
/// established, an invalid frame, the clock, a closed socket, a restart and a changed shared
/// secret in; ``GatewayEffect``s out (the challenge, handshake-timeout closes, `tick`,
/// `shutdown` and the restart's closes, the 4001 closes). No clock of its own (inputs carry
/// `nowMs`), no fault plan: the actor feeds inputs and runs the effects
/// (`GatewayCore.handleConnections(_:)`). (Starting up, a fault, is the fault layer's.)
struct ConnectionTable: Sendable {
    /// Every open socket by connection id.
    private(set) var byId: [String: ConnectionState] = [:]
    /// `false` while restarting: new sockets are dropped as a closed port would refuse them.
    private(set) var accepting = true
    /// When the next `tick` is due (ticks go to the sessions of these sockets).
    private(set) var ticks: TickSchedule
    /// How long a socket may take to complete its handshake.
    let handshakeTimeoutMs: Int

    /// A table with no sockets, taking new ones.
    init(ticks: TickSchedule, handshakeTimeoutMs: Int) {
        self.ticks = ticks
        self.handshakeTimeoutMs = handshakeTimeoutMs
    }

    /// What moves the connection table.
    enum Input: Sendable {
        /// A socket was accepted (the caller checked ``accepting``): it is tracked with its
        /// handshake deadline, logged, and gets its `connect.challenge` (`challengeTs`: on the
        /// clients' time line; the challenge carries no `seq`, docs/protocol.md §2.5).
        case opened(ConnectionState, challengeTs: Int, nowMs: Int64)
        /// A connect was admitted on the connection: it holds `session` from now on and has no
        /// handshake deadline any more; the first session (re)starts the tick schedule.
        case established(String, Session, nowMs: Int64)
        /// `hello-ok.pluginSurfaceUrls` gave the connection's session URLs for these surfaces.
        case pluginSurfacesGranted(String, Set<String>)
        /// A frame after `hello-ok` that is not a request was answered (`why`): counted and noted.
        /// The connection stays open (whether the newest Gateway closes after several is
        /// unconfirmed, `GatewayCore.answerInvalidFrame`).
        case invalidFrame(String, why: String)
        /// The clock reached `nowMs`: handshakes past their deadline are closed, a due `tick` goes out.
        case clock(nowMs: Int64)
        /// Ticks resume after a fault held them: the next one is one interval from `nowMs`.
        case ticksResumed(nowMs: Int64)
        /// The socket ended (either side closed it, or TCP dropped): it is forgotten.
        case closed(String)
        /// The Gateway restarts: new sockets are refused, every session gets `shutdown`, every
        /// socket is closed 1012 "service restart".
        case restarting(restartExpectedMs: Int?)
        /// New sockets are taken again (`on`), or refused.
        case accepting(Bool)
        /// The shared secret moved to `generation`: the sessions that depend on an older one are
        /// closed 4001 "gateway auth changed" (upstream `disconnectStaleSharedGatewayAuthClients`,
        /// ws-shared-generation.ts).
        case sharedSecretChanged(generation: Int)
    }

    /// Applies an input.
    mutating func handle(_ input: Input) -> [GatewayEffect] {
        switch input {
        case .opened(var state, let challengeTs, let nowMs):
            state.handshakeDeadlineMs = nowMs + Int64(handshakeTimeoutMs)
            byId[state.id] = state
            // (A fault may strip `ts`: FaultLayer.)
            return [.log(.connectionOpened(connectionId: state.id, remoteAddress: state.remoteAddress, nonce: state.nonce)),
                    .send(.event(ConnectChallenge(nonce: state.nonce, ts: challengeTs).eventFrame), to: state.id)]
        case .established(let connectionId, let session, let nowMs):
            guard byId[connectionId] != nil else { return [] }
            let first = !hasSessions
            byId[connectionId]?.session = session
            byId[connectionId]?.handshakeDeadlineMs = nil
            // The first session starts the tick schedule.
            return first ? ticks.handle(.restart(nowMs: nowMs)) : []
        case .pluginSurfacesGranted(let connectionId, let surfaces):
            byId[connectionId]?.session?.pluginSurfaces = surfaces
            return []
        case .invalidFrame(let connectionId, let why):
            guard byId[connectionId] != nil else { return [] }
            byId[connectionId]?.invalidFrames += 1
            return [.note("invalid frame answered: \(why)", on: connectionId)]
        case .clock(let nowMs):
            // (A fault may hold ticks back: FaultLayer.)
            return expiredHandshakes(nowMs: nowMs) + ticks.handle(.clock(nowMs: nowMs))
        case .ticksResumed(let nowMs):
            return ticks.handle(.restart(nowMs: nowMs))
        case .closed(let connectionId):
            byId.removeValue(forKey: connectionId)
            return []
        case .restarting(let restartExpectedMs):
            accepting = false
            let payload = (try? JSONValue(encoding: ShutdownEvent(restartExpectedMs: restartExpectedMs))) ?? .null
            return [.broadcast(event: GatewayEventName.shutdown.rawValue, payload: payload, stateVersion: nil)]
                + byId.keys.sorted().map { .close($0, code: 1012, reason: "service restart") }
        case .accepting(let on):
            accepting = on
            return []
        case .sharedSecretChanged(let generation):
            return byId.keys.sorted().compactMap { connectionId in
                guard let bound = byId[connectionId]?.session?.sharedAuthGeneration, bound != generation else { return nil }
                return .close(connectionId, code: Int(GatewayCloseCode.gatewayAuthChanged.rawValue), reason: Self.gatewayAuthChangedReason)
            }
        }
    }

    /// The close reason of 4001.
    static let gatewayAuthChangedReason = "gateway auth changed"

    /// The closes of connections whose handshake time ran out at `nowMs`, in connection order.
    /// Protocol-3-era servers closed with 1000 and no reason; the newest close code is
    /// unconfirmed (docs/protocol.md §10.5). 1000 is what clients already handle.
    private func expiredHandshakes(nowMs: Int64) -> [GatewayEffect] {
        byId.sorted { $0.key < $1.key }.compactMap { connectionId, state in
            guard state.session == nil, !state.closing, let deadline = state.handshakeDeadlineMs, deadline <= nowMs else { return nil }
            return .close(connectionId, code: 1000, reason: "")
        }
    }

    // MARK: - Queries

    /// Whether any connection holds a session (ticks run only then).
    var hasSessions: Bool { byId.values.contains { $0.session != nil } }

    /// Whether a connection is there and not closing.
    func isOpen(_ connectionId: String) -> Bool {
        byId[connectionId].map { !$0.closing } ?? false
    }

    /// The earliest deadline of the table after `floor` (when given): the next tick while
    /// `ticking` and a session is open, and each running handshake deadline (a connection already
    /// closing has none any more). Read in place; allocates nothing.
    func nextDeadlineMs(after floor: Int64?, ticking: Bool) -> Int64? {
        var earliest = EarliestDeadline(after: floor)
        if ticking, hasSessions { earliest.consider(ticks.nextTickMs) }
        for state in byId.values where state.session == nil && !state.closing {
            earliest.consider(state.handshakeDeadlineMs)
        }
        return earliest.value
    }

    // MARK: - The effect runner's bookkeeping

    /// Marks a connection closing (the runner queues its close frame or abort on the returned
    /// socket's outbox); `nil` when it is gone or already closing.
    mutating func beginClosing(_ connectionId: String) -> ConnectionState? {
        guard let state = byId[connectionId], !state.closing else { return nil }
        byId[connectionId]?.closing = true
        return state
    }

    /// The next `seq` of a connection's session, counted; `nil` without a session.
    mutating func nextSeq(_ connectionId: String) -> Int? {
        guard let state = byId[connectionId], state.session != nil else { return nil }
        let seq = state.seq + 1
        byId[connectionId]?.seq = seq
        return seq
    }
}

/// The earliest of several deadlines after an optional floor, folded one at a time: what each
/// machine's `nextDeadlineMs(after:)` uses so that the Gateway's timer reads its deadlines in
/// place, without building arrays.
struct EarliestDeadline: Sendable, Hashable {
    /// Deadlines at or before it are not due again (what `processTimers` at `floor` left).
    let floor: Int64?
    /// The earliest deadline considered so far.
    private(set) var value: Int64?

    /// Nothing considered yet.
    init(after floor: Int64?) {
        self.floor = floor
    }

    /// The earliest of the deadlines `deadline` gives `elements` (`nil`: none), without an array.
    static func earliest<Elements: Sequence>(of elements: Elements, _ deadline: (Elements.Element) -> Int64?) -> Int64? {
        var earliest: Int64?
        for element in elements {
            guard let due = deadline(element) else { continue }
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }

    /// Takes `deadline` into account (`nil`: none).
    mutating func consider(_ deadline: Int64?) {
        guard let deadline else { return }
        if let floor, deadline <= floor { return }
        if let current = value, current <= deadline { return }
        value = deadline
    }
}
