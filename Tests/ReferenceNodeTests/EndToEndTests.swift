import Foundation
import GatewayProtocol
import MockGateway
import ReferenceAdapter
import Simulation
import Testing
import WebSocketTransport
@testable import ReferenceNode

/// A fake Gateway and a reference client in one deterministic simulation: an in-memory network,
/// one virtual time line, every task on the simulation's executor. (`sockets: true` puts them on
/// real loopback sockets and real time instead, to keep that path covered.)
struct EndToEnd {
    let gateway: Gateway
    let client: ReferenceClient
    let simulation: (VirtualTimeline, InMemoryNetwork)?

    static let wait: Duration = .seconds(10)

    static func start(profile: GatewayProfile = .current, approval: AutoApprovalPolicy = .auto,
                      operatorSession: OperatorSessionPolicy = .disabled, mutants: Set<Mutant> = [],
                      withSetupCode: Bool = false, startingUp: Bool = false, simulation: (VirtualTimeline, InMemoryNetwork)?,
                      stateDirectory: URL = TestSupport.temporaryDirectory()) async throws -> EndToEnd {
        var configuration = GatewayConfiguration(profile: profile, autoApproval: approval, startingUp: startingUp)
        // A hint longer than any first backoff step, so that a client ignoring it shows.
        configuration.startingUpRetryAfterMs = 5_000
        let connector: any WebSocketConnector
        if let (timeline, network) = simulation {
            configuration.clock = .manual(on: timeline)
            configuration.network = network
            connector = network
        } else {
            connector = SocketConnector()
        }
        let gateway = try await Gateway.start(configuration)
        let clock: any ClientClock
        if simulation != nil {
            clock = VirtualClientClock(clock: gateway.clock)
        } else {
            let gatewayClock = gateway.clock
            clock = ManualClientClock(reading: { gatewayClock.nowMs })
        }
        let setupCode = withSetupCode ? await gateway.makeSetupCode().encoded : nil
        let client = ReferenceClient(configuration: ReferenceConfiguration(
            gatewayURL: gateway.url, stateDirectory: stateDirectory, seed: 42, clock: clock, mutants: mutants,
            operatorSession: operatorSession, setupCode: setupCode, connector: connector, reproducible: true))
        try await client.start()
        return EndToEnd(gateway: gateway, client: client, simulation: simulation)
    }

    /// Starts another Gateway in the same world (time line and network); the caller shuts it down.
    func startGateway(_ configuration: GatewayConfiguration) async throws -> Gateway {
        var configuration = configuration
        if let (timeline, network) = simulation {
            configuration.clock = .manual(on: timeline)
            configuration.network = network
        }
        return try await Gateway.start(configuration)
    }

    /// Runs `body` against a started pair and shuts both down afterwards: in a simulation, or on
    /// real sockets with `sockets: true`.
    static func run(profile: GatewayProfile = .current, approval: AutoApprovalPolicy = .auto,
                    operatorSession: OperatorSessionPolicy = .disabled, mutants: Set<Mutant> = [],
                    withSetupCode: Bool = false, startingUp: Bool = false, sockets: Bool = false, seed: UInt64 = 1,
                    _ body: @escaping @Sendable (EndToEnd) async throws -> Void) async throws {
        let scenario: @Sendable ((VirtualTimeline, InMemoryNetwork)?) async throws -> Void = { simulation in
            let pair = try await start(profile: profile, approval: approval, operatorSession: operatorSession, mutants: mutants,
                                       withSetupCode: withSetupCode, startingUp: startingUp, simulation: simulation)
            do {
                try await body(pair)
            } catch {
                await pair.shutdown()
                throw error
            }
            await pair.shutdown()
        }
        guard !sockets, #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else {
            // Simulations need task executors (macOS 15, iOS 18); earlier systems use sockets.
            try await scenario(nil)
            return
        }
        let timeline = VirtualTimeline()
        let executor = SimulationExecutor(seed: seed, timeline: timeline, limits: .init(wallClock: .seconds(60)))
        try await executor.run { try await scenario((timeline, InMemoryNetwork())) }
    }

    func shutdown() async {
        await client.stop()
        await gateway.shutdown()
    }

    /// Moves the clock forward (a jump: everything due wakes at the new time).
    func advance(_ milliseconds: Int64) async {
        await gateway.advance(by: .milliseconds(milliseconds))
    }

    /// Waits for a client observation at or after `cursor`.
    func observed(from cursor: Int = 0, timeout: Duration = EndToEnd.wait,
                  _ predicate: @escaping @Sendable (ClientObservation) -> Bool) async -> ClientObservation? {
        await client.observations.first(from: cursor, timeout: timeout, on: gateway.clock.waitTimeline, where: predicate)
    }

    /// Waits until the session of `role` is connected, advancing the clocks in steps of
    /// `stepMs` so that reconnect timers fire.
    func connected(_ role: String, from cursor: Int = 0, stepMs: Int64 = 1_000, steps: Int = 40) async -> Bool {
        for _ in 0..<steps {
            let found = await observed(from: cursor, timeout: .milliseconds(250)) { observation in
                if case .connected(let r, _) = observation { return r == role }
                return false
            }
            if found != nil { return true }
            await advance(stepMs)
        }
        return false
    }

    /// Advances the clocks in steps until an observation matching `predicate` appears at or
    /// after `cursor` (timers armed just after a step still fire on a later step).
    func advance(until predicate: @escaping @Sendable (ClientObservation) -> Bool, from cursor: Int,
                 stepMs: Int64 = 500, steps: Int = 40) async -> ClientObservation? {
        for _ in 0..<steps {
            if let found = await observed(from: cursor, timeout: .milliseconds(100), predicate) { return found }
            await advance(stepMs)
        }
        return await observed(from: cursor, timeout: .milliseconds(500), predicate)
    }

    /// The first Gateway event matching `predicate`.
    func gatewayEvent(from cursor: Int = 0, _ predicate: @escaping @Sendable (GatewayEvent) -> Bool) async -> GatewayEvent? {
        await gateway.waitForEvent(from: cursor, timeout: EndToEnd.wait, where: predicate)
    }
}

@Suite(.serialized, .timeLimit(.minutes(1)))
struct EndToEndTests {
    /// Also over real loopback sockets and real time, to keep the client's socket path covered.
    @Test(arguments: [false, true])
    func pairingApprovalThenReconnectPresentsTheStoredToken(sockets: Bool) async throws {
        try await EndToEnd.run(approval: .manual, sockets: sockets) { pair in
            let request = try #require(await pair.gateway.nextPairingRequest(timeout: EndToEnd.wait))
            let pending = await pair.observed { if case .pairingPending = $0 { return true } else { return false } }
            #expect(pending == .pairingPending(role: "node", requestId: request.requestId))
            _ = try await pair.gateway.approve(requestId: request.requestId)
            #expect(await pair.client.apply(.connect) == .ok)
            let deviceId = try #require(await pair.client.deviceId)
            #expect(await pair.gateway.waitUntilNodeConnected(deviceId, timeout: EndToEnd.wait))
            let issued = try #require(await pair.client.snapshot().storedTokens["node"]?.token)

            let cursor = pair.gateway.events.count
            #expect(await pair.client.apply(.restart) == .ok)
            #expect(await pair.connected("node", from: pair.client.observations.count - 2))
            let session = await pair.gatewayEvent(from: cursor) { if case .sessionOpened = $0 { return true } else { return false } }
            guard case .sessionOpened(let info)? = session else { Issue.record("no session after restart"); return }
            #expect(info.presentedToken == issued)
            #expect(info.deviceId == deviceId)
        }
    }

    @Test func retriesWhilePendingKeepOneRequest() async throws {
        try await EndToEnd.run(approval: .manual) { pair in
            let request = try #require(await pair.gateway.nextPairingRequest(timeout: EndToEnd.wait))
            let first = try #require(await pair.observed { if case .pairingPending = $0 { return true } else { return false } })
            let cursor = pair.client.observations.all.firstIndex(of: first).map { $0 + 1 } ?? 0
            let retried = await pair.advance(until: { if case .pairingPending = $0 { return true } else { return false } }, from: cursor)
            #expect(retried == .pairingPending(role: "node", requestId: request.requestId))
            #expect(await pair.gateway.pendingPairingRequests().map(\.requestId) == [request.requestId])
        }
    }

    @Test func theNewKeyEveryConnectMutantChurnsRequests() async throws {
        try await EndToEnd.run(approval: .manual, mutants: [.newKeyEveryConnect]) { pair in
            let first = try #require(await pair.gateway.nextPairingRequest(timeout: EndToEnd.wait))
            let cursor = pair.gateway.events.count
            var second: PairingRequestInfo?
            for _ in 0..<40 where second == nil {
                await pair.advance(500)
                second = await pair.gateway.nextPairingRequest(after: cursor, timeout: .milliseconds(100))
            }
            #expect(second.map { $0.deviceId != first.deviceId } == true)
        }
    }

    @Test func invokesAreAnsweredOncePerIdWithTheNodeId() async throws {
        try await EndToEnd.run { pair in
            #expect(await pair.connected("node"))
            let deviceId = try #require(await pair.client.deviceId)
            guard case .result(let info) = await pair.gateway.invoke(nodeId: deviceId, command: "device.info") else {
                Issue.record("no device.info result"); return
            }
            #expect(info.ok && info.nodeId == deviceId)
            #expect(info.payloadJSON.flatMap { try? JSONValue(parsing: $0) }?["deviceId"]?.stringValue == deviceId)

            #expect(await pair.client.apply(.enterBackground) == .ok)
            guard case .result(let refused) = await pair.gateway.invoke(nodeId: deviceId, command: "camera.snap") else {
                Issue.record("no camera.snap result"); return
            }
            #expect(!refused.ok && refused.error?.code == "NODE_BACKGROUND_UNAVAILABLE")
        }
    }

    @Test func aRepeatedIdempotencyKeyReturnsTheFirstResult() async throws {
        try await EndToEnd.run { pair in
            #expect(await pair.connected("node"))
            let deviceId = try #require(await pair.client.deviceId)
            let first = await pair.gateway.invoke(nodeId: deviceId, command: "debug.counter", idempotencyKey: "k1")
            let second = await pair.gateway.invoke(nodeId: deviceId, command: "debug.counter", idempotencyKey: "k1")
            let third = await pair.gateway.invoke(nodeId: deviceId, command: "debug.counter", idempotencyKey: "k2")
            guard case .result(let a) = first, case .result(let b) = second, case .result(let c) = third else {
                Issue.record("missing results"); return
            }
            #expect(a.payloadJSON == b.payloadJSON)
            #expect(a.payloadJSON != c.payloadJSON)
        }
    }

    @Test func aSlowCommandAnswersWithAnErrorBeforeTimeoutMs() async throws {
        try await EndToEnd.run { pair in
            #expect(await pair.connected("node"))
            let deviceId = try #require(await pair.client.deviceId)
            let gateway = pair.gateway
            let outcome = spawnTask { await gateway.invoke(nodeId: deviceId, command: "debug.slow", timeoutMs: 10_000) }
            // 9 steps of 1 s stay below the Gateway's own 10 s timeout; the client answers at 8 s.
            let answered = await pair.advance(until: { if case .invokeAnswered = $0 { return true } else { return false } },
                                              from: 0, stepMs: 1_000, steps: 9)
            guard case .invokeAnswered(_, let ok)? = answered else { Issue.record("no answer before timeoutMs"); return }
            #expect(!ok)
            guard case .result(let result) = await outcome.value else { Issue.record("the node did not answer in time"); return }
            #expect(!result.ok && result.error?.code == "UNAVAILABLE")
        }
    }

    @Test(arguments: [("current", true), ("legacy", false)])
    func thePresenceBeaconIsDurableOnlyWithHandledTrue(profileName: String, durable: Bool) async throws {
        let profile = try #require(GatewayProfile.named(profileName))
        try await EndToEnd.run(profile: profile) { pair in
            #expect(await pair.connected("node"))
            #expect(await pair.client.apply(.backgroundWake(trigger: "silent_push")) == .ok)
            let reply = await pair.observed { if case .beaconReplied = $0 { return true } else { return false } }
            guard case .beaconReplied(let isDurable, _)? = reply else { Issue.record("no beacon reply"); return }
            #expect(isDurable == durable)

            let cursor = pair.client.observations.count
            #expect(await pair.client.apply(.backgroundWake(trigger: "bg_app_refresh")) == .ok)
            let next = await pair.observed(from: cursor) { observation in
                switch observation {
                case .beaconSent, .beaconSkipped: true
                default: false
                }
            }
            #expect(next == (durable ? .beaconSkipped : .beaconSent(trigger: "bg_app_refresh")))
        }
    }

    @Test func relayPushCarriesTheGatewayIdentity() async throws {
        try await EndToEnd.run(operatorSession: .enabled) { pair in
            #expect(await pair.connected("node"))
            #expect(await pair.connected("operator"))
            #expect(await pair.client.apply(.pushRegister(transport: "relay", environment: "sandbox")) == .ok)
            let registered = await pair.gatewayEvent { if case .pushRegistered = $0 { return true } else { return false } }
            guard case .pushRegistered(_, let transport, let accepted, let gatewayDeviceId)? = registered else {
                Issue.record("no push registration"); return
            }
            #expect(transport == "relay" && accepted)
            #expect(gatewayDeviceId == pair.gateway.identity.deviceId)
        }
    }

    @Test func anApprovalIsResolvedWithAnAllowedDecision() async throws {
        try await EndToEnd.run(operatorSession: .enabled) { pair in
            #expect(await pair.connected("operator"))
            let record = try await pair.gateway.createApproval(command: "rm -rf build", allowedDecisions: [.allowOnce, .deny])
            #expect(await pair.client.apply(.resolveApproval(id: record.id, decision: "allow-always")) != .ok)
            #expect(await pair.client.apply(.resolveApproval(id: record.id, decision: "allow-once")) == .ok)
            #expect(await pair.gateway.approval(id: record.id)?.decision == .allowOnce)
        }
    }

    @Test func aLostResolveReplyIsReadBackAfterReconnecting() async throws {
        try await EndToEnd.run(operatorSession: .enabled) { pair in
            #expect(await pair.connected("operator"))
            let record = try await pair.gateway.createApproval(command: "npm publish", allowedDecisions: [.allowOnce, .deny])
            await pair.gateway.dropNextResponse(to: "approval.resolve")
            let cursor = pair.client.observations.count
            #expect(await pair.client.apply(.resolveApproval(id: record.id, decision: "deny")) != .ok)
            let locked = await pair.client.snapshot().approvals.first { $0.id == record.id }
            #expect(locked?.isLocked == true)
            #expect(await pair.client.apply(.resolveApproval(id: record.id, decision: "deny")) != .ok)
            #expect(await pair.connected("operator", from: cursor))
            let readBack = await pair.observed(from: cursor) { $0 == .approvalReadBack(id: record.id) }
            #expect(readBack != nil)
            let card = await pair.client.snapshot().approvals.first { $0.id == record.id }
            #expect(card?.phase == .terminal(status: "denied", decision: "deny"))
        }
    }

    @Test func theLegacyGatewayGetsExecApprovalResolve() async throws {
        try await EndToEnd.run(profile: .legacy, operatorSession: .enabled) { pair in
            #expect(await pair.connected("operator"))
            let record = try await pair.gateway.createApproval(command: "ls", allowedDecisions: [.allowOnce, .deny])
            let cursor = pair.gateway.events.count
            #expect(await pair.client.apply(.resolveApproval(id: record.id, decision: "deny")) == .ok)
            let resolve = await pair.gatewayEvent(from: cursor) { event in
                if case .requestHandled(_, let method, _, _) = event { return method == "exec.approval.resolve" }
                return false
            }
            #expect(resolve != nil)
            let unified = pair.gateway.events.all.dropFirst(cursor).contains { event in
                if case .requestHandled(_, let method, _, _) = event { return method.hasPrefix("approval.") }
                return false
            }
            #expect(!unified)
        }
    }

    @Test func questionsAreAnsweredAndReloadedAfterReconnect() async throws {
        try await EndToEnd.run(operatorSession: .enabled) { pair in
            #expect(await pair.connected("operator"))
            let first = try await pair.gateway.createQuestion("Deploy where?", options: ["Staging", "Production"])
            #expect(await pair.client.apply(.answerQuestion(id: first.id, answer: ["Staging", "Production"])) != .ok)
            #expect(await pair.client.apply(.answerQuestion(id: first.id, answer: "Staging")) == .ok)
            #expect(await pair.gateway.question(id: first.id)?.status.rawValue == "answered")

            #expect(await pair.client.apply(.disconnect) == .ok)
            let second = try await pair.gateway.createQuestion("Ship it?", options: ["Yes", "No"])
            let cursor = pair.client.observations.count
            #expect(await pair.client.apply(.connect) == .ok)
            #expect(await pair.connected("operator", from: cursor))
            #expect(await pair.observed(from: cursor) { $0 == .questionsReloaded } != nil)
            #expect(await pair.client.snapshot().questions.contains { $0.id == second.id && $0.status == .pending })
        }
    }

    @Test func theSignWithoutNonceMutantIsRejected() async throws {
        try await EndToEnd.run(mutants: [.signWithoutNonce]) { pair in
            let rejected = await pair.gatewayEvent { if case .handshakeRejected = $0 { return true } else { return false } }
            guard case .handshakeRejected(_, let error, let closeCode)? = rejected else { Issue.record("not rejected"); return }
            // The current schema requires device.nonce.
            #expect(error.message == "invalid connect params: at /device: must have required property 'nonce'" && closeCode == 1008)
        }
    }

    @Test func binaryAndFragmentedEventsAreUnderstood() async throws {
        try await EndToEnd.run { pair in
            #expect(await pair.connected("node"))
            let deviceId = try #require(await pair.client.deviceId)
            await pair.gateway.sendNextEventsAsBinary(1)
            guard case .result(let binary) = await pair.gateway.invoke(nodeId: deviceId, command: "device.status") else {
                Issue.record("no answer to a binary invoke"); return
            }
            #expect(binary.ok)
            await pair.gateway.fragmentNextEvents(1)
            guard case .result(let fragmented) = await pair.gateway.invoke(nodeId: deviceId, command: "device.status") else {
                Issue.record("no answer to a fragmented invoke"); return
            }
            #expect(fragmented.ok)
        }
    }
}
