import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// The configuration a test starts the Gateway with (a fixtures document, as `harness serve
/// --fixtures` reads it): secrets at sensitive paths (a token, a password, an API key, a secret
/// inside an array, a service account object under `secrets`), a `${VAR}` placeholder that stays,
/// and values at harmless paths (`maxTokens`, a number at a sensitive path) that stay.
private let document = #"""
    {"config": {
      "gateway": {"auth": {"mode": "token", "token": "gw-secret-1"}, "remote": {"password": "pw-2", "url": "ws://h:1"}},
      "talk": {"apiKey": "${ELEVENLABS_API_KEY}", "voiceId": "v1"},
      "tools": {"web": {"search": {"api_key": "brave-3", "maxResults": 5}}},
      "agents": {"defaults": {"maxTokens": "4096", "model": {"primary": "anthropic/claude"}}},
      "hooks": {"secretValues": ["s-4", 7, {"note": "n"}], "tokenTtl": 60},
      "secrets": {"serviceAccount": {"email": "a@b", "key": "k-5"}},
      "ui": {"seamColor": "#ff0000"}
    }}
    """#

private func configuration() throws -> GatewayConfiguration {
    var configuration = GatewayConfiguration()
    configuration.fixtures = try GatewayFixtures(json: try JSONValue(parsing: document))
    return configuration
}

/// `config.get` over real sockets (upstream `src/gateway/server-methods/config.ts@df97f02f`,
/// `redactConfigSnapshot` in `src/config/redact-snapshot.ts@0b981a51`, `isSensitiveConfigPath`
/// in `src/config/schema.hints.ts@002d5d1e`, `ConfigGetParamsSchema` in
/// `packages/gateway-protocol/src/schema/config.ts@00632cd5`).
///
/// Breaks tried (each also fails the `config-get` Python wire check): redacting `${VAR}`
/// placeholders too (the redaction and path-rule tests fail), testing only the last key instead
/// of the whole dotted path (`hooks.secretValues[].note` and `secrets.serviceAccount` stay in
/// clear: both tests fail).
@Suite("config.get")
struct ConfigGetMethodTests {
    @Test("the snapshot of the fixture configuration, secrets redacted, hash of the clear text")
    func redactsTheSnapshot() async throws {
        try await Gateway.withGateway(try configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE1),
                                                                scopes: [OperatorScope.read.rawValue])
            #expect(reader.hello.features.methods.contains(GatewayMethod.configGet.rawValue))
            let response = try await reader.client.request(GatewayMethod.configGet.rawValue, params: [:])
            let payload = try #require(response.payload)
            let redacted = ConfigSnapshot.redactedSentinel
            let expected: JSONValue = [
                "gateway": ["auth": ["mode": "token", "token": .string(redacted)],
                            "remote": ["password": .string(redacted), "url": "ws://h:1"]],
                "talk": ["apiKey": "${ELEVENLABS_API_KEY}", "voiceId": "v1"],
                "tools": ["web": ["search": ["api_key": .string(redacted), "maxResults": 5]]],
                "agents": ["defaults": ["maxTokens": "4096", "model": ["primary": "anthropic/claude"]]],
                "hooks": ["secretValues": [.string(redacted), 7, ["note": .string(redacted)]], "tokenTtl": 60],
                "secrets": ["serviceAccount": .string(redacted)],
                "ui": ["seamColor": "#ff0000"],
            ]
            #expect(payload["config"] == expected)
            #expect(payload["parsed"] == expected && payload["resolved"] == expected)
            let raw = try #require(payload["raw"]?.stringValue)
            #expect(try JSONValue(parsing: raw) == expected)
            for secret in ["gw-secret-1", "pw-2", "brave-3", "s-4", "k-5"] {
                #expect(!payload.jsonString.contains(secret), "\(secret) leaked")
            }
            let clear = JSONValue.object(await gateway.gatewayConfig()).jsonString
            #expect(payload["hash"] == .string(SHA256Digest.hex(Data(clear.utf8))))
            #expect(payload["path"] == "(in memory)" && payload["exists"] == true && payload["valid"] == true)
            #expect(payload["issues"] == [] && payload["warnings"] == [] && payload["legacyIssues"] == [])

            // The configuration is a fixture: the scripting API replaces it.
            await gateway.setGatewayConfig(["channels": ["telegram": ["botToken": "t-6", "enabled": true]]])
            let replaced = try await reader.client.request(GatewayMethod.configGet.rawValue, params: [:])
            #expect(replaced.payload?["config"] == ["channels": ["telegram": ["botToken": .string(redacted), "enabled": true]]])
        }
    }

    @Test("the path rule: token at the end, password, secret, api?key anywhere in the dotted path")
    func sensitivePaths() {
        for path in ["gateway.auth.token", "channels.slack.botToken", "x.Password.y", "secrets.providers.a",
                     "talk.apiKey", "a.api-key", "a.API_KEY", "a.apikey", "hooks.secretValues[]"] {
            #expect(ConfigSnapshot.isSensitive(path), "\(path)")
        }
        for path in ["agents.defaults.maxTokens", "gateway.tokenTtl", "a.api__key", "ui.seamColor", "a.keys[]"] {
            #expect(!ConfigSnapshot.isSensitive(path), "\(path)")
        }
        #expect(ConfigSnapshot.isEnvPlaceholder(" ${A_B} ") && ConfigSnapshot.isEnvPlaceholder("${}"))
        #expect(!ConfigSnapshot.isEnvPlaceholder("${A}x") && !ConfigSnapshot.isEnvPlaceholder("${A}}"))
    }

    @Test("closed empty params; a node is refused by role, a pairing operator by scope; an empty configuration")
    func refuses() async throws {
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xE2),
                                                                scopes: [OperatorScope.read.rawValue])
            let closed = try await reader.client.request(GatewayMethod.configGet.rawValue, params: ["path": "gateway"])
            #expect(closed.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                               message: "invalid config.get params: at root: unexpected property 'path'"))
            let empty = try await reader.client.request(GatewayMethod.configGet.rawValue, params: [:])
            #expect(empty.payload?["config"] == [:] && empty.payload?["raw"] == "{}")
            try await TestSessions.expectReadRefusals(gateway, .configGet, nodeByte: 0xE3, operatorByte: 0xE4)
        }
    }

    @Test("a fixtures document's config must be an object")
    func fixtureDocument() throws {
        do {
            _ = try GatewayFixtures(json: try JSONValue(parsing: #"{"config": []}"#))
            Issue.record("accepted an array")
        } catch let error as GatewayFixtures.FixtureError {
            #expect(error.description == "at /config: must be object")
        }
    }
}
