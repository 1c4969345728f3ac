import Foundation
import GatewayProtocol
import Testing
@testable import ReferenceNode

struct DeviceStateStoreTests {
    @Test func theIdentityPersistsAcrossReopening() throws {
        let directory = TestSupport.temporaryDirectory()
        let first = try DeviceStateStore(directory: directory, nowMs: 0)
        let second = try DeviceStateStore(directory: directory, nowMs: 0)
        #expect(first.identity.deviceId == second.identity.deviceId)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("identity.json").path))
    }

    @Test func tokensAreStoredPerGatewayAndRoleInDeviceAuthJSON() throws {
        let directory = TestSupport.temporaryDirectory()
        let store = try DeviceStateStore(directory: directory, nowMs: 0)
        store.storeToken(StoredDeviceToken(token: "n1", scopes: []), gateway: "ws://a:1/", role: .node)
        store.storeToken(StoredDeviceToken(token: "o1", scopes: ["operator.read"]), gateway: "ws://a:1", role: .operator)
        store.storeToken(StoredDeviceToken(token: "n2", scopes: []), gateway: "ws://b:2", role: .node)
        let reopened = try DeviceStateStore(directory: directory, nowMs: 0)
        #expect(reopened.token(gateway: "WS://A:1", role: .node)?.token == "n1")
        #expect(reopened.token(gateway: "ws://a:1", role: .operator)?.scopes == ["operator.read"])
        #expect(reopened.token(gateway: "ws://b:2", role: .node)?.token == "n2")
        reopened.clearToken(gateway: "ws://a:1", role: .node)
        #expect(try DeviceStateStore(directory: directory, nowMs: 0).token(gateway: "ws://a:1", role: .node) == nil)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("device-auth.json").path))
    }

    @Test func theTokenFileIsReadableByItsOwnerOnlyAndRewrittenOnlyOnChange() throws {
        let directory = TestSupport.temporaryDirectory()
        let store = try DeviceStateStore(directory: directory, nowMs: 0, durable: false)
        let file = directory.appendingPathComponent("device-auth.json")
        store.storeToken(StoredDeviceToken(token: "secret-n1", scopes: []), gateway: "ws://a:1", role: .node)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // The same token again changes nothing: the file is not replaced (same inode).
        let inode = (attributes[.systemFileNumber] as? NSNumber)?.intValue
        store.storeToken(StoredDeviceToken(token: "secret-n1", scopes: []), gateway: "ws://a:1", role: .node)
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? NSNumber)?.intValue == inode)
        store.storeToken(StoredDeviceToken(token: "secret-n2", scopes: []), gateway: "ws://a:1", role: .node)
        #expect(try DeviceStateStore(directory: directory, nowMs: 0).token(gateway: "ws://a:1", role: .node)?.token == "secret-n2")
    }

    /// A simulated run's state: the files live in memory, a store reopened on the same memory
    /// finds identity and tokens, nothing touches the directory, and writing the memory out
    /// gives the files (0600) a directory store reads back as the same device.
    @Test func stateInMemoryPersistsAcrossReopeningAndWritesOutTheSameFiles() throws {
        let directory = TestSupport.temporaryDirectory()
        let memory = InMemoryStateFiles()
        let first = try DeviceStateStore(directory: directory, nowMs: 0, memory: memory)
        first.storeToken(StoredDeviceToken(token: "n1", scopes: []), gateway: "ws://a:1", role: .node)
        let second = try DeviceStateStore(directory: directory, nowMs: 0, memory: memory)
        #expect(second.identity.deviceId == first.identity.deviceId)
        #expect(second.token(gateway: "ws://a:1", role: .node)?.token == "n1")
        #expect(memory.names == ["device-auth.json", "identity.json"])
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).isEmpty,
                "nothing was written to the directory")
        #expect(try DeviceStateStore(directory: directory, nowMs: 0, memory: InMemoryStateFiles()).identity.deviceId
                != first.identity.deviceId, "fresh memory is a fresh install")

        try memory.write(to: directory)
        let file = directory.appendingPathComponent("device-auth.json")
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try Data(contentsOf: file) == memory.contents(of: "device-auth.json"))
        let onDisk = try DeviceStateStore(directory: directory, nowMs: 0)
        #expect(onDisk.identity.deviceId == first.identity.deviceId)
        #expect(onDisk.token(gateway: "ws://a:1", role: .node)?.token == "n1")
    }

    @Test func aReinstallWipesTokensAndTheMutantKeepsThemForTheNewKey() throws {
        let store = try DeviceStateStore(directory: TestSupport.temporaryDirectory(), nowMs: 0)
        let oldId = store.identity.deviceId
        store.storeToken(StoredDeviceToken(token: "n1", scopes: []), gateway: "ws://a:1", role: .node)
        try store.reinstall(nowMs: 0, keepTokensForNewKey: false)
        #expect(store.identity.deviceId != oldId)
        #expect(store.token(gateway: "ws://a:1", role: .node) == nil)

        let mutant = try DeviceStateStore(directory: TestSupport.temporaryDirectory(), nowMs: 0)
        mutant.storeToken(StoredDeviceToken(token: "n1", scopes: []), gateway: "ws://a:1", role: .node)
        try mutant.reinstall(nowMs: 0, keepTokensForNewKey: true)
        #expect(mutant.token(gateway: "ws://a:1", role: .node)?.token == "n1")
    }

    @Test func tokensOfAnotherDeviceAreDiscardedOnLoad() throws {
        let directory = TestSupport.temporaryDirectory()
        let store = try DeviceStateStore(directory: directory, nowMs: 0)
        store.storeToken(StoredDeviceToken(token: "n1", scopes: []), gateway: "ws://a:1", role: .node)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("identity.json"))
        #expect(try DeviceStateStore(directory: directory, nowMs: 0).token(gateway: "ws://a:1", role: .node) == nil)
    }

    @Test func aBootstrapTokenIsKeptUntilCleared() throws {
        let store = try DeviceStateStore(directory: TestSupport.temporaryDirectory(), nowMs: 0)
        store.setBootstrapToken("boot", gateway: "ws://a:1")
        #expect(store.bootstrapToken(gateway: "ws://a:1") == "boot")
        store.setBootstrapToken(nil, gateway: "ws://a:1")
        #expect(store.bootstrapToken(gateway: "ws://a:1") == nil)
    }

    @Test func anUnreadableIdentityFileIsReplaced() throws {
        let directory = TestSupport.temporaryDirectory()
        try Data("not json".utf8).write(to: directory.appendingPathComponent("identity.json"))
        let store = try DeviceStateStore(directory: directory, nowMs: 0)
        #expect(store.identity.deviceId.count == 64)
    }
}

struct LivenessRuleTests {
    @Test func seqGapsAreReportedAndEventsWithoutSeqAreNotChecked() {
        var tracker = SeqTracker()
        #expect(tracker.observe(nil) == .inOrder)
        #expect(tracker.observe(1) == .inOrder)
        #expect(tracker.observe(2) == .inOrder)
        #expect(tracker.observe(nil) == .inOrder)
        #expect(tracker.observe(5) == .gap(expected: 3, received: 5))
        #expect(tracker.observe(6) == .inOrder)
        #expect(tracker.observe(4) == .stale(last: 6, received: 4))
    }

    @Test func theWatchdogExpiresAtTwiceTheTickInterval() {
        let watchdog = TickWatchdog(tickIntervalMs: 30_000, lastTickMs: 1_000)
        #expect(watchdog.deadlineMs == 61_000)
        #expect(!watchdog.isExpired(nowMs: 60_999))
        #expect(watchdog.isExpired(nowMs: 61_000))
    }
}

/// The spins that wait for a sleeper to register are bounded by the suite's time limit: the limit
/// cancels the test, and the spin checks for cancellation.
@Suite(.timeLimit(.minutes(1)))
struct ClientClockTests {
    @Test func aManualClockWakesSleepersWhenAdvanced() async throws {
        let clock = ManualClientClock(startMs: 0)
        let sleeper = Task { try await clock.sleep(untilMs: 1_000) }
        while clock.sleeperCount == 0 { try Task.checkCancellation(); await Task.yield() }
        clock.advance(byMs: 999)
        #expect(clock.sleeperCount == 1)
        clock.advance(byMs: 1)
        try await sleeper.value
        #expect(clock.nowMs == 1_000)
    }

    @Test func aCancelledSleeperThrows() async {
        let clock = ManualClientClock(startMs: 0)
        let sleeper = Task { try await clock.sleep(forMs: 10) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aClockReadingAnotherSourceWakesOnDemand() async throws {
        let source = ManualClientClock(startMs: 100)
        let clock = ManualClientClock(reading: { source.nowMs })
        let sleeper = Task { try await clock.sleep(untilMs: 200) }
        while clock.sleeperCount == 0 { try Task.checkCancellation(); await Task.yield() }
        source.advance(byMs: 100)
        clock.wake()
        try await sleeper.value
        #expect(clock.nowMs == 200)
    }

    @Test func theSeededGeneratorIsDeterministic() {
        var a = SeededGenerator(seed: 9)
        var b = SeededGenerator(seed: 9)
        #expect((0..<4).map { _ in a.next() } == (0..<4).map { _ in b.next() })
    }
}
