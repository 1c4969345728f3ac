import Foundation
import Testing

@testable import GatewayProtocol

@Suite("Connect params")
struct ConnectParamsTests {
    static let iOSNode: JSONValue = [
        "minProtocol": 4, "maxProtocol": 4,
        "client": [
            "id": "openclaw-ios", "displayName": "Ana's iPhone", "version": "2026.8.1", "buildId": "b7",
            "platform": "iOS 18.4.0", "deviceFamily": "iPhone", "modelIdentifier": "iPhone17,1", "timeZone": "Europe/Paris",
            "mode": "node", "instanceId": "A1B2C3D4",
        ],
        "role": "node", "scopes": [], "caps": ["canvas", "camera"], "commands": ["camera.list", "location.get"],
        "permissions": ["camera.capture": true, "location": false], "pathEnv": "/usr/bin", "locale": "en-US",
        "userAgent": "Version 18.4 (Build 22E240)",
        "auth": ["token": "t", "bootstrapToken": "b", "deviceToken": "d", "password": "p"],
        "device": ["id": "abc", "publicKey": "key", "signature": "sig", "signedAt": 1_767_225_600_000, "nonce": "n"],
    ]

    @Test func everyDocumentedFieldDecodesAndRoundTrips() throws {
        let params = try ConnectParams.validate(Self.iOSNode).get()
        #expect(params.client.id == .iOS)
        #expect(params.client.timeZone == "Europe/Paris")
        #expect(params.role == .node)
        #expect(params.permissions == ["camera.capture": true, "location": false])
        #expect(params.auth == ConnectAuth(token: "t", bootstrapToken: "b", deviceToken: "d", password: "p"))
        #expect(params.device?.signedAt == 1_767_225_600_000)
        // Encoding reproduces the same JSON, and the Codable path agrees with the validator.
        #expect(try JSONValue(encoding: params) == Self.iOSNode)
        #expect(try Self.iOSNode.decode(as: ConnectParams.self) == params)
    }

    @Test func nilOptionalsAreOmittedWhenEncoding() throws {
        let params = ConnectParams(client: ClientInfo(id: .nodeHost, version: "1", platform: "darwin", mode: .node))
        let json = try JSONValue(encoding: params)
        #expect(json == ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "node-host", "version": "1", "platform": "darwin", "mode": "node"]])
    }

    @Test func theCodablePathStaysTolerantOfUnknownIdsModesAndMembers() throws {
        var json = Self.iOSNode.objectValue ?? [:]
        json["client"] = ["id": "moltbot-ios", "version": "1", "platform": "iOS", "mode": "operator", "future": 1]
        json["approvalRuntimeToken"] = "x"
        let decoded = try JSONValue.object(json).decode(as: ConnectParams.self)
        #expect(decoded.client.id.rawValue == "moltbot-ios")
        #expect(decoded.client.mode.rawValue == "operator")
        // The Gateway's schema check is closed (frames.ts ConnectParamsSchema).
        #expect(throws: ConnectParamsValidationError.self) { try ConnectParams.validate(.object(json)).get() }
    }

    @Test func theNewerOptionalMembersAreTolerated() throws {
        var json = Self.iOSNode.objectValue ?? [:]
        json["computerUse"] = ["enabled": true]
        json["workerRuns"] = ["v": 1]
        json["modelCatalog"] = ["agentId": "main"]
        json["auth"] = ["token": "t", "approvalRuntimeToken": "a", "agentRuntimeIdentityToken": "i"]
        #expect(throws: Never.self) { try ConnectParams.validate(.object(json)).get() }
    }

    @Test func integralDoubleSignedAtIsAccepted() throws {
        let text = #"{"minProtocol":4.0,"maxProtocol":4,"client":{"id":"cli","version":"1","platform":"linux","mode":"cli"},"device":{"id":"i","publicKey":"k","signature":"s","signedAt":1767225600000.0,"nonce":"n"}}"#
        let json = try JSONValue(parsing: text)
        #expect(try ConnectParams.validate(json).get().device?.signedAt == 1_767_225_600_000)
        let decoded = try JSONDecoder().decode(ConnectParams.self, from: Data(text.utf8))
        #expect(decoded.device?.signedAt == 1_767_225_600_000)
        #expect(decoded.minProtocol == 4)
    }

    @Test func aNullOptionalMemberIsNotAbsent() throws {
        var json = Self.iOSNode.objectValue ?? [:]
        json["pathEnv"] = .null
        switch ConnectParams.validate(.object(json)) {
        case .success: Issue.record("null pathEnv was accepted")
        case .failure(let error): #expect(error.message == "invalid connect params: at /pathEnv: must be string")
        }
    }

    static let client: JSONValue = ["id": "cli", "version": "1", "platform": "p", "mode": "cli"]

    static let violations: [(String, JSONValue?, String)] = [
        ("params absent", nil, "invalid connect params: at root: must be object"),
        ("params array", [], "invalid connect params: at root: must be object"),
        ("no client", ["minProtocol": 4, "maxProtocol": 4], "invalid connect params: at root: must have required property 'client'"),
        ("no minProtocol", ["maxProtocol": 4], "invalid connect params: at root: must have required property 'minProtocol'"),
        ("string protocol", ["minProtocol": "4", "maxProtocol": 4, "client": client], "invalid connect params: at /minProtocol: must be integer"),
        ("fractional protocol", ["minProtocol": 4, "maxProtocol": 4.5, "client": client], "invalid connect params: at /maxProtocol: must be integer"),
        ("zero protocol", ["minProtocol": 0, "maxProtocol": 4, "client": client], "invalid connect params: at /minProtocol: must be >= 1"),
        ("numeric client id", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": 5, "version": "1", "platform": "p", "mode": "cli"]], "invalid connect params: at /client/id: must be string"),
        ("empty client id", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "", "version": "1", "platform": "p", "mode": "cli"]], "invalid connect params: at /client/id: must be equal to one of the allowed values"),
        ("unknown client id", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "moltbot-ios", "version": "1", "platform": "p", "mode": "node"]], "invalid connect params: at /client/id: must be equal to one of the allowed values"),
        ("unknown client mode", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "cli", "version": "1", "platform": "p", "mode": "operator"]], "invalid connect params: at /client/mode: must be equal to one of the allowed values"),
        ("unknown root member", ["minProtocol": 4, "maxProtocol": 4, "client": client, "deviceName": "x"], "invalid connect params: at root: unexpected property 'deviceName'"),
        ("unknown client member", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "cli", "version": "1", "platform": "p", "mode": "cli", "nickname": "n"]], "invalid connect params: at /client: unexpected property 'nickname'"),
        ("unknown auth member", ["minProtocol": 4, "maxProtocol": 4, "client": client, "auth": ["secret": "s"]], "invalid connect params: at /auth: unexpected property 'secret'"),
        ("unknown device member", ["minProtocol": 4, "maxProtocol": 4, "client": client, "device": ["id": "i", "publicKey": "k", "signature": "s", "signedAt": 1, "nonce": "n", "alg": "ed25519"]], "invalid connect params: at /device: unexpected property 'alg'"),
        ("missing nonce", ["minProtocol": 4, "maxProtocol": 4, "client": client, "device": ["id": "i", "publicKey": "k", "signature": "s", "signedAt": 1]], "invalid connect params: at /device: must have required property 'nonce'"),
        ("empty nonce", ["minProtocol": 4, "maxProtocol": 4, "client": client, "device": ["id": "i", "publicKey": "k", "signature": "s", "signedAt": 1, "nonce": ""]], "invalid connect params: at /device/nonce: must NOT have fewer than 1 characters"),
        ("empty display name", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "cli", "displayName": "", "version": "1", "platform": "p", "mode": "cli"]], "invalid connect params: at /client/displayName: must NOT have fewer than 1 characters"),
        ("empty version", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "cli", "version": "", "platform": "p", "mode": "cli"]], "invalid connect params: at /client/version: must NOT have fewer than 1 characters"),
        ("empty role", ["minProtocol": 4, "maxProtocol": 4, "client": client, "role": ""], "invalid connect params: at /role: must NOT have fewer than 1 characters"),
        ("empty scope", ["minProtocol": 4, "maxProtocol": 4, "client": client, "scopes": ["operator.read", ""]], "invalid connect params: at /scopes/1: must NOT have fewer than 1 characters"),
        ("empty command", ["minProtocol": 4, "maxProtocol": 4, "client": client, "commands": [""]], "invalid connect params: at /commands/0: must NOT have fewer than 1 characters"),
        ("empty cap", ["minProtocol": 4, "maxProtocol": 4, "client": client, "caps": [""]], "invalid connect params: at /caps/0: must NOT have fewer than 1 characters"),
        ("empty device id", ["minProtocol": 4, "maxProtocol": 4, "client": client, "device": ["id": "", "publicKey": "k", "signature": "s", "signedAt": 1, "nonce": "n"]], "invalid connect params: at /device/id: must NOT have fewer than 1 characters"),
        ("long build id", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "cli", "version": "1", "buildId": .string(String(repeating: "b", count: 97)), "platform": "p", "mode": "cli"]], "invalid connect params: at /client/buildId: must NOT have more than 96 characters"),
        ("no mode", ["minProtocol": 4, "maxProtocol": 4, "client": ["id": "cli", "version": "1", "platform": "p"]], "invalid connect params: at /client: must have required property 'mode'"),
        ("scopes not strings", ["minProtocol": 4, "maxProtocol": 4, "client": client, "scopes": ["a", 1]], "invalid connect params: at /scopes/1: must be string"),
        ("permissions not bool", ["minProtocol": 4, "maxProtocol": 4, "client": client, "permissions": ["a/b": "yes"]], "invalid connect params: at /permissions/a~1b: must be boolean"),
        ("device without signature", ["minProtocol": 4, "maxProtocol": 4, "client": client, "device": ["id": "i", "publicKey": "k", "signedAt": 1]], "invalid connect params: at /device: must have required property 'signature'"),
        ("negative signedAt", ["minProtocol": 4, "maxProtocol": 4, "client": client, "device": ["id": "i", "publicKey": "k", "signature": "s", "signedAt": -1, "nonce": "n"]], "invalid connect params: at /device/signedAt: must be >= 0"),
        ("long device token", ["minProtocol": 4, "maxProtocol": 4, "client": client, "auth": ["deviceToken": .string(String(repeating: "a", count: 257))]], "invalid connect params: at /auth/deviceToken: must NOT have more than 256 characters"),
        ("non-ASCII bootstrap token", ["minProtocol": 4, "maxProtocol": 4, "client": client, "auth": ["bootstrapToken": "tök"]], "invalid connect params: at /auth/bootstrapToken: must contain only printable ASCII characters"),
        ("role not string", ["minProtocol": 4, "maxProtocol": 4, "client": client, "role": 1], "invalid connect params: at /role: must be string"),
    ]

    @Test(arguments: violations.indices)
    func schemaViolationsNameTheirJSONPointer(_ index: Int) {
        let (name, params, message) = Self.violations[index]
        switch ConnectParams.validate(params) {
        case .success: Issue.record("\(name) was accepted")
        case .failure(let error): #expect(error.message == message, "\(name)")
        }
    }

    @Test func resolvedRoleDefaultsToOperator() {
        let params = ConnectParams(client: ClientInfo(id: .cli, version: "1", platform: "linux", mode: .cli))
        #expect(params.resolvedRole == .operator)
    }
}

@Suite("hello-ok and events")
struct HelloAndEventTests {
    static let helloJSON: JSONValue = [
        "type": "hello-ok", "protocol": 4,
        "server": ["version": "2026.8.1", "connId": "c1"],
        "features": ["methods": ["node.event"], "events": ["tick"]],
        "snapshot": [
            "presence": [["ts": 1_767_225_600_000, "host": "gw-host", "mode": "gateway"]],
            "health": [:], "stateVersion": ["presence": 1, "health": 1], "uptimeMs": 123_456,
            "sessionDefaults": ["defaultAgentId": "main", "mainKey": "main", "mainSessionKey": "agent:main:main"],
        ],
        "auth": ["role": "node", "scopes": [], "deviceToken": "tok", "issuedAtMs": 1_767_225_600_000],
        "policy": ["maxPayload": 26_214_400, "maxBufferedBytes": 52_428_800, "tickIntervalMs": 30_000],
    ]

    @Test func documentedHelloDecodesAndReEncodesIdentically() throws {
        let hello = try Self.helloJSON.decode(as: HelloOK.self)
        #expect(hello.protocol == 4)
        #expect(hello.auth.role == .node)
        #expect(hello.snapshot.presence.first?.ts == 1_767_225_600_000)
        #expect(try JSONValue(encoding: hello) == Self.helloJSON)
    }

    @Test func fullyPopulatedHelloRoundTrips() throws {
        let hello = HelloOK(
            server: HelloServerInfo(version: "v", connId: "c"),
            features: HelloFeatures(methods: ["a"], events: ["b"], capabilities: ["c"]),
            snapshot: HelloSnapshot(
                presence: [PresenceEntry(ts: 1, host: "h", ip: "127.0.0.1", version: "v", platform: "p", deviceFamily: "f", modelIdentifier: "m", mode: "node", lastInputSeconds: 3, reason: "connect", tags: ["t"], text: "x", deviceId: "d", roles: ["node"], scopes: [], instanceId: "i")],
                health: ["ok": true], stateVersion: StateVersion(presence: 2, health: 3), uptimeMs: 9, configPath: "/c", stateDir: "/s",
                sessionDefaults: SessionDefaults(scope: "per-sender"), authMode: "token", updateAvailable: ["version": "2"], appliedConfigHash: "h"),
            auth: HelloAuth(role: .node, scopes: [], deviceToken: "dt", issuedAtMs: 5, deviceTokens: [IssuedDeviceToken(deviceToken: "op", role: .operator, scopes: ["operator.read"], issuedAtMs: 5)]),
            policy: HelloPolicy(attachments: AttachmentPolicy(maxBytes: 10, maxImageBytes: 5)),
            pluginSurfaceUrls: ["canvas": "http://h/c"], canvasHostUrl: "http://h", controlUiTabs: ["x": 1])
        let json = try JSONValue(encoding: hello)
        #expect(try json.decode(as: HelloOK.self) == hello)
        #expect(json["type"] == "hello-ok")
        #expect(json["policy"]?["tickIntervalMs"] == 30_000)
    }

    @Test func helloWithoutAuthDoesNotDecode() throws {
        var object = Self.helloJSON.objectValue ?? [:]
        object["auth"] = nil
        #expect(throws: DecodingError.self) { try JSONValue.object(object).decode(as: HelloOK.self) }
    }

    @Test func presenceEntryNeedsOnlyTs() throws {
        let entry = try jv(["ts": 5, "unknown": true]).decode(as: PresenceEntry.self)
        #expect(entry == PresenceEntry(ts: 5))
        #expect(try JSONValue(encoding: entry) == ["ts": 5])
        #expect(throws: DecodingError.self) { try jv(["host": "h"]).decode(as: PresenceEntry.self) }
    }

    @Test func challengeEventHasNoSeqAndAnIntegerTs() throws {
        let frame = ConnectChallenge(nonce: "n", ts: 1_767_225_600_000).eventFrame
        #expect(frame.seq == nil)
        #expect(Frame.event(frame).json == ["type": "event", "event": "connect.challenge", "payload": ["nonce": "n", "ts": 1_767_225_600_000]])
        #expect(try jv(["nonce": "n", "ts": 5.0]).decode(as: ConnectChallenge.self) == ConnectChallenge(nonce: "n", ts: 5))
    }

    @Test func shutdownSendsNullRestartExpectedMsWhenUnknown() throws {
        #expect(try JSONValue(encoding: ShutdownEvent()) == ["reason": "gateway stopping", "restartExpectedMs": nil])
        #expect(try JSONValue(encoding: ShutdownEvent(restartExpectedMs: 5000)) == ["reason": "gateway stopping", "restartExpectedMs": 5000])
        #expect(try jv(["restartExpectedMs": nil]).decode(as: ShutdownEvent.self) == ShutdownEvent())
        #expect(try JSONValue(encoding: TickEvent(ts: 9)) == ["ts": 9])
    }

    @Test func invokeRequestRoundTripsAndOmitsAbsentParams() throws {
        let request = NodeInvokeRequest(id: "i", nodeId: "n", command: "location.get", paramsJSON: #"{"a":1}"#, idempotencyKey: "k")
        let json = try JSONValue(encoding: request)
        #expect(json == ["id": "i", "nodeId": "n", "command": "location.get", "paramsJSON": #"{"a":1}"#, "timeoutMs": 30_000, "idempotencyKey": "k"])
        #expect(try json.decode(as: NodeInvokeRequest.self) == request)
        #expect(try JSONValue(encoding: NodeInvokeRequest(id: "i", nodeId: "n", command: "c", timeoutMs: nil)) == ["id": "i", "nodeId": "n", "command": "c"])
    }

    @Test func invokeResultNormalisesPayloadJSONAndNullError() throws {
        let swift = try jv(["id": "i", "nodeId": "n", "ok": true, "payloadJSON": #"{"lat":1}"#]).decode(as: NodeInvokeResult.self)
        #expect(swift.payloadJSON == #"{"lat":1}"#)
        #expect(swift.resolvedPayloadJSON == #"{"lat":1}"#)
        let android = try jv(["id": "i", "nodeId": "n", "ok": true, "payloadJSON": ["lat": 1], "error": nil]).decode(as: NodeInvokeResult.self)
        #expect(android.payloadJSON == nil)
        #expect(android.payload == ["lat": 1])
        #expect(android.error == nil)
        #expect(android.resolvedPayloadJSON == #"{"lat":1}"#)
        let failed = NodeInvokeResult(id: "i", nodeId: "n", ok: false, error: NodeInvokeError(code: "NODE_BACKGROUND_UNAVAILABLE", message: "app is in the background"))
        #expect(try JSONValue(encoding: failed).decode(as: NodeInvokeResult.self) == failed)
        #expect(try jv(["id": "i", "nodeId": "n", "ok": true, "payloadJSON": nil]).decode(as: NodeInvokeResult.self).payloadJSON == nil)
    }

    @Test func nodeEventAcceptsPayloadJSONPayloadOrNull() throws {
        let string = try jv(["event": "node.presence.alive", "payloadJSON": #"{"trigger":"connect"}"#]).decode(as: NodeEventParams.self)
        #expect(string.resolvedPayloadJSON == #"{"trigger":"connect"}"#)
        let object = try jv(["event": "telemetry", "payload": ["x": 1]]).decode(as: NodeEventParams.self)
        #expect(object.resolvedPayloadJSON == #"{"x":1}"#)
        let null = try jv(["event": "e", "payloadJSON": nil]).decode(as: NodeEventParams.self)
        #expect(null.resolvedPayloadJSON == nil)
        #expect(try JSONValue(encoding: string).decode(as: NodeEventParams.self) == string)
    }

    @Test func nodeEventResultsHaveBareAndStructuredShapes() throws {
        #expect(try JSONValue(encoding: NodeEventResult.bare) == ["ok": true])
        let structured = NodeEventResult.structured(event: "node.presence.alive", handled: true, reason: "persisted")
        #expect(try JSONValue(encoding: structured) == ["ok": true, "event": "node.presence.alive", "handled": true, "reason": "persisted"])
        #expect(structured.isDurable)
        #expect(!NodeEventResult.bare.isDurable)
        #expect(try jv(["ok": true]).decode(as: NodeEventResult.self) == .bare)
    }
}

/// A JSON literal as a `JSONValue` (literals need a type context).
func jv(_ value: JSONValue) -> JSONValue { value }
