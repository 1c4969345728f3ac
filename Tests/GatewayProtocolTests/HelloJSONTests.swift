import Foundation
import Testing

@testable import GatewayProtocol

/// The hand-built JSON of the hello and of the frame envelope's values is exactly what
/// `JSONValue(encoding:)` makes of them: the same value and the same bytes, with every optional
/// member absent and present, and with numbers in the opaque members normalised the same way.
@Suite("Hello and envelope JSON without Codable")
struct HelloJSONTests {
    private static func expectSame<T: Encodable>(_ built: JSONValue, _ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let encoded = try JSONValue(encoding: value)
        #expect(built == encoded, sourceLocation: sourceLocation)
        #expect(built.jsonString == encoded.jsonString, sourceLocation: sourceLocation)
    }

    static let fullPresence = PresenceEntry(
        ts: 1_700_000_000_123, host: "mock-gateway", ip: "127.0.0.1", version: "2026.8.1", platform: "iOS 18.4",
        deviceFamily: "iPhone", modelIdentifier: "iPhone17,1", mode: "node", lastInputSeconds: 42, reason: "connect",
        tags: ["a", "b"], text: "text \"quoted\"", deviceId: "d1", roles: ["node"], scopes: [], instanceId: "i1")

    static let full = HelloOK(
        protocol: 4,
        server: HelloServerInfo(version: "2026.8.1", connId: "c-1"),
        features: HelloFeatures(methods: ["connect", "node.event"], events: ["tick"], capabilities: ["x"]),
        snapshot: HelloSnapshot(
            presence: [PresenceEntry(ts: 1), fullPresence], health: ["ok": true, "ratio": 2.0, "nested": [1.5, 3.0]],
            stateVersion: StateVersion(presence: 3, health: 1), uptimeMs: 99, configPath: "/etc/c.json", stateDir: "/var/s",
            sessionDefaults: SessionDefaults(scope: "per-sender"), authMode: "token", updateAvailable: ["version": 1.0],
            appliedConfigHash: "abc"),
        auth: HelloAuth(role: .node, scopes: ["operator.read"], deviceToken: "tok", issuedAtMs: 5,
                        deviceTokens: [IssuedDeviceToken(deviceToken: "t2", role: .operator, scopes: ["operator.read"], issuedAtMs: 6),
                                       IssuedDeviceToken(deviceToken: "t3", role: "worker", scopes: [])]),
        policy: HelloPolicy(attachments: AttachmentPolicy(maxBytes: 10, maxImageBytes: 20)),
        pluginSurfaceUrls: ["canvas": "http://127.0.0.1:1/canvas"], canvasHostUrl: "http://127.0.0.1:1", controlUiTabs: [["id": 1.0]])

    static let minimal = HelloOK(
        server: HelloServerInfo(version: "1", connId: "c"), features: HelloFeatures(methods: [], events: []),
        snapshot: HelloSnapshot(health: .null, uptimeMs: 0), auth: HelloAuth(role: .operator, scopes: []))

    @Test func theHelloIsWhatCodableMakesOfIt() throws {
        try Self.expectSame(try Self.full.json(), Self.full)
        try Self.expectSame(try Self.minimal.json(), Self.minimal)
        try Self.expectSame(Self.fullPresence.json, Self.fullPresence)
        try Self.expectSame(PresenceEvent(presence: [Self.fullPresence, PresenceEntry(ts: 2)]).json,
                            PresenceEvent(presence: [Self.fullPresence, PresenceEntry(ts: 2)]))
        try Self.expectSame(SessionDefaults(scope: "per-sender").json, SessionDefaults(scope: "per-sender"))
        try Self.expectSame(SessionDefaults().json, SessionDefaults())
    }

    /// Shown to fail by leaving `deviceFamily` out of `ClientInfo.json` and by writing
    /// `signedAt` as a string: both expectations of the full params failed.
    @Test func connectParamsAndTheChallengeAreWhatCodableMakesOfThem() throws {
        let full = ConnectParams(
            client: ClientInfo(id: .iOS, displayName: "Ana's iPhone", version: "2026.8.1", buildId: "b7", platform: "iOS 18.4.0",
                               deviceFamily: "iPhone", modelIdentifier: "iPhone17,1", timeZone: "Europe/Paris", mode: .node,
                               instanceId: "A1"),
            role: .node, scopes: [], caps: ["canvas"], commands: ["camera.list"], permissions: ["camera.capture": true, "location": false],
            pathEnv: "/usr/bin", auth: ConnectAuth(token: "t", bootstrapToken: "b", deviceToken: "d", password: "p"),
            device: DeviceProof(id: "abc", publicKey: "key", signature: "sig", signedAt: 1_767_225_600_000, nonce: "n"),
            locale: "en-US", userAgent: "Version 18.4 (Build 22E240)")
        let minimal = ConnectParams(client: ClientInfo(id: .nodeHost, version: "1", platform: "darwin", mode: .node))
        try Self.expectSame(full.json, full)
        try Self.expectSame(minimal.json, minimal)
        let partial = ConnectParams(minProtocol: 3, client: minimal.client, role: .operator, auth: ConnectAuth(),
                                    device: DeviceProof(id: "d", publicKey: "k", signature: "s", signedAt: -1, nonce: nil))
        try Self.expectSame(partial.json, partial)
        try Self.expectSame(ConnectAuth(deviceToken: "d").json, ConnectAuth(deviceToken: "d"))
        try Self.expectSame(ConnectChallenge(nonce: "n \"q\"", ts: 1_767_225_600_000).json, ConnectChallenge(nonce: "n \"q\"", ts: 1_767_225_600_000))
    }

    @Test func errorsAndStateVersionsAreWhatCodableMakesOfThem() throws {
        let errors = [
            ErrorShape(code: "NOT_PAIRED", message: "pairing required"),
            ErrorShape(code: "UNAVAILABLE", message: "m", details: ["code": "X", "after": 2.0, "list": [1.25]], retryable: true,
                       retryAfterMs: 500),
            ErrorShape(code: "A", message: "", details: .null, retryable: false),
        ]
        for error in errors { try Self.expectSame(try error.json(), error) }
        try Self.expectSame(StateVersion(presence: 7, health: 2).json, StateVersion(presence: 7, health: 2))
    }

    @Test func aNonFiniteNumberThrowsWhereCodableThrows() {
        let error = ErrorShape(code: "A", message: "m", details: ["x": .double(.infinity)])
        #expect(throws: EncodingError.self) { try JSONValue(encoding: error) }
        #expect(throws: EncodingError.self) { try error.json() }
        var hello = Self.minimal
        hello.snapshot.health = ["x": .double(.nan)]
        #expect(throws: EncodingError.self) { try JSONValue(encoding: hello) }
        #expect(throws: EncodingError.self) { try hello.json() }
    }

    @Test func framesCarryTheSameErrorAndStateVersion() throws {
        let error = ErrorShape(code: "UNAVAILABLE", message: "m", details: ["code": "X"], retryable: true, retryAfterMs: 5)
        let response = Frame.response(.failure(id: "r1", error: error)).json
        #expect(response["error"] == (try JSONValue(encoding: error)))
        let event = Frame.event(EventFrame(event: "presence", payload: [:], seq: 3, stateVersion: StateVersion(presence: 2, health: 1))).json
        #expect(event["stateVersion"] == (try JSONValue(encoding: StateVersion(presence: 2, health: 1))))
    }
}
