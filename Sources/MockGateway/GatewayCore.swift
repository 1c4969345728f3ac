import Foundation
import GatewayProtocol
import WebSocketTransport

/// What the Gateway sends on one socket, in order.
enum OutboundItem: Sendable {
    case message(WebSocketMessage, SendFault?)
    case close(WebSocketCloseCode, String)
    case abort
}

/// An authenticated session on a connection (after `hello-ok`).
struct Session: Sendable {
    var role: String
    var scopes: [String]
    var deviceId: String?
    var publicKey: String?
    var nodeId: String?
    var client: ClientInfo
    var protocolVersion: Int
    var authMethod: String
    /// The device token this session authenticated with (device-token auth), for revocation.
    var deviceToken: String?
    /// The shared-secret generation the session depends on: set when it authenticated with the
    /// shared token or password, or with a device token bound to a generation (upstream
    /// `usesSharedGatewayAuth` / `sharedGatewaySessionGeneration`); such a session is closed
    /// with 4001 "gateway auth changed" when the shared secret changes.
    var sharedAuthGeneration: Int?
    /// The node pairing generation the session was admitted with (see
    /// `GatewayCore.pairingGeneration(deviceId:)`), `nil` when not paired as a node.
    var pairingGeneration: String? = nil
    /// The plugin surfaces `hello-ok.pluginSurfaceUrls` gave this session a URL for (`canvas`),
    /// the ones `node.pluginSurface.refresh` can renew.
    var pluginSurfaces: Set<String> = []

    var isNode: Bool { role == GatewayRole.node.rawValue }
}

/// One socket as the Gateway tracks it.
struct ConnectionState: Sendable {
    let id: String
    let socket: WebSocketConnection
    let outbox: AsyncStream<OutboundItem>.Continuation
    let remoteAddress: String
    /// Whether `remoteAddress` is a loopback address (parsed once, when the socket opens).
    let isLoopback: Bool
    let nonce: String
    var handshakeDeadlineMs: Int64?
    var session: Session?
    var seq = 0
    var closing = false
    var invalidFrames = 0
}

/// How a scripting-API invoke ended.
public enum InvokeOutcome: Sendable, Hashable {
    /// The node answered.
    case result(NodeInvokeResult)
    /// The invoke's `timeoutMs` passed on the Gateway clock without a result.
    case timedOut
    /// The node's socket closed before it answered.
    case nodeDisconnected
}

/// The Gateway's state and every protocol decision's owner. Socket I/O happens outside the
/// actor: inbound messages are handed in by per-connection reader tasks, outbound frames are
/// queued to per-connection writer tasks, so the actor never waits on the network.
actor GatewayCore {
    // One stored value per surface (see docs/architecture.md, "The fake Gateway"): new state
    // goes into the value of its surface (or a new value for a new surface), not here.
    // GatewayCore+State.swift gives the rules short names for the members they use.

    let configuration: GatewayConfiguration
    /// The event log, the transcript and the Gateway's identity.
    let environment: GatewayEnvironment
    /// The core's random stream (connection ids, nonces, invoke ids).
    var random: SeededRandom
    /// The sockets, their sessions, accepting, and the tick schedule.
    var connectionTable: ConnectionTable
    /// The armed faults, and the layer that applies them to what the rules decide.
    var faultLayer: FaultLayer
    /// Pairing, device and bootstrap tokens, the shared secret, rate limits.
    var access: AccessState
    /// Nodes, invokes, pending actions, presence, push.
    var nodeState: NodeState
    /// Approvals, questions, waiters, races, approval subscriptions.
    var operatorSurface: OperatorSurface
    /// The chat store, `session.message` subscriptions and parked `agent.wait`s (a state machine).
    var chat: ChatState
    /// The apps' surfaces and the Apple Watch direct mode.
    var apps: AppsState

    init(configuration: GatewayConfiguration, events: EventLog<GatewayEvent>, transcript: Transcript, identity: DeviceIdentity,
         restoring restored: GatewayPersistentState? = nil, tlsFingerprint: String? = nil) {
        self.configuration = configuration
        var random = SeededRandom(seed: configuration.seed)
        let systemSecrets = configuration.secretsFromSystemRandom
        let pairing: PairingStore
        let bootstrapTokens: BootstrapTokenStore
        if let restored {
            pairing = PairingStore(restoring: restored.pairing, random: SeededRandom(seed: random.next()),
                                   systemSecrets: systemSecrets,
                                   supersessionComparesRole: configuration.profile.supersessionComparesRole,
                                   setupCodeApprovalRequiresMobileClient: configuration.profile.setupCodeApprovalRequiresMobileClient)
            bootstrapTokens = BootstrapTokenStore(restoring: restored.bootstrapTokens, outcomes: restored.setupOutcomes,
                                                  random: SeededRandom(seed: random.next()), systemSecrets: systemSecrets)
        } else {
            pairing = PairingStore(
                random: SeededRandom(seed: random.next()), systemSecrets: systemSecrets,
                supersessionComparesRole: configuration.profile.supersessionComparesRole,
                setupCodeApprovalRequiresMobileClient: configuration.profile.setupCodeApprovalRequiresMobileClient)
            bootstrapTokens = BootstrapTokenStore(random: SeededRandom(seed: random.next()), systemSecrets: systemSecrets)
        }
        self.access = AccessState(pairing: pairing, bootstrapTokens: bootstrapTokens, sharedAuth: configuration.auth,
                                  authRateLimiter: AuthRateLimiter(configuration: configuration.authRateLimit),
                                  rejectRevokesBootstrapTokens: configuration.profile.rejectRevokesBootstrapTokens,
                                  hasSetupCodeLifecycle: configuration.profile.hasSetupCodeLifecycle)
        self.chat = ChatState(profile: configuration.profile)
        self.apps = AppsState(surfaces: nil, watch: WatchGlueState(rateLimit: configuration.authRateLimit))
        self.operatorSurface = OperatorSurface(state: OperatorState(features: OperatorProfileFeatures(profile: configuration.profile),
                                                                    random: SeededRandom(seed: random.next())))
        self.random = random
        // The capability stream is derived from the seed without drawing from `random`.
        self.nodeState = NodeState(capabilityRandom: SeededRandom(seed: configuration.seed ^ 0xCA7A_5CA9_0000_0001),
                                   commandPolicy: configuration.nodeCommands)
        let now = configuration.clock.nowMs
        self.environment = GatewayEnvironment(events: events, transcript: transcript, identity: identity, startedAtMs: now,
                                              generation: restored?.generation ?? 0, tlsFingerprint: tlsFingerprint)
        self.connectionTable = ConnectionTable(ticks: TickSchedule(intervalMs: configuration.tickIntervalMs, nowMs: now),
                                               handshakeTimeoutMs: configuration.handshakeTimeoutMs)
        self.faultLayer = FaultLayer(startingUp: configuration.startingUp,
                                     startingUpRetryAfterMs: configuration.startingUpRetryAfterMs)
    }

    var nowMs: Int64 { clock.nowMs }

    // MARK: - Connection lifecycle

    /// Registers a new socket, sends the challenge and returns the stream its writer drains.
    func open(_ socket: WebSocketConnection) -> (connectionId: String, outbox: AsyncStream<OutboundItem>)? {
        // While restarting, new sockets are dropped as a closed port would refuse them.
        guard connectionTable.accepting else { return nil }
        let (stream, continuation) = AsyncStream<OutboundItem>.makeStream(bufferingPolicy: .unbounded)
        let connectionId = random.uuidString()
        let nonce = random.uuidString()
        let now = nowMs
        socket.setMaxMessageSize(configuration.maxPreauthPayloadBytes, closeReason: "preauth payload too large")
        let state = ConnectionState(
            id: connectionId, socket: socket, outbox: continuation, remoteAddress: socket.remoteAddress,
            isLoopback: (try? IPAddress(parsing: socket.remoteAddress))?.isLoopback ?? false, nonce: nonce)
        // The request target and headers may carry credentials (`?token=`, `Authorization`):
        // they are recorded redacted. The handshake's random key says nothing and would make
        // two runs with the same seed differ.
        let target = transcript.redactor.redact(requestTarget: socket.requestPath)
        var headers: [String: JSONValue] = [:]
        let fields = socket.requestHeaders.fields.filter { $0.name.lowercased() != "sec-websocket-key" }
        for field in transcript.redactor.redact(headers: fields.map { ($0.name, $0.value) }) {
            if let earlier = headers[field.name]?.stringValue {
                headers[field.name] = .string(earlier + ", " + field.value)
            } else {
                headers[field.name] = .string(field.value)
            }
        }
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: now, connectionId: connectionId,
                                          kind: .open, message: ["path": .string(target), "headers": .object(headers)],
                                          text: "\(socket.remoteAddress) \(target)"))
        // The challenge's `ts` is on the clients' time line, against which `signedAt` is judged
        // too: skipping Gateway time (an advance) never makes a client that signs with its own
        // clock look stale.
        handleConnections(.opened(state, challengeTs: Int(clock.peerNowMs), nowMs: now))
        return (connectionId, stream)
    }

    /// A socket ended (either side closed it, or TCP dropped).
    func closed(_ connectionId: String, info: WebSocketCloseInfo) {
        guard let state = connectionTable.byId[connectionId] else { return }
        handleConnections(.closed(connectionId))
        state.outbox.finish()
        faultLayer.forget(connectionId: connectionId)
        nodeState.canvasCapabilities.drop(connectionId: connectionId)
        let code = Int(info.code.rawValue)
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .close, closeCode: code, text: info.reason))
        // The node it carried goes, the invokes sent on it fail, and the wake sequences look
        // again (NodeState+Machine.swift).
        handleNodes(.connectionClosed(connectionId, nowMs: nowMs))
        // Requests parked on this socket (waitAnswer, two-phase exec approvals) have nobody to
        // answer any more.
        handleOperator(.connectionClosed(connectionId))
        handleChat(.connectionClosed(connectionId))
        events.append(.connectionClosed(connectionId: connectionId, code: code, reason: info.reason))
    }

    // MARK: - Broadcasts

    /// The presence list of `hello-ok.snapshot` and `presence` events.
    func presenceEntries() -> [PresenceEntry] {
        nodeState.presenceEntries(nowMs: nowMs)
    }

    func broadcastPresence() {
        perform(nodeState.presenceChanged(nowMs: nowMs))
    }

    // MARK: - Timers

    /// The earliest Gateway-clock instant at which something is due (after `floor`, when given:
    /// what `processTimers` at `floor` left due is not due again). It runs after every frame:
    /// each surface's deadlines are read in place and nothing is copied (the chat store's
    /// `nextDueMs` still maps its scheduled rows to an array).
    func nextDeadlineMs(after floor: Int64? = nil) -> Int64? {
        var earliest = EarliestDeadline(after: floor)
        earliest.consider(connectionTable.nextDeadlineMs(after: floor, ticking: !faultLayer.holdsTicks))
        earliest.consider(nodeState.nextDeadlineMs(after: floor))
        earliest.consider(access.pairing.nextExpiryMs)
        earliest.consider(operatorSurface.nextDeadlineMs(after: floor))
        earliest.consider(chat.nextDeadlineMs)
        earliest.consider(apps.watch.machine.nextDeadlineMs)
        return earliest.value
    }

    /// Runs everything that is due at the current Gateway time.
    func processTimers() {
        let now = nowMs
        handleConnections(.clock(nowMs: now))
        handleNodes(.clock(nowMs: now))
        handleAccess(.clock(nowMs: now))
        expireOperatorRecords(nowMs: now)
        handleChat(.clock(nowMs: now))
        handleWatch(.clock(nowMs: now))
        handleNodes(.advanceWakes(nowMs: now))
    }

    // MARK: - Invokes

    /// Completes whoever waits for an invoke (`queued`: the foreground action the refusal queued;
    /// ``NodeState/finishInvoke(_:outcome:queued:nowMs:)``).
    func finishInvoke(_ id: String, with outcome: InvokeOutcome, queued: PendingNodeAction? = nil) {
        perform(nodeState.finishInvoke(id, outcome: outcome, queued: queued, nowMs: nowMs))
    }

    /// Fails the invokes sent on a connection (``NodeState/failInvokes(onConnection:nowMs:)``).
    func failInvokes(onConnection connectionId: String) {
        perform(nodeState.failInvokes(onConnection: connectionId, nowMs: nowMs))
    }

    /// Moves the connection table (``ConnectionTable/handle(_:)``) and runs its effects.
    func handleConnections(_ input: ConnectionTable.Input) {
        perform(connectionTable.handle(input))
    }

    /// Moves nodes and invokes (``NodeState/handle(_:ids:)``, ids from the core's stream) and
    /// runs its effects.
    func handleNodes(_ input: NodeState.Input) {
        perform(nodeState.handle(input, ids: &random))
    }
}

extension Frame {
    /// The event name, for event frames.
    var eventName: String? {
        if case .event(let event) = self { event.event } else { nil }
    }
}

extension GatewayCore {
    /// Writes the durable state to the state directory when it changed; a failure is reported
    /// once as `state.saveFailed` (the Gateway keeps serving from memory).
    func persistState() {
        guard let store = configuration.stateStore else { return }
        let state = GatewayPersistentState(identitySeed: configuration.identitySeed, generation: generation,
                                           pairing: pairingStore.durableState, bootstrapTokens: bootstrapTokens.records,
                                           setupOutcomes: bootstrapTokens.setupOutcomes)
        do {
            try store.save(state)
            lastSaveFailure = nil
        } catch {
            guard lastSaveFailure != error.description else { return }
            lastSaveFailure = error.description
            events.append(.stateSaveFailed(message: error.description))
        }
    }
}
