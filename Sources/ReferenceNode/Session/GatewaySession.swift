import Foundation
import GatewayProtocol
import Locking
import Simulation
import WebSocketTransport

/// Where a session of the reference client stands.
public enum SessionStatus: Sendable, Hashable {
    /// Not running (never started, disconnected, or stopped).
    case idle
    /// Opening a socket or in the handshake.
    case connecting
    /// `hello-ok` received; the session is up.
    case connected
    /// Waiting to retry at `untilMs` (client clock); `pairing` while a pairing request is pending.
    case waiting(untilMs: Int64, pairing: Bool)
    /// Not reconnecting automatically until an explicit `connect` (docs/protocol.md §11.3).
    case paused(reason: String)

    /// Whether the session is up.
    public var isConnected: Bool { self == .connected }
}

/// What a session reports to the client, in order.
enum SessionSignal: Sendable {
    /// A connect attempt begins.
    case attemptStarted(role: GatewayRole)
    /// `hello-ok` arrived on `connection`.
    case connected(GatewayConnection, HelloSummary)
    /// An event arrived on an established `connection`.
    case event(GatewayConnection, EventFrame)
    /// An attempt or session ended, and what the session does next.
    case ended(role: GatewayRole, end: ConnectionEnd, decision: ReconnectDecision, pairingRequestId: String?)
}

/// One reconnecting session (node or operator) of the reference client: connects, performs the
/// handshake (docs/protocol.md §3), keeps the session alive (ticks, docs/protocol.md §11.1), and decides how to reconnect (docs/protocol.md §11.3).
actor GatewaySession {
    private struct Attempt {
        var end: ConnectionEnd
        var context: AttemptContext
        var established: Bool
    }

    private enum Phase {
        case awaitingChallenge
        case awaitingHello(requestId: String)
        case open
    }

    let role: GatewayRole
    private let configuration: ReferenceConfiguration
    private let store: DeviceStateStore
    private let commands: [String]
    private let signals: AsyncStream<SessionSignal>.Continuation
    private let startGate: WakeSignal?
    private let identifiers: IdentifierSource
    private let wake = WakeSignal()
    private var clock: any ClientClock { configuration.clock }

    private var gatewayURL: String
    private var sharedToken: String?
    private var addedScopes: [String] = []
    private var policy: ReconnectPolicy
    private var generation = 0
    private var loop: Task<Void, Never>?
    private var inFlight: GatewayConnection?
    private var shadows: [GatewayConnection] = []
    private var useDeviceTokenRetry = false
    private var skipNextWait = false
    private var waitingForPairing = false
    /// Node connect frames built so far (the `commands-drift` mutant widens every one after the first).
    private var nodeConnectFrames = 0

    /// The session's state.
    private(set) var status: SessionStatus = .idle
    /// The established connection, if any.
    private(set) var current: GatewayConnection?
    /// The newest pairing request id reported to this session.
    var pairingRequestId: String? { policy.pairingRequestId }
    /// How many `seq` gaps were seen (tolerated).
    private(set) var seqGaps = 0

    init(role: GatewayRole, configuration: ReferenceConfiguration, store: DeviceStateStore, gatewayURL: String,
         sharedToken: String?, commands: [String], startGate: WakeSignal?, seed: UInt64,
         signals: AsyncStream<SessionSignal>.Continuation) {
        self.role = role
        self.configuration = configuration
        self.store = store
        self.gatewayURL = gatewayURL
        self.sharedToken = sharedToken
        self.commands = commands
        self.startGate = startGate
        self.signals = signals
        identifiers = IdentifierSource(seed: configuration.reproducible ? seed &+ 0x1D5 : nil)
        policy = ReconnectPolicy(seed: seed, mutants: configuration.mutants, waitsForUser: configuration.waitsForUser)
    }

    // MARK: - Control

    /// Starts the reconnect loop (no-op when running).
    func start() {
        guard loop == nil else { return }
        loop = spawnTask { await self.run() }
    }

    /// Whether the loop runs.
    var isRunning: Bool { loop != nil }

    /// Stops the loop and closes every socket (close 1000), then returns.
    func stop() async {
        let task = loop
        loop = nil
        task?.cancel()
        wake.signal()
        let sockets = [inFlight, current].compactMap { $0 } + shadows
        shadows = []
        for connection in sockets { await Self.closeBounded(connection, clock: clock) }
        await task?.value
        status = .idle
        current = nil
        inFlight = nil
    }

    /// Closes with 1000, or resets the socket when the close handshake does not finish quickly.
    private static func closeBounded(_ connection: GatewayConnection, clock: any ClientClock) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await connection.close(code: 1000, reason: "client disconnect") }
            group.addTask {
                do { try await clock.sleep(forMs: 2_000) } catch { return }
                connection.abort()
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// An explicit `connect`: starts the loop, or cuts a pause or retry wait short.
    func resume() {
        if loop == nil {
            policy.explicitResume()
            start()
        } else if status != .connected {
            // Only a session that is not up is hurried; a `connect` that arrives during a session
            // must not turn a later pause (for example after a removal) into an instant retry.
            policy.explicitResume()
            skipNextWait = true
            wake.signal()
        }
    }

    /// Closes the current session and connects again at once (for example with new scopes).
    func reconnectNow() {
        guard loop != nil else { start(); return }
        skipNextWait = true
        wake.signal()
        if let connection = current ?? inFlight { connection.drop(reason: "reconnecting", closeCode: 1000) }
    }

    /// Points the session at another Gateway (takes effect on the next connect).
    func setGateway(url: String, sharedToken: String?) {
        gatewayURL = url
        self.sharedToken = sharedToken
        policy.sessionEstablished()
    }

    /// The Gateway the session connects to.
    var url: String { gatewayURL }

    /// Adds operator scopes to ask for on the next connect.
    func addScopes(_ scopes: [String]) {
        for scope in scopes where !addedScopes.contains(scope) { addedScopes.append(scope) }
    }

    // MARK: - Loop

    private func run() async {
        if let startGate { await startGate.wait() }
        while !Task.isCancelled {
            wake.reset()
            skipNextWait = false
            status = .connecting
            signals.yield(.attemptStarted(role: role))
            let attempt = await attemptOnce()
            if Task.isCancelled { break }
            var (decision, effects) = policy.decide(attempt.end, context: attempt.context)
            apply(effects)
            if skipNextWait, case .retry = decision { decision = .retry(afterMs: 0) }
            signals.yield(.ended(role: role, end: attempt.end, decision: decision, pairingRequestId: policy.pairingRequestId))
            switch decision {
            case .retry(let delay):
                waitingForPairing = false
                await waitOrWake(delay, pairing: false)
            case .pairingWait(let delay, _):
                waitingForPairing = true
                await waitOrWake(delay, pairing: true)
            case .pause(let reason):
                status = .paused(reason: reason)
                if !skipNextWait { await wake.wait() }
            case .idle:
                return
            }
        }
    }

    private func waitOrWake(_ delayMs: Int64, pairing: Bool) async {
        if skipNextWait || delayMs <= 0 { return }
        let clock = clock
        let wake = wake
        let deadline = clock.nowMs + delayMs
        status = .waiting(untilMs: deadline, pairing: pairing)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(untilMs: deadline) }
            group.addTask { await wake.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    private func apply(_ effects: [ReconnectEffect]) {
        for effect in effects {
            switch effect {
            case .clearStoredToken: store.clearToken(gateway: gatewayURL, role: role)
            case .useDeviceTokenRetry: useDeviceTokenRetry = true
            case .regenerateIdentity: _ = try? store.regenerateIdentity(nowMs: clock.nowMs)
            case .clearBootstrapToken: store.setBootstrapToken(nil, gateway: gatewayURL)
            }
        }
    }

    // MARK: - One connection

    private func attemptOnce() async -> Attempt {
        generation += 1
        if configuration.has(.newKeyEveryConnect) { _ = try? store.regenerateIdentity(nowMs: clock.nowMs) }
        let stored = store.token(gateway: gatewayURL, role: role)
        let bootstrap = role == .node ? store.bootstrapToken(gateway: gatewayURL) : nil
        let credentials = ConnectCredentials(sharedToken: sharedToken, storedToken: stored, bootstrapToken: bootstrap,
                                             deviceTokenRetry: useDeviceTokenRetry)
        useDeviceTokenRetry = false
        let context = AttemptContext(authSource: ConnectBuilder.auth(for: credentials).source,
                                     hadStoredToken: stored != nil, usedDeviceTokenRetry: credentials.deviceTokenRetry,
                                     trustedEndpoint: ConnectBuilder.isTrustedDeviceRetryEndpoint(gatewayURL))
        let socket: WebSocketConnection
        do {
            socket = try await configuration.connector.connect(to: gatewayURL)
        } catch {
            return Attempt(end: Task.isCancelled ? .stoppedByClient : .transportFailure("connect failed: \(error)"),
                           context: context, established: false)
        }
        let connection = GatewayConnection(
            socket: socket, generation: generation, role: role, clock: clock, binary: configuration.sendsBinaryFrames,
            defaultTimeoutMs: ClientTimers.replyTimeoutMs(connect: false, configuration), identifiers: identifiers)
        inFlight = connection
        if Task.isCancelled { connection.abort() }
        // The socket is read in its own task, which is never cancelled: cancelling a task that
        // waits for the next WebSocket message can deadlock against the transport's event loop
        // (the loop resumes the reader while holding the connection lock, and the reader's
        // cancellation handler takes that lock). The reader ends when the socket ends; `stop()`
        // closes the socket for that.
        let end = await spawnTask { await self.drive(connection, credentials: credentials, shadow: false) }.value
        inFlight = nil
        if current === connection { current = nil }
        return Attempt(end: Task.isCancelled ? .stoppedByClient : end.end, context: context, established: end.established)
    }

    /// A second, untracked node session (the `second-session-after-approval` mutant).
    private func openShadowSession() {
        let credentials = ConnectCredentials(sharedToken: sharedToken, storedToken: store.token(gateway: gatewayURL, role: role),
                                             bootstrapToken: nil)
        let url = gatewayURL
        spawnTask {
            guard let socket = try? await self.configuration.connector.connect(to: url) else { return }
            let connection = GatewayConnection(
                socket: socket, generation: -self.generation, role: self.role, clock: self.clock,
                binary: self.configuration.sendsBinaryFrames,
                defaultTimeoutMs: ClientTimers.replyTimeoutMs(connect: false, self.configuration), identifiers: self.identifiers)
            self.shadows.append(connection)
            _ = await self.drive(connection, credentials: credentials, shadow: true)
        }
    }

    /// The commands of this node connect: always the same list, except under the
    /// `commands-drift` mutant.
    private func declaredCommands() -> [String] {
        guard role == .node else { return commands }
        nodeConnectFrames += 1
        let added = NodeCommandName.healthSummary.rawValue
        guard configuration.has(.commandsDrift), nodeConnectFrames > 1, !commands.contains(added) else { return commands }
        return commands + [added]
    }

    private func parseChallenge(_ payload: JSONValue?) -> ConnectChallenge? {
        ConnectBuilder.challenge(payload, configuration: configuration, fallbackNowMs: clock.nowMs)
    }

    private func connectFrame(challenge: ConnectChallenge?, credentials: ConnectCredentials) -> (id: String, frame: Frame) {
        let stored = credentials.storedToken
        let scopes = ConnectBuilder.scopes(role: role, stored: stored, defaults: configuration.operatorScopes,
                                           added: addedScopes, configuration: configuration)
        var params = ConnectBuilder.params(
            role: role, identity: store.identity, challenge: challenge, auth: ConnectBuilder.auth(for: credentials).auth,
            scopes: scopes, commands: declaredCommands(), configuration: configuration, fallbackNowMs: clock.nowMs)
        if configuration.has(.pinNegotiatedProtocol), let pinned = store.lastHelloProtocol {
            // The protocol is not part of the signed payload, so the proof stays valid.
            params.minProtocol = pinned
            params.maxProtocol = pinned
        }
        let id = identifiers.requestId()
        let json = ConnectBuilder.json(params, configuration: configuration)
        return (id, .request(RequestFrame(id: id, method: GatewayMethod.connect.rawValue, params: json)))
    }

    private func startTimer(_ delayMs: Int64, _ connection: GatewayConnection, reason: String) -> Task<Void, Never> {
        let clock = clock
        let deadline = clock.nowMs + delayMs
        return spawnTask {
            do { try await clock.sleep(untilMs: deadline) } catch { return }
            connection.drop(reason: reason, closeCode: nil)
        }
    }

    /// Runs one socket from the challenge to its end.
    private func drive(_ connection: GatewayConnection, credentials: ConnectCredentials,
                       shadow: Bool) async -> (end: ConnectionEnd, established: Bool) {
        var phase = Phase.awaitingChallenge
        var rejection: ErrorShape?
        var failure: String?
        var seq = SeqTracker()
        var timer = startTimer(ClientTimers.challengeTimeoutMs, connection, reason: "connect challenge timeout")
        var watchdog: Task<Void, Never>?
        defer {
            timer.cancel()
            watchdog?.cancel()
        }
        if configuration.has(.connectBeforeChallenge) {
            let (id, frame) = connectFrame(challenge: nil, credentials: credentials)
            phase = .awaitingHello(requestId: id)
            try? await connection.send(frame)
        }
        reading: for await message in connection.socket.messages {
            if configuration.has(.dropBinaryFrames), case .binary = message { continue }
            let frame = try? Frame(decoding: Data(message.payload))
            switch phase {
            case .awaitingChallenge:
                // Frames that cannot be decoded are skipped while waiting for the challenge.
                guard case .event(let event)? = frame, event.event == GatewayEventName.connectChallenge.rawValue else { continue }
                guard let challenge = parseChallenge(event.payload) else {
                    // Never signed; a client that waits for the user ends the attempt here.
                    if configuration.waitsForUser.contains(.afterInvalidChallenge) {
                        connection.drop(reason: ReconnectPolicy.invalidChallengeReason, closeCode: 1000)
                    }
                    continue
                }
                timer.cancel()
                connection.serverOffsetMs = Int64(challenge.ts) - clock.nowMs
                let (id, request) = connectFrame(challenge: challenge, credentials: credentials)
                phase = .awaitingHello(requestId: id)
                timer = startTimer(ClientTimers.replyTimeoutMs(connect: true, configuration), connection,
                                   reason: "connect timed out")
                do { try await connection.send(request) } catch {
                    failure = "could not send connect"
                    break reading
                }
            case .awaitingHello(let id):
                guard let frame else {
                    // Swift fails the connect on an undecodable frame before hello (docs/protocol.md §4.5).
                    failure = "connect failed (invalid response)"
                    connection.abort()
                    break reading
                }
                guard case .response(let response) = frame, response.id == id else { continue }
                timer.cancel()
                guard response.ok else {
                    rejection = response.error ?? ErrorShape(code: "UNKNOWN", message: "connect refused")
                    break reading
                }
                guard let hello = HelloSummary(payload: response.payload) else {
                    failure = "invalid hello-ok"
                    connection.abort()
                    break reading
                }
                if configuration.has(.rejectUnknownFields),
                   let members = response.payload?.objectValue?.keys, !Set(members).isSubset(of: HelloSummary.knownMembers) {
                    connection.drop(reason: "unknown hello-ok member", closeCode: 1002)
                    continue
                }
                phase = .open
                connection.lastTickMs = clock.nowMs
                connection.setAdvertisedMethods(hello.methods)
                if shadow { continue }
                sessionEstablished(connection, hello: hello, credentials: credentials)
                if !configuration.has(.noTickWatchdog) { watchdog = startWatchdog(connection, tickIntervalMs: hello.tickIntervalMs) }
            case .open:
                guard let frame else { continue }
                switch frame {
                case .response(let response):
                    connection.deliver(response)
                case .event(let event):
                    if event.event == GatewayEventName.tick.rawValue {
                        connection.lastTickMs = clock.nowMs
                        if let ts = event.payload?["ts"]?.int64Value { connection.serverOffsetMs = ts - clock.nowMs }
                    }
                    if case .gap = seq.observe(event.seq) {
                        seqGaps += 1
                        if configuration.has(.seqGapDisconnect) { connection.drop(reason: "event seq gap", closeCode: 1000) }
                    }
                    if configuration.has(.rejectUnknownFields), !HelloSummary.knownEvents.contains(event.event) {
                        connection.drop(reason: "unknown event \(event.event)", closeCode: 1002)
                    }
                    if !shadow { signals.yield(.event(connection, event)) }
                case .request, .cancel:
                    continue
                }
            }
        }
        let established: Bool = if case .open = phase { true } else { false }
        if rejection != nil || failure != nil, connection.socket.closeInfo == nil {
            await Self.closeBounded(connection, clock: clock)
        }
        connection.markEnded()
        let info = await connection.socket.waitUntilClosed()
        if let rejection { return (.rejected(rejection), false) }
        if let failure { return (.transportFailure(failure), false) }
        guard established else {
            let reason = connection.dropReason ?? "closed before hello-ok (\(info.code.rawValue))"
            return (.transportFailure(reason), false)
        }
        if let reason = connection.dropReason { return (.droppedByClient(reason: reason), true) }
        return (.ended(closeCode: Int(info.code.rawValue), reason: info.reason), true)
    }

    private func sessionEstablished(_ connection: GatewayConnection, hello: HelloSummary, credentials: ConnectCredentials) {
        store.lastHelloProtocol = hello.protocolVersion
        let usedBootstrap = ConnectBuilder.auth(for: credentials).source == .bootstrapToken
        if !configuration.has(.forgetDeviceToken) {
            for (tokenRole, token) in IssuedTokens.tokens(in: hello, role: role, usedBootstrap: usedBootstrap) {
                store.storeToken(token, gateway: gatewayURL, role: tokenRole)
            }
        }
        // A bootstrap token is single-use: once tokens were issued it is never presented again (docs/protocol.md §5.13).
        if usedBootstrap, !configuration.has(.reuseBootstrapToken) { store.setBootstrapToken(nil, gateway: gatewayURL) }
        if waitingForPairing, configuration.has(.secondSessionAfterApproval) { openShadowSession() }
        waitingForPairing = false
        // A `connect` that arrived during the handshake is satisfied by this session.
        skipNextWait = false
        policy.sessionEstablished()
        current = connection
        status = .connected
        signals.yield(.connected(connection, hello))
    }

    private func startWatchdog(_ connection: GatewayConnection, tickIntervalMs: Int64) -> Task<Void, Never> {
        let clock = clock
        return spawnTask {
            var watchdog = TickWatchdog(tickIntervalMs: tickIntervalMs, lastTickMs: connection.lastTickMs)
            while !Task.isCancelled {
                do { try await clock.sleep(untilMs: watchdog.deadlineMs) } catch { return }
                watchdog.lastTickMs = connection.lastTickMs
                if watchdog.isExpired(nowMs: clock.nowMs) {
                    connection.drop(reason: "gateway tick missed; reconnecting", closeCode: GatewayCloseCode.tickTimeout.rawValue)
                    return
                }
            }
        }
    }
}

extension ClientTimers {
    /// How long to wait for a reply: 30 s for `connect`, 15 s otherwise; 1 s for both with the
    /// `give-up-slow-response` mutant.
    static func replyTimeoutMs(connect: Bool, _ configuration: ReferenceConfiguration) -> Int64 {
        if configuration.has(.giveUpSlowResponse) { return impatientRequestTimeoutMs }
        return connect ? connectTimeoutMs : requestTimeoutMs
    }
}
