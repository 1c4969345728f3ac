import Foundation
import GatewayProtocol
import MockGateway
import Testing

/// `voicewake.get` / `voicewake.set` and the `voicewake.changed` broadcast over real sockets
/// (upstream `src/gateway/server-methods/voicewake.ts`, `normalizeVoiceWakeTriggers`).
///
/// Breaks tried: not broadcasting after `voicewake.set` (the event waits time out), keeping the
/// triggers untrimmed or without the 32/64 bounds (the normalisation test fails), answering an
/// empty list instead of the defaults.
@Suite("voicewake.get/set")
struct VoiceWakeMethodTests {
    @Test("set normalises, answers the stored list and broadcasts voicewake.changed to operators and nodes; get reads it back")
    func setBroadcasts() async throws {
        try await Gateway.withGateway { gateway in
            let node = try await TestSessions.nodeSession(gateway, identity: try TestIdentities.make(0xB1))
            let initial = try await node.client.event(GatewayEventName.voicewakeChanged.rawValue)
            #expect(initial.payload == ["triggers": ["openclaw", "claude"]], "the node's connect-time triggers")
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB2),
                                                                scopes: [OperatorScope.read.rawValue])
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB3),
                                                                scopes: [OperatorScope.write.rawValue])
            #expect(reader.hello.features.methods.contains(GatewayMethod.voicewakeGet.rawValue))
            let before = try await reader.client.request(GatewayMethod.voicewakeGet.rawValue, params: [:])
            #expect(before.payload == ["triggers": ["openclaw", "claude"]])

            let set = try await writer.client.request(GatewayMethod.voicewakeSet.rawValue,
                                                      params: ["triggers": ["  hey claw ", "", 7, "computer"]])
            #expect(set.payload == ["triggers": ["hey claw", "computer"]])
            for session in [node, reader, writer] {
                let changed = try await session.client.event(GatewayEventName.voicewakeChanged.rawValue)
                #expect(changed.payload == ["triggers": ["hey claw", "computer"]])
            }
            let after = try await reader.client.request(GatewayMethod.voicewakeGet.rawValue, params: nil)
            #expect(after.payload == ["triggers": ["hey claw", "computer"]])
            #expect(await gateway.voiceWakeTriggers() == ["hey claw", "computer"])
        }
    }

    @Test("at most 32 triggers of at most 64 UTF-16 units; nothing left means the defaults")
    func bounds() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB4),
                                                                scopes: [OperatorScope.write.rawValue])
            let many = (0..<40).map { JSONValue.string("word \($0)") }
            let long = String(repeating: "a", count: 63) + "😀" + "b"
            let response = try await writer.client.request(GatewayMethod.voicewakeSet.rawValue,
                                                           params: ["triggers": .array([.string(long)] + many)])
            let triggers = response.payload?["triggers"]?.arrayValue ?? []
            #expect(triggers.count == 32)
            #expect(triggers.first == .string(String(repeating: "a", count: 63)), "the emoji's surrogate pair is not split")
            let empty = try await writer.client.request(GatewayMethod.voicewakeSet.rawValue, params: ["triggers": ["  ", 1]])
            #expect(empty.payload == ["triggers": ["openclaw", "claude"]])
        }
    }

    @Test("set without a triggers array is INVALID_REQUEST and broadcasts nothing; set needs operator.write")
    func refuses() async throws {
        try await Gateway.withGateway { gateway in
            let writer = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB5),
                                                                scopes: [OperatorScope.write.rawValue])
            for params: JSONValue? in [nil, [:], ["triggers": "openclaw"]] {
                let response = try await writer.client.request(GatewayMethod.voicewakeSet.rawValue, params: params)
                #expect(response.error == ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                                     message: "voicewake.set requires triggers: string[]"))
            }
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB6),
                                                                scopes: [OperatorScope.read.rawValue])
            let refused = try await reader.client.request(GatewayMethod.voicewakeSet.rawValue, params: ["triggers": ["x"]])
            #expect(refused.error?.message == "missing scope: operator.write")
            // A change from elsewhere (the scripting API) is the first voicewake.changed the
            // writer sees: the refusals above sent none.
            await gateway.setVoiceWakeTriggers(["elsewhere"])
            let changed = try await writer.client.event(GatewayEventName.voicewakeChanged.rawValue)
            #expect(changed.payload == ["triggers": ["elsewhere"]])
        }
    }
}

/// Methods the fake Gateway does not serve are reported once per method
/// (`GatewayEvent.methodUnserved`, console `method.unserved`). Break tried: reporting every call
/// (the count test fails).
@Suite("Unserved methods are reported")
struct UnservedMethodReportTests {
    @Test("an unknown or unserved method is logged once per name, with the first caller; served methods are not")
    func reportsOnce() async throws {
        try await Gateway.withGateway { gateway in
            let admin = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB7),
                                                               scopes: [OperatorScope.admin.rawValue])
            let unserved = GatewayMethod.lastHeartbeat.rawValue
            for method in [unserved, unserved, "no.such.method", GatewayMethod.status.rawValue, unserved] {
                let response = try await admin.client.request(method, params: [:])
                #expect(response.error?.message == "unknown method: \(method)")
            }
            _ = try await admin.client.request(GatewayMethod.voicewakeGet.rawValue, params: [:])
            #expect(gateway.unservedMethodCalls() == [GatewayMethod.lastHeartbeat.rawValue, "no.such.method", GatewayMethod.status.rawValue])
            let first = gateway.events.all.first { if case .methodUnserved = $0 { true } else { false } }
            #expect(first == .methodUnserved(method: GatewayMethod.lastHeartbeat.rawValue, connectionId: admin.connectionId))
            let line = try #require(first.flatMap { ConsoleEventLine.describing($0) })
            #expect(line.text.contains("method.unserved") && line.text.contains(GatewayMethod.lastHeartbeat.rawValue))
        }
    }
}

/// The console commands of the apps' fixtures (`voicewake`, `workspace`), through
/// `GatewayConsole.handle` as `harness serve` runs them.
@Suite("Console: voicewake and workspace")
struct AppConsoleCommandTests {
    @Test("voicewake shows and replaces the triggers (broadcast to a connected operator); bad JSON is refused")
    func voicewake() async throws {
        try await GatewayConsole.withConsole { gateway, console in
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xB8),
                                                                scopes: [OperatorScope.read.rawValue])
            let shown = try #require(await console.handle("voicewake"))
            #expect(shown.result == .voiceWake(["openclaw", "claude"]))
            let set = try #require(await console.handle(#"voicewake [" hey claw ", "computer"]"#))
            #expect(set.result == .voiceWake(["hey claw", "computer"]))
            let changed = try await reader.client.event(GatewayEventName.voicewakeChanged.rawValue)
            #expect(changed.payload == ["triggers": ["hey claw", "computer"]])
            #expect(await console.handle(#"voicewake {"triggers":[]}"#)?.errorMessage == "voicewake: expected a JSON array of strings")
        }
    }

    @Test("workspace sets and clears an agent's directory; a missing directory is refused")
    func workspace() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("console-workspace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await GatewayConsole.withConsole { gateway, console in
            let set = try #require(await console.handle("workspace \(directory.path) --agent coder"))
            #expect(set.result == .workspace(agentId: "coder", directory: directory.path))
            #expect(await gateway.agents().agent("coder")?.workspaceDirectory == directory.path)
            let cleared = try #require(await console.handle("workspace off --agent coder"))
            #expect(cleared.result == .workspace(agentId: "coder", directory: nil))
            #expect(await console.handle("workspace /no/such/directory")?.errorMessage
                == "workspace: /no/such/directory is not a directory")
        }
    }
}
