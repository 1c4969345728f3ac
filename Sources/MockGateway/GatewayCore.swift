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
    /// Numbers to skip before this connection's next `seq` (a one-off gap, `skipSequenceNumbers`).
    var pendingSeqSkip = 0
    var closing = false
    var invalidFrames = 0
}

/// Faults that change how the Gateway answers, consumed as they apply.
struct FaultPlan: Sendable {
    /// Methods whose next response is dropped, with whether the connection is then cut.
    var dropNextResponse: [String: Bool] = [:]
    /// A delay added before every response (real time).
    var responseDelay: Duration?
    /// Ticks are not sent while `true`.
    var ticksStopped = false
    /// How the next outbound event frames are sent: as binary, fragmented.
    var nextEventsAsBinary = 0
    var nextEventsFragmented = 0
    /// The reply the next `node.presence.alive` gets instead of the server algorithm.
    var forcedPresenceReply: PresenceForcedReply?
    /// How many of the next connections get a `connect.challenge` without `ts`.
    var challengesWithoutTs = 0
    /// The drain in force: requests other than continuations are refused (`GatewayDrain`).
    var drain: GatewayDrain?
    /// How the push transport answers the next send instead of accepting it
    /// (`Gateway.refuseNextPush(status:reason:)`).
    var pushRefusal: PushRefusal?
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
    let configuration: GatewayConfiguration
    let profile: GatewayProfile
    let clock: GatewayClock
    let events: EventLog<GatewayEvent>
    let transcript: Transcript
    let identity: DeviceIdentity
    let startedAtMs: Int64

    var random: SeededRandom
    /// A separate stream for canvas capabilities, so that minting them leaves the ids drawn from
    /// ``random`` as they were.
    var capabilityRandom: SeededRandom
    var connections: [String: ConnectionState] = [:]
    var nodes = NodeRegistry()
    var faults = FaultPlan()
    var nextTickMs: Int64
    var startingUp: Bool
    var accepting = true
    var invokeWaiters: [String: CheckedContinuation<InvokeOutcome, Never>] = [:]
    var invokeOperatorCallers: [String: OperatorInvokeCaller] = [:]
    var presenceVersion = 1
    var pairingStore: PairingStore
    var bootstrapTokens: BootstrapTokenStore
    /// The shared-secret mode in force (it starts as `configuration.auth` and changes with
    /// `Gateway.changeSharedSecret`).
    var sharedAuth: GatewayAuthMode
    /// Bumped whenever the shared secret changes.
    var sharedAuthGeneration = 0
    /// Failed authentications per (scope, address).
    var authRateLimiter: AuthRateLimiter
    /// The devices whose node capability surface was requested (their first node session), by
    /// public key: later node sessions of the same key are "paired reconnects", not counted by
    /// the node-pairing rate limit.
    var nodeSurfaces: [String: String] = [:]
    /// Whether the `hello-ok` just sent went out (no fault dropped it), for a setup code's outcome.
    var lastConnectResponseDelivered = true
    var operatorState: OperatorState
    var operatorWaiters: [PendingOperatorWaiter] = []
    var armedRaces: [RaceArm] = []
    var pushRegistrations: [String: JSONValue] = [:]
    /// The wake sequences of `node.invoke` and their throttles (GatewayCore+InvokeWake.swift).
    var invokeWake = InvokeWakeState()
    /// The generation of the state directory this Gateway started from (0 without one).
    let generation: Int
    /// The SHA-256 fingerprint of the TLS certificate when serving `wss://`, for setup codes.
    let tlsFingerprint: String?
    /// The last state-save failure reported, so that a failing disk is reported once per message.
    var lastSaveFailure: String?
    var pendingActions = PendingActionQueue()
    var chat = ChatState()
    /// When a presence beacon was last persisted, per device and pairing generation
    /// (`NodeEventFacts.presenceThrottleKey`).
    var presencePersistStamps: [String: Int64] = [:]
    /// The latest input activity of each node (`node.presence.activity`), by node id.
    var nodeActivity: [String: NodeActivity] = [:]
    var approvalSubscriptions = ApprovalSubscriptions()
    /// Who receives `session.message` for which session (`sessions.messages.subscribe`,
    /// `sessions.subscribe`).
    var messageSubscriptions = SessionMessageSubscriptions()
    var pushDeliveries: [PushDelivery] = []

    init(configuration: GatewayConfiguration, events: EventLog<GatewayEvent>, transcript: Transcript, identity: DeviceIdentity,
         restoring restored: GatewayPersistentState? = nil, tlsFingerprint: String? = nil) {
        self.tlsFingerprint = tlsFingerprint
        self.configuration = configuration
        self.profile = configuration.profile
        self.clock = configuration.clock
        self.events = events
        self.transcript = transcript
        self.identity = identity
        var random = SeededRandom(seed: configuration.seed)
        let systemSecrets = configuration.secretsFromSystemRandom
        if let restored {
            self.pairingStore = PairingStore(restoring: restored.pairing, random: SeededRandom(seed: random.next()),
                                             systemSecrets: systemSecrets,
                                             supersessionComparesRole: configuration.profile.supersessionComparesRole,
                                             setupCodeApprovalRequiresMobileClient: configuration.profile.setupCodeApprovalRequiresMobileClient)
            self.bootstrapTokens = BootstrapTokenStore(restoring: restored.bootstrapTokens, outcomes: restored.setupOutcomes,
                                                       random: SeededRandom(seed: random.next()), systemSecrets: systemSecrets)
        } else {
            self.pairingStore = PairingStore(
                random: SeededRandom(seed: random.next()), systemSecrets: systemSecrets,
                supersessionComparesRole: configuration.profile.supersessionComparesRole,
                setupCodeApprovalRequiresMobileClient: configuration.profile.setupCodeApprovalRequiresMobileClient)
            self.bootstrapTokens = BootstrapTokenStore(random: SeededRandom(seed: random.next()), systemSecrets: systemSecrets)
        }
        self.generation = restored?.generation ?? 0
        self.sharedAuth = configuration.auth
        self.authRateLimiter = AuthRateLimiter(configuration: configuration.authRateLimit)
        self.operatorState = OperatorState(features: OperatorProfileFeatures(profile: configuration.profile),
                                           random: SeededRandom(seed: random.next()))
        self.random = random
        // Derived from the seed without drawing from `random`.
        self.capabilityRandom = SeededRandom(seed: configuration.seed ^ 0xCA7A_5CA9_0000_0001)
        let now = configuration.clock.nowMs
        self.startedAtMs = now
        self.nextTickMs = now + Int64(configuration.tickIntervalMs)
        self.startingUp = configuration.startingUp
    }

    var nowMs: Int64 { clock.nowMs }

    // MARK: - Connection lifecycle

    /// Registers a new socket, sends the challenge and returns the stream its writer drains.
    func open(_ socket: WebSocketConnection) -> (connectionId: String, outbox: AsyncStream<OutboundItem>)? {
        // While restarting, new sockets are dropped as a closed port would refuse them.
        guard accepting else { return nil }
        let (stream, continuation) = AsyncStream<OutboundItem>.makeStream(bufferingPolicy: .unbounded)
        let connectionId = random.uuidString()
        let nonce = random.uuidString()
        let now = nowMs
        socket.setMaxMessageSize(configuration.maxPreauthPayloadBytes, closeReason: "preauth payload too large")
        let state = ConnectionState(
            id: connectionId, socket: socket, outbox: continuation, remoteAddress: socket.remoteAddress,
            isLoopback: (try? IPAddress(parsing: socket.remoteAddress))?.isLoopback ?? false, nonce: nonce, handshakeDeadlineMs: now + Int64(configuration.handshakeTimeoutMs))
        connections[connectionId] = state
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
        events.append(.connectionOpened(connectionId: connectionId, remoteAddress: socket.remoteAddress, nonce: nonce))
        // The challenge carries no seq (docs/protocol.md §2.5). Its `ts` is on the clients'
        // time line, against which `signedAt` is judged too: skipping Gateway time (an advance)
        // never makes a client that signs with its own clock look stale.
        if faults.challengesWithoutTs > 0 {
            // A malformed challenge (a client must treat a challenge without an integer `ts` as
            // invalid: docs gateway/protocol.md "Handshake").
            faults.challengesWithoutTs -= 1
            noteFault("\(GatewayEventName.connectChallenge) without ts", on: connectionId)
            send(.event(EventFrame(event: GatewayEventName.connectChallenge.rawValue, payload: ["nonce": .string(nonce)])),
                 to: connectionId)
        } else {
            send(.event(ConnectChallenge(nonce: nonce, ts: Int(clock.peerNowMs)).eventFrame), to: connectionId)
        }
        return (connectionId, stream)
    }

    /// A socket ended (either side closed it, or TCP dropped).
    func closed(_ connectionId: String, info: WebSocketCloseInfo) {
        guard let state = connections.removeValue(forKey: connectionId) else { return }
        state.outbox.finish()
        let code = Int(info.code.rawValue)
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: .close, closeCode: code, text: info.reason))
        if let nodeId = nodes.unregister(connectionId: connectionId) {
            // The activity belonged to that connection (upstream keeps it on the node session).
            nodeActivity.removeValue(forKey: nodeId)
            events.append(.nodeDisconnected(nodeId: nodeId, connectionId: connectionId))
            broadcastPresence()
        }
        // Also when a newer socket had replaced this one: nothing can answer an invoke sent on a
        // closed socket.
        failInvokes(onConnection: connectionId)
        advanceInvokeWakes()
        // Requests parked on this socket (waitAnswer, two-phase exec approvals) have nobody to
        // answer any more.
        operatorWaiters.removeAll { $0.connectionId == connectionId }
        approvalSubscriptions.drop(connectionId: connectionId)
        messageSubscriptions.drop(connectionId: connectionId)
        events.append(.connectionClosed(connectionId: connectionId, code: code, reason: info.reason))
    }

    // MARK: - Sending

    /// Queues a frame on a connection and records it.
    func send(_ frame: Frame, to connectionId: String, fault: SendFault? = nil) {
        guard let state = connections[connectionId], !state.closing else { return }
        var fault = fault
        var binary = false
        if case .event = frame {
            if faults.nextEventsAsBinary > 0, frame.eventName != GatewayEventName.connectChallenge.rawValue {
                faults.nextEventsAsBinary -= 1
                binary = true
            }
            if faults.nextEventsFragmented > 0, frame.eventName != GatewayEventName.connectChallenge.rawValue {
                faults.nextEventsFragmented -= 1
                fault = SendFault.fragmented(into: 3, interleavingPings: true)
            }
        }
        let wire = TranscriptWire(frameKind: binary ? .binary : .text, frameCount: max(1, fault?.fragmentCount ?? 1))
        // Built once for the transcript and the wire (`Frame.encoded()` is `json.encoded()`).
        let json = frame.json
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                          kind: fault?.drop == true ? .dropped : .outbound, message: json,
                                          wire: wire, fault: Self.transcriptFault(fault, binary: binary)))
        events.append(.frameOut(connectionId: connectionId, frame: frame))
        let data = json.encoded()
        let message: WebSocketMessage = binary ? .binary(Array(data)) : .text(String(decoding: data, as: UTF8.self))
        state.outbox.yield(.message(message, fault))
    }

    /// What the transcript says about a send fault (every outbound binary message is a fault:
    /// the Gateway sends text).
    static func transcriptFault(_ fault: SendFault?, binary: Bool) -> TranscriptFault {
        let fragments = fault.map(\.fragmentCount) ?? 1
        return TranscriptFault(dropped: fault?.drop ?? false, delayMs: fault?.delay.map(\.milliseconds),
                               fragmentedInto: fragments > 1 ? fragments : nil,
                               pingsBetween: fragments > 1 && fault?.interleavedPings == true, binary: binary)
    }

    /// Sends an event that carries the connection's next `seq`.
    func sendSequenced(event: String, payload: JSONValue?, stateVersion: StateVersion? = nil, to connectionId: String) {
        guard var state = connections[connectionId], state.session != nil else { return }
        state.seq += 1 + state.pendingSeqSkip
        state.pendingSeqSkip = 0
        connections[connectionId] = state
        send(.event(EventFrame(event: event, payload: payload, seq: state.seq, stateVersion: stateVersion)), to: connectionId)
    }

    /// Sends a targeted event without `seq` (docs/protocol.md §2.5: `node.invoke.request`
    /// carried none in the protocol 3 era; clients tolerate both).
    func sendTargeted(event: String, payload: JSONValue?, to connectionId: String) {
        send(.event(EventFrame(event: event, payload: payload)), to: connectionId)
    }

    /// Answers a request, applying response faults.
    func respond(_ response: ResponseFrame, method: String, to connectionId: String) {
        events.append(.requestHandled(connectionId: connectionId, method: method, ok: response.ok, errorCode: response.error?.code))
        if let cut = faults.dropNextResponse.removeValue(forKey: method) {
            transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: connectionId,
                                              kind: .dropped, message: Frame.response(response).json,
                                              text: "response to \(method) dropped (fault)",
                                              wire: TranscriptWire(frameKind: .text), fault: TranscriptFault(dropped: true)))
            events.append(.faultInjected(description: "dropped the response to \(method) on \(connectionId)"))
            if cut { abort(connectionId) }
            return
        }
        let fault = faults.responseDelay.map { SendFault(delay: $0) }
        send(.response(response), to: connectionId, fault: fault)
    }

    /// Answers with an error.
    func fail(_ requestId: String, method: String, _ error: ErrorShape, to connectionId: String) {
        respond(.failure(id: requestId, error: error), method: method, to: connectionId)
    }

    /// Closes a connection with a close frame after what is already queued.
    func close(_ connectionId: String, code: Int, reason: String) {
        guard var state = connections[connectionId], !state.closing else { return }
        state.closing = true
        connections[connectionId] = state
        state.outbox.yield(.close(WebSocketCloseCode(UInt16(clamping: code)), CloseReason.truncate(reason)))
    }

    /// Drops a connection without a close frame (TCP reset), after what is already queued.
    func abort(_ connectionId: String) {
        guard var state = connections[connectionId], !state.closing else { return }
        state.closing = true
        connections[connectionId] = state
        state.outbox.yield(.abort)
    }

    // MARK: - Broadcasts

    /// Sends an event to every session allowed to see it (docs/protocol.md §2.6).
    func broadcast(event: String, payload: JSONValue?, stateVersion: StateVersion? = nil) {
        for (connectionId, state) in connections.sorted(by: { $0.key < $1.key }) {
            guard let session = state.session, !state.closing else { continue }
            guard EventScopeGate.allows(event: event, role: session.role, scopes: session.scopes) else { continue }
            sendSequenced(event: event, payload: payload, stateVersion: stateVersion, to: connectionId)
        }
    }

    /// The presence list of `hello-ok.snapshot` and `presence` events.
    func presenceEntries() -> [PresenceEntry] {
        var entries = [PresenceEntry(ts: Int(nowMs), host: "mock-gateway", mode: "gateway")]
        for node in nodes.nodes.values.sorted(by: { $0.nodeId < $1.nodeId }) {
            entries.append(PresenceEntry(
                ts: Int(node.connectedAtMs), ip: node.remoteIp, version: node.version, platform: node.platform,
                deviceFamily: node.deviceFamily, modelIdentifier: node.modelIdentifier, mode: node.clientMode,
                reason: "connect", deviceId: node.nodeId, roles: ["node"], scopes: []))
        }
        return entries
    }

    func broadcastPresence() {
        presenceVersion += 1
        let payload = PresenceEvent(presence: presenceEntries()).json
        broadcast(event: GatewayEventName.presence.rawValue, payload: payload,
                  stateVersion: StateVersion(presence: presenceVersion, health: 1))
    }

    // MARK: - Timers

    /// The earliest Gateway-clock instant at which something is due (after `floor`, when given:
    /// what `processTimers` at `floor` left due is not due again).
    func nextDeadlineMs(after floor: Int64? = nil) -> Int64? {
        var candidates: [Int64] = []
        if !faults.ticksStopped, connections.values.contains(where: { $0.session != nil }) { candidates.append(nextTickMs) }
        // A connection already closing has no handshake deadline any more (processTimers skips it).
        candidates += connections.values.compactMap { $0.session == nil && !$0.closing ? $0.handshakeDeadlineMs : nil }
        if let invoke = nodes.nextInvokeDeadlineMs { candidates.append(invoke) }
        if let pairing = pairingStore.nextExpiryMs { candidates.append(pairing) }
        if let record = operatorState.nextDeadlineMs { candidates.append(record) }
        candidates += operatorWaiters.compactMap(\.waiter.deadlineMs)
        if let chatDue = chat.store.nextDueMs { candidates.append(chatDue) }
        if let wakeDue = invokeWake.nextDueMs { candidates.append(wakeDue) }
        if let floor { candidates.removeAll { $0 <= floor } }
        return candidates.min()
    }

    /// Runs everything that is due at the current Gateway time.
    func processTimers() {
        let now = nowMs
        for (connectionId, state) in connections.sorted(by: { $0.key < $1.key }) where state.session == nil && !state.closing {
            if let deadline = state.handshakeDeadlineMs, deadline <= now {
                // Protocol-3-era servers closed with 1000 and no reason; the newest close code is
                // unconfirmed (docs/protocol.md §10.5). 1000 is what clients already handle.
                close(connectionId, code: 1000, reason: "")
            }
        }
        if nextTickMs <= now {
            if !faults.ticksStopped {
                // Several intervals may pass in one advance; a client needs one tick at the current
                // time, not a burst of stale ones.
                let tick = (try? JSONValue(encoding: TickEvent(ts: Int(now)))) ?? .null
                broadcast(event: GatewayEventName.tick.rawValue, payload: tick)
            }
            let interval = Int64(max(1, configuration.tickIntervalMs))
            nextTickMs = now + interval - ((now - nextTickMs) % interval)
        }
        for invoke in nodes.expireInvokes(nowMs: now) { finishInvoke(invoke.id, with: .timedOut) }
        expirePairingRequests(nowMs: now)
        expireOperatorRecords(nowMs: now)
        releaseDueChatMessages()
        advanceInvokeWakes()
    }

    // MARK: - Invokes

    /// Completes whoever waits for an invoke (`queued`: the foreground action the refusal queued).
    func finishInvoke(_ id: String, with outcome: InvokeOutcome, queued: PendingNodeAction? = nil) {
        if let waiter = invokeWaiters.removeValue(forKey: id) { waiter.resume(returning: outcome) }
        if let caller = invokeOperatorCallers.removeValue(forKey: id) { answerOperatorInvoke(caller, outcome: outcome, queued: queued) }
    }

    func failInvokes(onConnection connectionId: String) {
        for invoke in nodes.pendingInvokes.values.sorted(by: { $0.id < $1.id }) where invoke.connectionId == connectionId {
            _ = nodes.cancelInvoke(id: invoke.id)
            finishInvoke(invoke.id, with: .nodeDisconnected)
        }
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
