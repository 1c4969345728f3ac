import Foundation
import GatewayProtocol
import Synchronization
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
    /// The Gateway's own Ed25519 identity (`gateway.identity.get`).
    public let identity: DeviceIdentity
    /// The bound port.
    public let port: Int

    let core: GatewayCore
    private let runtime: Mutex<Runtime>

    private struct Runtime: Sendable {
        var server: WebSocketServer?
        var acceptTask: Task<Void, Never>?
        var timerTask: Task<Void, Never>?
        var connectionTasks: [UInt64: Task<Void, Never>] = [:]
        var stopped = false
    }

    /// The Gateway generation it imitates.
    public var profile: GatewayProfile { configuration.profile }
    /// The clock every rule reads.
    public var clock: GatewayClock { configuration.clock }
    /// The host it listens on.
    public var host: String { configuration.host }
    /// `ws://host:port`, the URL clients connect to.
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "ws://\(host):\(port)"
    }

    private init(configuration: GatewayConfiguration, events: EventLog<GatewayEvent>, transcript: Transcript,
                 identity: DeviceIdentity, port: Int, core: GatewayCore) {
        self.configuration = configuration
        self.events = events
        self.transcript = transcript
        self.identity = identity
        self.port = port
        self.core = core
        self.runtime = Mutex(Runtime())
    }

    /// Starts a Gateway and begins accepting connections.
    /// - Throws: when the address cannot be bound, the identity seed is not 32 bytes, or the
    ///   transcript file cannot be created.
    public static func start(_ configuration: GatewayConfiguration = GatewayConfiguration()) async throws -> Gateway {
        let identity = try DeviceIdentity(seed: Data(configuration.identitySeed))
        let transcript = try Transcript(redactSecrets: configuration.redactSecrets, fileURL: configuration.transcriptFile)
        let events = EventLog<GatewayEvent>()
        let core = GatewayCore(configuration: configuration, events: events, transcript: transcript, identity: identity)
        let server = try await WebSocketServer.start(
            host: configuration.host, port: configuration.port, configuration: Self.socketConfiguration(configuration))
        let gateway = Gateway(configuration: configuration, events: events, transcript: transcript, identity: identity,
                              port: server.port, core: core)
        gateway.begin(server)
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
        do {
            let result = try await body(gateway)
            await gateway.shutdown()
            return result
        } catch {
            await gateway.shutdown()
            throw error
        }
    }

    private static func socketConfiguration(_ configuration: GatewayConfiguration) -> WebSocketConfiguration {
        WebSocketConfiguration(
            maxMessageSize: configuration.maxPayloadBytes,
            maxOutboundBufferBytes: configuration.maxBufferedBytes)
    }

    private func begin(_ server: WebSocketServer) {
        let acceptTask = Task { [weak self] in
            for await socket in server.connections {
                guard let self else { socket.abort(); continue }
                self.accept(socket)
            }
        }
        let timerTask: Task<Void, Never>? = configuration.clock.isManual ? nil : Task { [weak self] in
            // With a wall clock, timers (ticks, expiries) fire on their own. The loop sleeps until
            // the next deadline, at most 100 ms, so that deadlines added meanwhile are not late.
            while !Task.isCancelled {
                guard let self else { return }
                let now = self.clock.nowMs
                let next = await self.core.nextDeadlineMs() ?? (now + 100)
                let wait = min(max(next - now, 1), 100)
                try? await Task.sleep(for: .milliseconds(wait))
                await self.core.processTimers()
            }
        }
        runtime.withLock { runtime in
            runtime.server = server
            runtime.acceptTask = acceptTask
            runtime.timerTask = timerTask
        }
    }

    private func accept(_ socket: WebSocketConnection) {
        let task = Task { [core] in
            guard let (connectionId, outbox) = await core.open(socket) else {
                socket.abort()
                return
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    // The writer: sends what the Gateway queued, in order.
                    for await item in outbox {
                        switch item {
                        case .message(let message, let fault):
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
                group.addTask {
                    // The reader: hands every message to the Gateway.
                    for await message in socket.messages {
                        await core.receive(message, on: connectionId)
                    }
                    let info = await socket.waitUntilClosed()
                    await core.closed(connectionId, info: info)
                }
            }
        }
        runtime.withLock { runtime in
            if runtime.stopped { task.cancel() } else { runtime.connectionTasks[socket.id] = task }
        }
        Task { [weak self] in
            await task.value
            self?.runtime.withLock { _ = $0.connectionTasks.removeValue(forKey: socket.id) }
        }
    }

    /// Stops the Gateway: closes every connection (1001), stops listening and ends ``events``.
    /// Calling it twice is harmless.
    public func shutdown() async {
        let (server, tasks, acceptTask, timerTask) = runtime.withLock { runtime in
            runtime.stopped = true
            defer { runtime.server = nil; runtime.connectionTasks = [:] }
            return (runtime.server, Array(runtime.connectionTasks.values), runtime.acceptTask, runtime.timerTask)
        }
        timerTask?.cancel()
        await server?.shutdown()
        acceptTask?.cancel()
        for task in tasks { await task.value }
        await core.finishWaiters()
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

    /// Delays every response by `delay` (real time); `nil` answers promptly again.
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
        await core.noteFault("close \(connectionId) with \(code)")
        await core.close(connectionId, code: code, reason: reason)
    }

    /// Drops a connection without a close frame (TCP reset).
    public func reset(connectionId: String) async {
        await core.noteFault("TCP reset of \(connectionId)")
        await core.abort(connectionId)
    }

    /// Answers every connect with `UNAVAILABLE` / close 1013 while `on` is true.
    public func setStartingUp(_ on: Bool) async { await core.setStartingUp(on) }

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
    ///   - timeout: real time.
    /// - Returns: the event, or `nil` on timeout.
    public func waitForEvent(from cursor: Int = 0, timeout: Duration,
                             where predicate: @escaping @Sendable (GatewayEvent) -> Bool) async -> GatewayEvent? {
        await events.first(from: cursor, timeout: timeout, where: predicate)?.element
    }
}
