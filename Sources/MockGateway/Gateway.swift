import Foundation
import GatewayProtocol
import Locking
import WebSocketTransport

/// A fake OpenClaw Gateway speaking the real wire protocol on a local port, with every
/// behaviour scriptable from Swift.
///
/// ```swift
/// let gateway = try await Gateway.start(GatewayConfiguration(profile: .legacy))
/// defer { Task { await gateway.shutdown() } }
/// // point a client at gateway.url, then:
/// let request = try await gateway.nextPairingRequest(timeout: .seconds(5))
/// try await gateway.approve(requestId: request.requestId)
/// ```
///
/// Everything the Gateway does is appended to ``events``; wait on it with a deadline rather than
/// sleeping. Every frame is recorded in ``transcript``.
public final class Gateway: Sendable {
    /// The configuration it was started with.
    public let configuration: GatewayConfiguration
    /// The typed event log (connections, frames, pairing, nodes, invokes, presence, ...).
    public let events: EventLog<GatewayEvent>
    /// Every frame in both directions.
    public let transcript: Transcript
    /// What removes secrets from the transcript and from everything printed about this
    /// Gateway; it knows the configured secret, every token restored from the state directory
    /// and every token seen in traffic.
    public var secrets: SecretRedactor { transcript.redactor }
    /// The Gateway's own Ed25519 identity (`gateway.identity.get`).
    public let identity: DeviceIdentity
    /// The bound port.
    public let port: Int
    /// The SHA-256 fingerprint of the TLS certificate when serving `wss://`, as 64 lower-case
    /// hexadecimal digits: the form upstream's Gateway keeps (`fingerprintSha256`, normalised from
    /// Node's `AB:CD:…`: `src/infra/tls/gateway.ts@013c24e74a262690bbe83a479f03f50404a8ef13`,
    /// `src/infra/tls/fingerprint.js@19e55dcf449a47468ff16224bd36c091b44951a1`) and puts in setup
    /// codes, and the form the official apps compute and show.
    public let tlsFingerprint: String?

    /// The plain HTTP routes served on the Gateway's port next to the WebSocket (sockets, TLS
    /// and the in-memory network alike); see `Gateway+HTTP.swift`.
    public let http: HTTPRouter

    let core: GatewayCore
    private let runtime: Locked<Runtime>

    /// Where connections come from: a real socket, or an in-memory network.
    private enum Listener: Sendable {
        case socket(WebSocketServer)
        case memory(InMemoryListener)

        var connections: AsyncStream<WebSocketConnection> {
            switch self {
            case .socket(let server): server.connections
            case .memory(let listener): listener.connections
            }
        }
    }

    private struct Runtime: Sendable {
        var listener: Listener?
        var acceptTask: Task<Void, Never>?
        var timerTask: Task<Void, Never>?
        /// Saves the durable state after each change (with a state store only).
        var persistTask: Task<Void, Never>?
        var connectionTasks: [UInt64: Task<Void, Never>] = [:]
        var sockets: [UInt64: WebSocketConnection] = [:]
        var stopped = false
    }

    /// The Gateway generation it imitates.
    public var profile: GatewayProfile { configuration.profile }
    /// The clock every rule reads.
    public var clock: GatewayClock { configuration.clock }
    /// The host it listens on.
    public var host: String { configuration.host }
    /// `ws://host:port` (`wss://` with TLS), the URL clients connect to (on the in-memory
    /// network when ``GatewayConfiguration/network`` is set).
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(tlsFingerprint == nil ? "ws" : "wss")://\(host):\(port)"
    }

    /// The URL setup codes carry: ``GatewayConfiguration/advertisedURL``, else ``url`` with
    /// ``GatewayConfiguration/advertisedHost``.
    public var advertisedURL: String {
        if let advertised = configuration.advertisedURL { return advertised }
        guard let host = configuration.advertisedHost else { return url }
        return "\(tlsFingerprint == nil ? "ws" : "wss")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    private init(configuration: GatewayConfiguration, events: EventLog<GatewayEvent>, transcript: Transcript,
                 identity: DeviceIdentity, port: Int, tlsFingerprint: String?, core: GatewayCore, http: HTTPRouter) {
        self.http = http
        self.configuration = configuration
        self.events = events
        self.transcript = transcript
        self.identity = identity
        self.port = port
        self.tlsFingerprint = tlsFingerprint
        self.core = core
        self.runtime = Locked(Runtime())
    }

    /// Starts a Gateway and begins accepting connections, on a real socket or, when
    /// ``GatewayConfiguration/network`` is set, on that in-memory network.
    /// - Throws: when the address cannot be bound, the identity seed is not 32 bytes, the
    ///   transcript file cannot be created, or the TLS certificate or key cannot be used.
    public static func start(_ configuration: GatewayConfiguration = GatewayConfiguration()) async throws -> Gateway {
        var configuration = configuration
        var restored: GatewayPersistentState?
        if let store = configuration.stateStore {
            // A kept identity wins; every start is a new generation of the same Gateway.
            var state = store.loaded ?? GatewayPersistentState(identitySeed: configuration.identitySeed)
            state.generation += 1
            configuration.identitySeed = state.identitySeed
            configuration.seed = configuration.seed &+ UInt64(state.generation) &* 0x9E37_79B9_7F4A_7C15
            try store.save(state)
            restored = state
        }
        let identity = try DeviceIdentity(seed: Data(configuration.identitySeed))
        let redactor = SecretRedactor(enabled: configuration.redactSecrets)
        switch configuration.auth {
        case .token(let secret), .password(let secret): redactor.pin(secret)
        case .none: break
        }
        // Tokens issued before a restart are as secret as new ones, also before a client
        // presents them under a secret key (a stray frame, a chat message, a log line).
        for secret in restored?.secretValues ?? [] { redactor.learn(secret) }
        let transcript = try Transcript(budget: configuration.memoryBudget.transcript, fileURL: configuration.transcriptFile,
                                        redactor: redactor)
        let events = EventLog<GatewayEvent>(retention: GatewayEvent.retention(budgetBytes: configuration.memoryBudget.eventLogBytes))
        let listener: Listener
        let port: Int
        var fingerprint: String?
        let router = HTTPRouter()
        if let network = configuration.network {
            let memory = try network.listen(host: configuration.host, port: configuration.port == 0 ? nil : configuration.port,
                                            configuration: Self.socketConfiguration(configuration), http: router)
            listener = .memory(memory)
            port = memory.port
        } else {
            if let tls = configuration.tls {
                let pem = try String(contentsOfFile: tls.certificateFile, encoding: .utf8)
                let formatted = try WebSocketTLS.sha256Fingerprint(certificatePEM: pem)
                fingerprint = WebSocketTLSClientConfiguration.normalizedFingerprint(formatted) ?? formatted
            }
            let server = try await WebSocketServer.start(
                host: configuration.host, port: configuration.port, configuration: Self.socketConfiguration(configuration),
                tls: configuration.tls, http: router)
            listener = .socket(server)
            port = server.port
        }
        var bound = configuration
        bound.port = port
        let core = GatewayCore(configuration: bound, events: events, transcript: transcript, identity: identity, restoring: restored,
                               tlsFingerprint: fingerprint)
        let gateway = Gateway(configuration: bound, events: events, transcript: transcript, identity: identity,
                              port: port, tlsFingerprint: fingerprint, core: core, http: router)
        gateway.registerHTTPRoutes()
        gateway.begin(listener)
        return gateway
    }

    /// Runs `body` with a started Gateway and shuts it down afterwards, also when `body` throws.
    /// - Returns: what `body` returns.
    /// - Throws: what `start` or `body` throws.
    public static func withGateway<Result: Sendable>(
        _ configuration: GatewayConfiguration = GatewayConfiguration(),
        _ body: (Gateway) async throws -> Result
    ) async throws -> Result {
        let gateway = try await start(configuration)
        return try await withCleanup { try await body(gateway) } cleanup: { await gateway.shutdown() }
    }

    private static func socketConfiguration(_ configuration: GatewayConfiguration) -> WebSocketConfiguration {
        WebSocketConfiguration(
            maxMessageSize: configuration.maxPayloadBytes,
            maxOutboundBufferBytes: configuration.maxBufferedBytes)
    }

    /// Whether timers fire by themselves: on the wall clock, or on a virtual clock that a
    /// simulation drives. A manual clock in a plain test moves only with ``advance(by:)``, which
    /// runs the timers itself.
    private var timersRunThemselves: Bool {
        guard let timeline = clock.virtualTimeline else { return true }
        return timeline.isDriven
    }

    private func begin(_ listener: Listener) {
        let acceptTask = spawnTask { [weak self] in
            for await socket in listener.connections {
                guard let self else { socket.abort(); continue }
                self.accept(socket)
            }
        }
        let timerTask: Task<Void, Never>? = timersRunThemselves ? spawnTask { [weak self] in await self?.runTimers() } : nil
        var persistTask: Task<Void, Never>?
        if configuration.stateStore != nil {
            // Saves after every change of the durable state (each is an event; frames are not).
            let (events, core) = (self.events, self.core)
            persistTask = spawnTask {
                for await event in events.stream(from: 0) {
                    switch event {
                    case .frameIn, .frameOut, .requestHandled, .stateSaveFailed: continue
                    default: await core.persistState()
                    }
                }
            }
        }
        runtime.withLock { runtime in
            runtime.listener = listener
            runtime.acceptTask = acceptTask
            runtime.timerTask = timerTask
            runtime.persistTask = persistTask
        }
    }

    /// Fires timers (ticks, expiries, timeouts) when they are due: sleeps until the next
    /// deadline, or until anything happens that may have set an earlier one (every change of the
    /// Gateway's state is an event in ``events``).
    private func runTimers() async {
        // The instant timers last ran at: a deadline that running them did not clear (a rule
        // whose deadline outlives its own work) is not due again, so the loop never spins.
        var processedAtMs: Int64?
        while !Task.isCancelled {
            let cursor = events.count
            let next = await core.nextDeadlineMs(after: processedAtMs)
            let wait = next.map { Duration.milliseconds(max(0, $0 - clock.nowMs)) }
            let outcome = await events.wait(from: cursor, timeout: wait, on: clock.waitTimeline, purpose: .activity) { _ in true }
            switch outcome {
            case .cancelled, .finished: return
            case .timedOut:
                processedAtMs = clock.nowMs
                await core.processTimers()
            case .found: continue
            }
        }
    }

    private func accept(_ socket: WebSocketConnection) {
        let clock = clock
        let task = spawnTask { [core] in
            guard let (connectionId, outbox) = await core.open(socket) else {
                socket.abort()
                return
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    // The writer: sends what the Gateway queued, in order; a response delay
                    // (a fault) passes on the Gateway's time line, virtual in simulated runs.
                    for await item in outbox {
                        switch item {
                        case .message(let message, var fault):
                            if let delay = fault?.delay {
                                await clock.waitTimeline.sleep(for: delay, purpose: .activity)
                                fault?.delay = nil
                            }
                            try? await socket.send(message, fault: fault)
                        case .close(let code, let reason):
                            _ = await socket.close(code: code, reason: reason)
                            return
                        case .abort:
                            socket.abort()
                            return
                        }
                    }
                }
                // The reader: hands every message to the Gateway. Once the socket has ended, the
                // writer is cancelled: a response still held back by a delay fault must not keep
                // the connection (and a shutdown waiting for it) alive.
                for await received in socket.receivedMessages {
                    await core.receive(received.message, frames: received.frameCount, on: connectionId)
                }
                let info = await socket.waitUntilClosed()
                await core.closed(connectionId, info: info)
                group.cancelAll()
            }
        }
        runtime.withLock { runtime in
            if runtime.stopped {
                task.cancel()
            } else {
                runtime.connectionTasks[socket.id] = task
                runtime.sockets[socket.id] = socket
            }
        }
        spawnTask { [weak self] in
            await task.value
            self?.runtime.withLock { runtime in
                runtime.connectionTasks[socket.id] = nil
                runtime.sockets[socket.id] = nil
            }
        }
    }

    /// Stops the Gateway: closes every connection (1001), stops listening and ends ``events``.
    /// Calling it twice is harmless.
    public func shutdown() async {
        let (listener, tasks, sockets, acceptTask, timerTask, persistTask) = runtime.withLock { runtime in
            runtime.stopped = true
            defer { runtime.listener = nil; runtime.connectionTasks = [:]; runtime.sockets = [:]; runtime.persistTask = nil }
            return (runtime.listener, runtime.connectionTasks.sorted { $0.key < $1.key }.map(\.value),
                    runtime.sockets.sorted { $0.key < $1.key }.map(\.value), runtime.acceptTask, runtime.timerTask,
                    runtime.persistTask)
        }
        timerTask?.cancel()
        await core.closeWatchSessions()
        // Requests still waiting (long polls) and every later one are answered 503.
        http.shutDown()
        switch listener {
        case .socket(let server):
            await server.shutdown()
        case .memory(let memory):
            memory.close()
            // As a stopping socket server does: a going-away close on every connection.
            for socket in sockets { _ = await socket.close(code: .goingAway, reason: "server shutting down") }
        case nil:
            break
        }
        acceptTask?.cancel()
        for task in tasks { await task.value }
        await core.finishWaiters()
        // The saver ends (cancelling its event stream) before the last save, so that nothing is
        // written once shutdown has returned.
        persistTask?.cancel()
        await persistTask?.value
        await core.persistState()
        events.finish()
    }

    // MARK: - Time

    /// Moves the Gateway clock forward and runs everything that became due (ticks, pairing,
    /// approval and question expiry, invoke timeouts).
    public func advance(by duration: Duration) async {
        clock.advance(by: duration)
        await core.processTimers()
    }

    /// The Gateway-clock instant of its next timer (tick, handshake timeout, invoke, pairing,
    /// approval or question expiry), if any.
    public func nextTimerDeadlineMs() async -> Int64? {
        await core.nextDeadlineMs()
    }

    // MARK: - Faults

    /// The next response to `method` is not sent (the request still takes effect), and, when
    /// `cutConnection` is true, the connection is then dropped without a close frame.
    public func dropNextResponse(to method: String, cutConnection: Bool = true) async {
        await core.setDropNextResponse(method: method, cut: cutConnection)
    }

    /// Delays every response by `delay` on the Gateway's time line (virtual in simulated runs),
    /// connect refusals included (their close follows the held-back response); `nil` answers
    /// promptly again.
    public func delayResponses(by delay: Duration?) async {
        await core.setResponseDelay(delay)
    }

    /// Stops sending `tick` (to exercise client watchdogs).
    public func stopTicks() async { await core.setTicksStopped(true) }

    /// Sends `tick` again.
    public func resumeTicks() async { await core.setTicksStopped(false) }

    /// Skips `count` numbers before the next `seq` of every open connection: one gap each, later
    /// events continue contiguously from there.
    public func skipSequenceNumbers(_ count: Int) async { await core.setSeqSkip(count) }

    /// Sends the next `count` event frames as binary WebSocket messages.
    public func sendNextEventsAsBinary(_ count: Int) async { await core.setNextEventsAsBinary(count) }

    /// Sends the next `count` event frames fragmented into three WebSocket fragments with
    /// pings between them.
    public func fragmentNextEvents(_ count: Int) async { await core.setNextEventsFragmented(count) }

    /// Closes a connection with a close frame.
    public func close(connectionId: String, code: Int, reason: String = "") async {
        await core.noteFault("close \(connectionId) with \(code)", on: connectionId)
        await core.close(connectionId, code: code, reason: reason)
    }

    /// Drops a connection without a close frame (TCP reset).
    public func reset(connectionId: String) async {
        await core.noteFault("TCP reset of \(connectionId)", on: connectionId)
        await core.abort(connectionId)
    }

    /// Answers every connect with `UNAVAILABLE` / close 1013 while `on` is true.
    public func setStartingUp(_ on: Bool) async { await core.setStartingUp(on) }

    /// Sends the `connect.challenge` of the next `count` connections without `ts` (a malformed
    /// challenge, which a client must not sign: docs gateway/protocol.md "Handshake").
    public func sendNextChallengesWithoutTs(_ count: Int) async { await core.setChallengesWithoutTs(count) }

    /// Sends `shutdown`, closes every connection with 1012 "service restart", refuses
    /// connections until ``resumeAfterRestart()``, and keeps the durable state (devices, tokens,
    /// pending pairing requests, approval records). As after a real restart, approvals still
    /// pending become `cancelled` (`gateway-restart`) and questions, which live in memory only,
    /// are gone.
    public func beginRestart(restartExpectedMs: Int? = 1_000) async {
        await core.shutdownForRestart(restartExpectedMs: restartExpectedMs)
        events.append(.shutdown)
    }

    /// Accepts connections again after ``beginRestart(restartExpectedMs:)``.
    public func resumeAfterRestart() async {
        await core.setAccepting(true)
        events.append(.restarted)
    }

    /// A restart: ``beginRestart(restartExpectedMs:)`` then ``resumeAfterRestart()``.
    public func restart() async {
        await beginRestart()
        await resumeAfterRestart()
    }

    /// Sends an arbitrary event to one connection, with the next `seq` when `sequenced`.
    public func sendEvent(_ event: String, payload: JSONValue?, to connectionId: String, sequenced: Bool = true) async {
        await core.sendCustomEvent(event, payload: payload, to: connectionId, sequenced: sequenced)
    }

    /// Sends an arbitrary event to every authenticated connection allowed to see it.
    public func broadcastEvent(_ event: String, payload: JSONValue?) async {
        await core.broadcast(event: event, payload: payload)
    }

    // MARK: - Waiting

    /// Waits for the first event at or after `cursor` that `predicate` accepts.
    /// - Parameters:
    ///   - cursor: a position from `events.count`; 0 searches from the beginning.
    ///   - timeout: on the clock's ``GatewayClock/waitTimeline``: virtual time in a simulated
    ///     run, real time otherwise.
    /// - Returns: the event, or `nil` on timeout.
    public func waitForEvent(from cursor: Int = 0, timeout: Duration,
                             where predicate: @escaping @Sendable (GatewayEvent) -> Bool) async -> GatewayEvent? {
        await events.first(from: cursor, timeout: timeout, on: clock.waitTimeline, where: predicate)?.element
    }
}
