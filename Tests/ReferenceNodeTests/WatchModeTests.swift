import Foundation
import GatewayProtocol
import MockGateway
import ReferenceAdapter
import Simulation
import Testing
import WebSocketTransport
@testable import ReferenceNode

/// The Apple Watch direct mode of the reference client against the fake Gateway's Watch routes
/// (docs/protocol.md §13), in one simulation on the Gateway clock: it pairs with a `node` setup
/// code's bootstrap token, keeps its device token and drops the bootstrap token, answers invokes
/// through `result`, polls again after an empty poll, and challenges and connects again with its
/// device token after its session expired. Tried against breaks: not clearing the bootstrap token
/// fails the `hasPendingBootstrapToken` check; ending the loop on a 401 fails the second connect.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct WatchModeTests {
    @Test func pairsPollsAnswersAndReconnectsWithItsDeviceToken() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
        let timeline = VirtualTimeline()
        let executor = SimulationExecutor(seed: 7, timeline: timeline, limits: .init(wallClock: .seconds(60)))
        try await executor.run {
            let (gateway, client) = try await Self.watchClientAndGateway(on: timeline, clientSeed: 42)
            try await client.start()
            let wait: Duration = .seconds(10)
            do {
                let deviceId = try #require(await client.deviceId)
                let first = await gateway.waitForEvent(timeout: wait) {
                    if case .nodeConnected(let nodeId, _) = $0 { return nodeId == deviceId }
                    return false
                }
                guard case .nodeConnected(_, let firstConnection)? = first else {
                    Issue.record("the Watch never connected")
                    await client.stop(); await gateway.shutdown(); return
                }
                guard case .result(let info) = await gateway.invoke(nodeId: deviceId, command: NodeCommandName.deviceInfo.rawValue) else {
                    Issue.record("no device.info result through result")
                    await client.stop(); await gateway.shutdown(); return
                }
                #expect(info.ok && info.nodeId == deviceId)
                // The result came from a poll, so the connect's answer was handled before it.
                let snapshot = await client.snapshot()
                #expect(snapshot.storedTokens[GatewayRole.node.rawValue] != nil, "the device token is stored")
                #expect(!snapshot.hasPendingBootstrapToken, "the bootstrap token is dropped after pairing")


                // The held poll answers event: null after 20 s; the Watch polls again and still answers.
                await gateway.advance(by: .seconds(20))
                guard case .result(let status) = await gateway.invoke(nodeId: deviceId, command: NodeCommandName.deviceStatus.rawValue) else {
                    Issue.record("no device.status result after the poll timeout")
                    await client.stop(); await gateway.shutdown(); return
                }
                #expect(status.ok)

                // One jump past the session's idle expiry: the next poll is refused 401 and the Watch
                // challenges and connects again, with its device token.
                await gateway.advance(by: .seconds(120))
                let second = await gateway.waitForEvent(timeout: wait) {
                    if case .nodeConnected(let nodeId, let connectionId) = $0 { return nodeId == deviceId && connectionId != firstConnection }
                    return false
                }
                #expect(second != nil, "the Watch connected again after its session expired")
                // A result through the new session: the connect's answer was handled before it.
                guard case .result(let again) = await gateway.invoke(nodeId: deviceId, command: NodeCommandName.deviceInfo.rawValue) else {
                    Issue.record("no device.info result after the second connect")
                    await client.stop(); await gateway.shutdown(); return
                }
                #expect(again.ok)
                let watch = await client.watchSnapshot()
                #expect(watch?.connects == ["bootstrap", "device"], "credentials presented: \(watch?.connects ?? [])")
                #expect(watch?.status == .polling)
            } catch {
                await client.stop()
                await gateway.shutdown()
                throw error
            }
            await client.stop()
            await gateway.shutdown()
        }
    }

    /// A Watch that goes away while its poll waits ends its session at that same virtual instant,
    /// inside the simulation: the request's own task hears of the cancellation and tells the
    /// Gateway. When the cancellation handler started a plain `Task { }` instead, the simulated
    /// run went idle before that task ran, virtual time jumped to the poll's 20 s (the poll was
    /// answered `event: null` instead of closing the session) or the run stalled, depending on
    /// the machine's timing (break tried: resuming the held poll from a `Task { }` in
    /// `HeldWatchPolls.wait`'s cancellation handler; the session then closed 20 s late or never in
    /// most seeds of one run, and in none of the next: a timing race, hence the 40 seeds).
    @Test func aPollAbandonedByItsClientClosesTheSessionAtTheSameInstant() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
        for seed in UInt64(1)...40 {
            let timeline = VirtualTimeline()
            let executor = SimulationExecutor(seed: seed, timeline: timeline, limits: .init(wallClock: .seconds(30)))
            let (closedAtMs, leftAtMs) = try await executor.run { () async throws -> (Int64?, Int64) in
                let (gateway, client) = try await Self.watchClientAndGateway(on: timeline, clientSeed: seed)
                try await client.start()
                _ = await gateway.waitForEvent(timeout: .seconds(10)) {
                    if case .watchRequest(_, let path) = $0 { return path == WatchDirectRules.pollPath }
                    return false
                }
                await timeline.untilIdle()
                let leftAtMs = gateway.clock.nowMs
                let stopped = gateway.events.count
                await client.stop()
                let closed = await gateway.waitForEvent(from: stopped, timeout: .seconds(60)) {
                    if case .nodeDisconnected = $0 { return true }
                    return false
                }
                let closedAtMs: Int64? = closed == nil ? nil : gateway.clock.nowMs
                await gateway.shutdown()
                return (closedAtMs, leftAtMs)
            }
            #expect(closedAtMs == leftAtMs, "seed \(seed): the session closed at \(closedAtMs.map(String.init) ?? "never"), the client left at \(leftAtMs)")
        }
    }

    /// A Gateway on `timeline` over an in-memory network and the reference client in Watch mode,
    /// holding a `node` setup code for it (not started).
    static func watchClientAndGateway(on timeline: VirtualTimeline, clientSeed: UInt64) async throws -> (Gateway, ReferenceClient) {
        let network = InMemoryNetwork()
        var configuration = GatewayConfiguration()
        configuration.clock = .manual(on: timeline)
        configuration.network = network
        let gateway = try await Gateway.start(configuration)
        let code = await gateway.makeSetupCode(profile: .nodeOnly)
        var clientConfiguration = ReferenceConfiguration(
            gatewayURL: gateway.url, stateDirectory: TestSupport.temporaryDirectory(), seed: clientSeed,
            clock: VirtualClientClock(clock: gateway.clock), persona: .appleWatch, operatorSession: .disabled,
            setupCode: code.encoded, connector: network, reproducible: true)
        clientConfiguration.transport = .watchDirect
        return (gateway, ReferenceClient(configuration: clientConfiguration))
    }
}
