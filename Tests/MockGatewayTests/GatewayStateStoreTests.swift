import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// The state directory of `harness serve --state-dir`: the versioned file, what it keeps across a
/// restart (setup outcomes included) and what a Gateway started from it must not print.
@Suite("Gateway state directory")
struct GatewayStateStoreTests {
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static let deviceToken = "DeviceTokenRestoredFromTheStateFile_0123456"
    static let bootstrapToken = "BootstrapTokenRestoredFromTheStateFile_0123"

    /// A state with one device token, one bootstrap token and both kinds of setup outcome.
    static func sampleState() -> GatewayPersistentState {
        let token = DeviceToken(token: deviceToken, role: .node, scopes: [], createdAtMs: 1_000)
        let issued = IssuedBootstrapToken(token: bootstrapToken, profile: .limited, issuedAtMs: 2_000, setupId: "setup-b")
        return GatewayPersistentState(
            identitySeed: Array(repeating: 0x21, count: 32), generation: 3,
            pairing: PairingStoreState(devices: [], pendingRequests: [], tokens: [("device-1", token)]),
            bootstrapTokens: [BootstrapTokenStore.Record(issued: issued, boundDeviceId: "device-2", boundPublicKey: "key-2",
                                                         consumedAtMs: 2_500)],
            setupOutcomes: [
                SetupOutcome(setupId: "setup-a", deviceId: "device-1", deviceName: "Watch", access: .node, ts: 1_500,
                             delivery: .completed),
                SetupOutcome(setupId: "setup-b", deviceId: "device-2", access: .limited, ts: 2_500, delivery: .deliveryUncertain),
            ])
    }

    @Test func aStateWithSetupOutcomesRoundTripsThroughTheFile() throws {
        let state = Self.sampleState()
        let data = GatewayStateFile.encode(state)
        let object = try #require(try JSONValue(parsing: data).objectValue)
        #expect(object["version"] == .int(Int64(GatewayStateFile.version)))
        #expect(GatewayStateFile.version == 2)
        let outcomes = try #require(object["setupOutcomes"]?.arrayValue)
        #expect(outcomes.map { $0["delivery"]?.stringValue } == ["completed", "deliveryUncertain"])
        #expect(outcomes.first?["deviceName"] == "Watch")
        #expect(try GatewayStateFile.decode(data, source: "test") == state)
    }

    @Test func aVersionOneFileStillLoadsAndIsRewrittenAsVersionTwo() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // What a build that wrote version 1 left behind: no setupOutcomes.
        var object = try #require(try JSONValue(parsing: GatewayStateFile.encode(Self.sampleState())).objectValue)
        object["version"] = 1
        object.removeValue(forKey: "setupOutcomes")
        let file = directory.appendingPathComponent(GatewayStateFile.fileName)
        try Data(JSONValue.object(object).encoded()).write(to: file)

        let store = try GatewayStateStore(directory: directory)
        let loaded = try #require(store.loaded)
        #expect(loaded.setupOutcomes.isEmpty)
        #expect(loaded.pairing.tokens.map(\.token.token) == [Self.deviceToken])
        #expect(loaded.bootstrapTokens.map(\.issued.setupId) == ["setup-b"])
        #expect(try store.save(loaded))
        let rewritten = try #require(try JSONValue(parsing: Data(contentsOf: file)).objectValue)
        #expect(rewritten["version"] == 2)
        #expect(rewritten["setupOutcomes"] == .array([]))
    }

    @Test(arguments: [
        (#"{"version": 3}"#, "has state format version 3, written by a newer harness; this one reads versions 1 to 2"),
        (#"{"version": 0}"#, "has state format version 0; this harness reads versions 1 to 2"),
        (#"{"version": "2"}"#, #"has state format version "2"; this harness reads versions 1 to 2"#),
        (#"{"setupOutcomes": null}"#, "is damaged: a version 2 state has no setupOutcomes"),
        (#"{"setupOutcomes": [{"setupId": "s", "deviceId": "d", "access": "admin", "ts": 1, "delivery": "completed"}]}"#,
         #"is damaged: setupOutcomes.0 has access "admin""#),
        (#"{"setupOutcomes": [{"setupId": "s", "deviceId": "d", "access": "full", "ts": 1, "delivery": "lost"}]}"#,
         #"is damaged: setupOutcomes.0 has access "full" (full, limited or node) and delivery "lost" (completed or deliveryUncertain)"#),
    ])
    func aFileOfAnotherVersionOrWithABadOutcomeIsAClearError(change: String, message: String) throws {
        var object = try #require(try JSONValue(parsing: GatewayStateFile.encode(Self.sampleState())).objectValue)
        for (key, value) in try #require(try JSONValue(parsing: Data(change.utf8)).objectValue) {
            if value == .null { object.removeValue(forKey: key) } else { object[key] = value }
        }
        do {
            _ = try GatewayStateFile.decode(Data(JSONValue.object(object).encoded()), source: "/state/gateway-state.json")
            Issue.record("\(change) was accepted")
        } catch {
            #expect(error.description.hasPrefix("/state/gateway-state.json \(message)"), "\(error.description)")
            #expect(error.description.contains("left as it is"), "\(error.description)")
        }
    }

    @Test func setupOutcomesAreAnsweredAgainAfterARestart() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let phone = try TestIdentities.make(0x51)
        let (used, unused) = try await Gateway.withGateway(GatewayConfiguration(stateStore: try GatewayStateStore(directory: directory))) { gateway in
            // A mobile profile: the iOS node is approved silently.
            let used = await gateway.issueSetupCode(profile: .limited)
            let unused = await gateway.issueSetupCode(profile: .nodeOnly)
            let client = try await TestClient.open(gateway.url, identity: phone)
            let hello = try await client.connect(client.connectParams(bootstrapToken: used.code.bootstrapToken))
            #expect(hello.ok, "\(hello)")
            await client.close()
            #expect(await gateway.setupOutcome(setupId: used.setupId)?.delivery == .completed)
            return (used, unused)
        }
        let saved = try #require(try GatewayStateStore(directory: directory).loaded)
        #expect(saved.setupOutcomes.map(\.setupId) == [used.setupId])

        try await Gateway.withGateway(GatewayConfiguration(stateStore: try GatewayStateStore(directory: directory))) { gateway in
            let outcome = try #require(await gateway.setupOutcome(setupId: used.setupId))
            #expect(outcome.deviceId == phone.deviceId)
            #expect(outcome.deviceName == "Test iPhone")
            #expect(outcome.access == .limited)
            #expect(await gateway.setupOutcome(setupId: unused.setupId) == nil, "an unused code has no outcome")
        }
    }

    @Test func restoredTokensAreRedactedFromTheFirstLine() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let line = "a stray frame mentions \(Self.deviceToken) and \(Self.bootstrapToken)"
        // Without the state the Gateway has never seen these values: they pass unchanged.
        try await Gateway.withGateway { gateway in
            #expect(gateway.secrets.redact(text: line) == line)
        }
        try GatewayStateFile.encode(Self.sampleState()).write(to: directory.appendingPathComponent(GatewayStateFile.fileName))
        try await Gateway.withGateway(GatewayConfiguration(stateStore: try GatewayStateStore(directory: directory))) { gateway in
            #expect(gateway.secrets.redact(text: line) == "a stray frame mentions <redacted> and <redacted>")
        }
        // --show-secrets: nothing is redacted, restored or not.
        try await Gateway.withGateway(GatewayConfiguration(redactSecrets: false,
                                                           stateStore: try GatewayStateStore(directory: directory))) { gateway in
            #expect(gateway.secrets.redact(text: line) == line)
        }
    }
}
