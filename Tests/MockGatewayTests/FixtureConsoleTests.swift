import Foundation
import GatewayProtocol
import Testing
@testable import MockGateway

/// The console's `fixture <agents|models|tasks|config|skills> [json]`: each member is shown, then
/// replaced as that member of a `--fixtures` file is read (the methods answer the new value), and
/// a value that does not fit is refused with the reader's JSON pointer (text that is not JSON at
/// all is refused by the argument parser). Breaks tried: reading `models` with the tasks reader
/// fails the models refusal; dropping `keepingWorkspaces` fails the workspace expectation.
@Suite("console: fixture")
struct FixtureConsoleTests {
    @Test func eachMemberIsShownReplacedAndRefused() async throws {
        var configuration = GatewayConfiguration()
        configuration.agents.setWorkspace("/tmp/fixture-console-ws", forAgent: AgentRoster.mainAgentId)
        try await Gateway.withGateway(configuration) { gateway in
            let console = GatewayConsole(gateway: gateway)
            let reader = try await TestSessions.operatorSession(gateway, identity: try TestIdentities.make(0xF1),
                                                                scopes: [OperatorScope.read.rawValue])
            func text(_ line: String) async -> String? { await console.handle(line)?.result.map { $0.text } }
            func value(_ line: String) async -> JSONValue? { await console.handle(line)?.result.map { $0.json["value"] } ?? nil }
            func ask(_ method: GatewayMethod, _ params: JSONValue = [:]) async throws -> JSONValue? {
                try await reader.client.request(method.rawValue, params: params).payload
            }

            // agents
            #expect(await text("fixture agents") == "agents: main (default)")
            #expect(await value("fixture agents") == ["defaultId": "main", "agents": [["id": "main"]]])
            #expect(await text(#"fixture agents {"defaultId":"work","agents":[{"id":"main"},{"id":"work","name":"Work"}]}"#)
                    == "agents: main, work (default)")
            let agents = try await ask(.agentsList)
            #expect(agents?["defaultId"] == "work" && agents?["agents"] == [["id": "main"], ["id": "work", "name": "Work"]])
            #expect(await gateway.agents().agent("main")?.workspaceDirectory == "/tmp/fixture-console-ws")
            #expect(await console.handle(#"fixture agents {"agents":[{"id":"a"},{"id":"a"}]}"#)?.errorMessage
                    == "fixture agents: at /agents/1/id: duplicate agent id 'a'")
            #expect(await console.handle(#"fixture agents {"defaultId":"x","agents":[{"id":"a"}]}"#)?.errorMessage
                    == "fixture agents: at /defaultId: must be one of the agents' ids")

            // models
            #expect(await text("fixture models") == "models: mock-echo")
            #expect(await text(#"fixture models [{"id":"claude-opus","name":"Claude Opus","provider":"anthropic","contextWindow":200000}]"#)
                    == "models: claude-opus")
            let models = try await ask(.modelsList)
            #expect(models?["models"] == [["id": "claude-opus", "name": "Claude Opus", "provider": "anthropic",
                                           "contextWindow": 200_000]])
            #expect(await console.handle(#"fixture models [{"id":"m","name":"M"}]"#)?.errorMessage
                    == "fixture models: at /0: must have required property 'provider'")

            // tasks
            #expect(await text("fixture tasks") == "tasks: (none)")
            #expect(await text(#"fixture tasks [{"id":"t1","status":"running","title":"Build"}]"#) == "tasks: t1 (running)")
            #expect(try await ask(.tasksList)?["tasks"] == [["id": "t1", "status": "running", "title": "Build"]])
            #expect(await console.handle(#"fixture tasks [{"id":"t1","status":"sleeping"}]"#)?.errorMessage
                    == "fixture tasks: at /0/status: must be one of queued, running, completed, failed, cancelled, timed_out")

            // config
            #expect(await text("fixture config") == "config: (empty)")
            #expect(await text(##"fixture config {"ui":{"seamColor":"#112233"},"session":{"mainKey":"main"}}"##)
                    == "config: sections session, ui")
            #expect(try await ask(.talkConfig)?["config"]?["ui"] == ["seamColor": "#112233"])
            #expect(await console.handle(#"fixture config [1]"#)?.errorMessage == "fixture config: at root: must be object")

            // skills
            #expect(await text("fixture skills") == "skills: (none)")
            let skill = #"{"name":"weather","description":"Forecasts","source":"openclaw-bundled","filePath":"/s/w/SKILL.md","baseDir":"/s/w","missing":{"bins":["curl"]}}"#
            #expect(await text("fixture skills {\"skills\":[\(skill)]}") == "skills: weather")
            let shown = await value("fixture skills")
            let shownSkill = shown?["skills"]?.arrayValue?.first
            #expect(shownSkill?["missing"]?["bins"] == ["curl"] && shownSkill?["eligible"] == nil, "\(String(describing: shown))")
            // The shown value reads back to the same fixture.
            #expect(try shown.map { try SkillsFixtures(json: $0) } == (await gateway.skills()))
            let status = try await ask(.skillsStatus)
            let reported = status?["skills"]?.arrayValue?.first
            #expect(reported?["name"] == "weather" && reported?["eligible"] == false, "\(String(describing: status))")
            #expect(await console.handle(#"fixture skills {"skills":[{"name":"x"}]}"#)?.errorMessage
                    == "fixture skills: at /skills/0: must have required property 'description'")

            // Not JSON, or not a member: refused before anything runs.
            for member in FixtureMember.allCases {
                let refused = await console.handle("fixture \(member.rawValue) {oops")?.errorMessage
                #expect(refused?.contains("valid JSON") == true, "\(member): \(String(describing: refused))")
            }
            #expect(await console.handle("fixture commandz")?.errorMessage?.contains("expected agents, models") == true)
            await reader.client.close()
        }
    }
}
