import Foundation
import GatewayProtocol
@testable import MockGateway
import Testing

/// The catalogue a test starts the Gateway with: a native command with arguments, a text-only
/// command, a native-only skill command and a plugin command.
private let catalogue: [CommandFixture] = [
    CommandFixture(name: "model", description: "Switch the model", category: "options", source: "native", scope: "both",
                   acceptsArgs: true, args: [CommandArgFixture(name: "model", description: "the model", type: "string",
                                                               required: true,
                                                               choices: [CommandArgChoice(value: "a", label: "A")])]),
    CommandFixture(name: "think", description: "Thinking level", source: "native", scope: "text", acceptsArgs: true, args: []),
    CommandFixture(name: "weather", description: "Weather skill", source: "skill", scope: "native", acceptsArgs: false),
    CommandFixture(name: "ping", description: "Plugin ping", source: "plugin", scope: "both", acceptsArgs: false),
]

private func configuration() -> GatewayConfiguration {
    var configuration = GatewayConfiguration()
    configuration.fixtures = GatewayFixtures(commands: catalogue)
    return configuration
}

/// `commands.list` over real sockets (upstream `src/gateway/server-methods/commands.ts@405925c6`,
/// `src/gateway/protocol/schema/commands.ts@405925c6`).
///
/// Breaks tried: keeping every command whatever `scope` asks (the filter test fails), sending
/// `args` with `includeArgs: false` (fails), accepting an unknown member (the refusal test
/// fails), answering an unknown `agentId` with the catalogue (fails), declaring the method
/// `operator.write` (the scope test fails: a read-only operator is refused).
@Suite("commands.list")
struct CommandsListMethodTests {
    @Test("lists the fixture catalogue in order with args; scope filters keep `both`; includeArgs false drops args")
    func lists() async throws {
        try await Gateway.withGateway(configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC1),
                                                                scopes: [OperatorScope.read.rawValue])
            #expect(reader.hello.features.methods.contains(GatewayMethod.commandsList.rawValue))
            let all = try await reader.client.request(GatewayMethod.commandsList.rawValue, params: [:])
            let model: JSONValue = [
                "name": "model", "description": "Switch the model", "category": "options", "source": "native",
                "scope": "both", "acceptsArgs": true,
                "args": [["name": "model", "description": "the model", "type": "string", "required": true,
                          "choices": [["value": "a", "label": "A"]]]],
            ]
            let think: JSONValue = ["name": "think", "description": "Thinking level", "source": "native", "scope": "text",
                                    "acceptsArgs": true]
            let weather: JSONValue = ["name": "weather", "description": "Weather skill", "source": "skill",
                                      "scope": "native", "acceptsArgs": false]
            let ping: JSONValue = ["name": "ping", "description": "Plugin ping", "source": "plugin", "scope": "both",
                                   "acceptsArgs": false]
            #expect(all.payload == ["commands": [model, think, weather, ping]], "no args member for an empty args list")

            let native = try await reader.client.request(GatewayMethod.commandsList.rawValue, params: ["scope": "native"])
            #expect(native.payload?["commands"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["model", "weather", "ping"])
            let text = try await reader.client.request(GatewayMethod.commandsList.rawValue,
                                                       params: ["scope": "text", "includeArgs": false, "agentId": "main",
                                                                "provider": "telegram"])
            #expect(text.payload?["commands"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["model", "think", "ping"])
            #expect(text.payload?["commands"]?.arrayValue?.first?["args"] == nil)

            // The catalogue is a fixture: the scripting API replaces it.
            await gateway.setCommands([CommandFixture(name: "only", description: "")])
            let replaced = try await reader.client.request(GatewayMethod.commandsList.rawValue, params: nil)
            #expect(replaced.payload == ["commands": [["name": "only", "description": "", "source": "native", "scope": "both",
                                                       "acceptsArgs": false]]])
        }
    }

    @Test("closed params, typed members, unknown agents; a node is refused by role")
    func refuses() async throws {
        try await Gateway.withGateway(configuration()) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC2),
                                                                scopes: [OperatorScope.read.rawValue])
            let cases: [(JSONValue, String)] = [
                (["sessionKey": "main"], "invalid commands.list params: at root: unexpected property 'sessionKey'"),
                (["scope": "chat"], "invalid commands.list params: at /scope: must be equal to one of the allowed values"),
                (["includeArgs": "yes"], "invalid commands.list params: at /includeArgs: must be boolean"),
                (["agentId": ""], "invalid commands.list params: at /agentId: must NOT have fewer than 1 characters"),
                (["provider": 3], "invalid commands.list params: at /provider: must be string"),
                ("commands", "invalid commands.list params: at root: must be object"),
                (["agentId": "ghost"], #"unknown agent id "ghost""#),
            ]
            for (params, message) in cases {
                let response = try await reader.client.request(GatewayMethod.commandsList.rawValue, params: params)
                #expect(response.error == invalidRequest(message), "\(params)")
            }
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0xC3))
            let refused = try await node.client.request(GatewayMethod.commandsList.rawValue, params: [:])
            #expect(refused.error?.message == "unauthorized role: node")
        }
    }

    @Test("an operator without operator.read is refused")
    func scope() async throws {
        try await Gateway.withGateway(configuration()) { gateway in
            let pairing = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC4),
                                                                 scopes: [OperatorScope.pairing.rawValue])
            let refused = try await pairing.client.request(GatewayMethod.commandsList.rawValue, params: [:])
            #expect(refused.error?.message == "missing scope: operator.read")
        }
    }
}

/// `talk.mode` and its broadcast over real sockets (upstream
/// `src/gateway/server-methods/talk.ts@10d9d44c`, `TalkModeParamsSchema` in
/// `packages/gateway-protocol/src/schema/channels.ts@836cdead`).
///
/// Breaks tried: not broadcasting (the event wait times out), broadcasting a refused call (the
/// first `talk.mode` the writer sees carries the refused payload), `phase` left out instead of
/// `null` (the payload comparison fails), declaring the method `operator.read` (the scope test
/// fails), sending the event to a read-only operator (the frame scan finds it).
@Suite("talk.mode")
struct TalkModeMethodTests {
    @Test("answers {enabled, phase, ts} and broadcasts it as talk.mode to write operators, not to read-only ones")
    func switches() async throws {
        try await Gateway.withGateway { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC5),
                                                                scopes: [OperatorScope.read.rawValue])
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC6),
                                                                scopes: [OperatorScope.write.rawValue])
            let talker = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC7),
                                                                scopes: [OperatorScope.talk.rawValue])
            #expect(talker.hello.features.methods.contains(GatewayMethod.talkMode.rawValue))
            let on = try await talker.client.request(GatewayMethod.talkMode.rawValue,
                                                     params: ["enabled": true, "phase": "listening"])
            let ts = try #require(on.payload?["ts"]?.int64Value)
            #expect(on.payload == ["enabled": true, "phase": "listening", "ts": .int(ts)])
            let event = try await writer.client.event(GatewayEventName.talkMode.rawValue)
            #expect(event.payload == on.payload)
            let off = try await writer.client.request(GatewayMethod.talkMode.rawValue, params: ["enabled": false])
            #expect(off.payload?["phase"] == .null)
            #expect(off.payload?["enabled"] == false)
            // The read-only operator saw neither switch: the frames before the next voice wake
            // change hold no talk.mode.
            await gateway.setVoiceWakeTriggers(["marker"])
            var names: [String] = []
            while let frame = try await reader.client.nextFrame() {
                guard case .event(let event) = frame else { continue }
                names.append(event.event)
                if event.event == GatewayEventName.voicewakeChanged.rawValue { break }
            }
            #expect(!names.contains(GatewayEventName.talkMode.rawValue), "\(names)")
        }
    }

    @Test("closed params: enabled required and boolean, phase a string; refusals broadcast nothing; read-only is refused")
    func refuses() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC8),
                                                                scopes: [OperatorScope.write.rawValue])
            let cases: [(JSONValue?, String)] = [
                (nil, "invalid talk.mode params: at root: must have required property 'enabled'"),
                (["enabled": "yes"], "invalid talk.mode params: at /enabled: must be boolean"),
                (["enabled": true, "phase": 1], "invalid talk.mode params: at /phase: must be string"),
                (["enabled": true, "mode": "ptt"], "invalid talk.mode params: at root: unexpected property 'mode'"),
            ]
            for (params, message) in cases {
                let response = try await writer.client.request(GatewayMethod.talkMode.rawValue, params: params)
                #expect(response.error == invalidRequest(message), "\(String(describing: params))")
            }
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xC9),
                                                                scopes: [OperatorScope.read.rawValue])
            let refused = try await reader.client.request(GatewayMethod.talkMode.rawValue, params: ["enabled": true])
            #expect(refused.error?.message == "missing scope: operator.talk")
            // A switch from elsewhere is the first talk.mode the writer sees.
            await gateway.switchTalkMode(enabled: true, phase: "elsewhere")
            let event = try await writer.client.event(GatewayEventName.talkMode.rawValue)
            #expect(event.payload?["phase"] == "elsewhere")
        }
    }
}

/// The fixtures document of `harness serve --fixtures` and the console commands `commands` and
/// `talk-mode`. Break tried: accepting an unknown member in an entry (the refusal test fails).
@Suite("Fixtures: document and console")
struct FixtureDocumentTests {
    @Test("a fixtures document is read in upstream's entry shape; the first problem is named by its JSON pointer")
    func document() throws {
        let good = try JSONValue(parsing: #"{"commands":[{"name":"status","description":"Show status","category":"status","source":"native","scope":"both","acceptsArgs":true,"args":[{"name":"verbose","description":"","type":"boolean","choices":[{"value":"1","label":"yes"}],"dynamic":true}]}]}"#)
        let fixtures = try GatewayFixtures(json: good)
        #expect(fixtures.commands.first?.args?.first?.dynamic == true)
        #expect(fixtures.commands.first?.category == "status")
        let cases: [(String, String)] = [
            (#"[]"#, "at root: must be object"),
            (#"{"agents":[]}"#, "at root: unexpected property 'agents'"),
            (#"{"skills":[]}"#, "at /skills: must be object"),
            (#"{"commands":{}}"#, "at /commands: must be array"),
            (#"{"commands":[{"name":"x","description":"","source":"native","scope":"both"}]}"#,
             "at /commands/0: must have required property 'acceptsArgs'"),
            (#"{"commands":[{"name":"x","description":"","source":"core","scope":"both","acceptsArgs":false}]}"#,
             "at /commands/0/source: must be one of native, skill, plugin"),
            (#"{"commands":[{"name":"","description":"","source":"native","scope":"both","acceptsArgs":false}]}"#,
             "at /commands/0/name: must NOT have fewer than 1 characters"),
            (#"{"commands":[{"name":"x","description":"","source":"native","scope":"both","acceptsArgs":true,"args":[{"name":"a","description":"","type":"date"}]}]}"#,
             "at /commands/0/args/0/type: must be one of string, number, boolean"),
            (#"{"commands":[{"name":"x","description":"","source":"native","scope":"both","acceptsArgs":false,"hidden":true}]}"#,
             "at /commands/0: unexpected property 'hidden'"),
        ]
        for (text, message) in cases {
            #expect(throws: GatewayFixtures.FixtureError.self) { try GatewayFixtures(json: try JSONValue(parsing: text)) }
            do {
                _ = try GatewayFixtures(json: try JSONValue(parsing: text))
            } catch let error as GatewayFixtures.FixtureError {
                #expect(error.description == message, "\(text)")
            }
        }
        #expect(throws: GatewayFixtures.FixtureError(pointer: "", problem: "not JSON")) {
            try GatewayFixtures(data: Data("{".utf8))
        }
    }

    @Test("console: commands shows and replaces the catalogue; talk-mode broadcasts; bad entries are refused")
    func console() async throws {
        try await Gateway.withGateway(configuration()) { gateway in
            let console = GatewayConsole(gateway: gateway)
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xCA),
                                                                scopes: [OperatorScope.write.rawValue])
            let shown = try #require(await console.handle("commands"))
            #expect(shown.result.map { $0.text } == "slash commands: /model, /think, /weather, /ping")
            let set = try #require(await console.handle(
                #"commands [{"name":"status","description":"s","source":"native","scope":"both","acceptsArgs":false}]"#))
            #expect(set.result.map { $0.text } == "slash commands: /status")
            #expect(await gateway.commands().map(\.name) == ["status"])
            #expect(await console.handle(#"commands [{"name":"x"}]"#)?.errorMessage
                == "commands: at /0: must have required property 'description'")
            let talk = try #require(await console.handle("talk-mode on listening"))
            #expect(talk.result.map { $0.text } == "talk mode on (phase listening): talk.mode sent")
            let event = try await writer.client.event(GatewayEventName.talkMode.rawValue)
            #expect(event.payload?["enabled"] == true && event.payload?["phase"] == "listening")
        }
    }
}

/// `models.list` over model fixtures. Break tried: answering the built-in catalogue whatever the
/// fixtures say (both expectations fail).
@Suite("models.list: fixtures")
struct ModelFixtureTests {
    @Test("the configured models are answered for every view, and the scripting API replaces them; a bad model entry is refused")
    func models() async throws {
        var configuration = GatewayConfiguration()
        configuration.fixtures = try GatewayFixtures(json: try JSONValue(parsing:
            #"{"models":[{"id":"opus","name":"Opus","provider":"anthropic","contextWindow":200000,"reasoning":true}]}"#))
        try await Gateway.withGateway(configuration) { gateway in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xCB),
                                                                scopes: [OperatorScope.read.rawValue])
            let opus: JSONValue = ["id": "opus", "name": "Opus", "provider": "anthropic", "contextWindow": 200000,
                                   "reasoning": true]
            let listed = try await reader.client.request(GatewayMethod.modelsList.rawValue, params: ["view": "all"])
            #expect(listed.payload == ["models": [opus]])
            await gateway.setModels([ModelFixture(id: "m", name: "M", provider: "p", alias: "em")])
            let replaced = try await reader.client.request(GatewayMethod.modelsList.rawValue, params: [:])
            #expect(replaced.payload == ["models": [["id": "m", "name": "M", "provider": "p", "alias": "em"]]])
        }
        do {
            _ = try GatewayFixtures(json: try JSONValue(parsing: #"{"models":[{"id":"x","name":"X"}]}"#))
            Issue.record("a model without a provider was accepted")
        } catch let error as GatewayFixtures.FixtureError {
            #expect(error.description == "at /models/0: must have required property 'provider'")
        }
    }
}
