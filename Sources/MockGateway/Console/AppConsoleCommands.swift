import ArgumentParsing
import Foundation
import GatewayProtocol

extension ConsoleCommandSpec {
    /// The apps' fixtures: voice wake triggers and agent workspaces.
    static let appCommands: [ConsoleCommandSpec] = [
        ConsoleCommandSpec(
            "voicewake",
            arguments: [PositionalSpec("triggersJSON", JSONArgument.self, help: "the new triggers, a JSON array of strings",
                                       optional: true)],
            restOfLine: true,
            summary: "show the voice wake triggers, or replace them as another device would (voicewake.changed to operators and nodes)",
            example: #"voicewake ["hey claw","computer"]"#
        ) { command, console in
            guard let value = command.argument(0, as: JSONArgument.self)?.value else {
                return .voiceWake(await console.gateway.voiceWakeTriggers())
            }
            guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                throw ConsoleError("voicewake: expected a JSON array of strings")
            }
            return .voiceWake(await console.gateway.setVoiceWakeTriggers(items.compactMap(\.stringValue)))
        },
        ConsoleCommandSpec(
            "workspace",
            arguments: [PositionalSpec("directory", help: "the workspace directory (off: none)")],
            options: [.option("--agent", NonEmptyText.self, help: "the agent (default main)")],
            summary: "set the directory an agent's workspace is browsed in (agents.workspace.list/get)",
            example: "workspace /tmp/agent-workspace"
        ) { command, console in
            let directory = try command.text(0)
            let agentId = command.option("--agent", as: NonEmptyText.self)?.text ?? AgentRoster.mainAgentId
            if directory == "off" {
                await console.gateway.setAgentWorkspace(nil, agentId: agentId)
                return .workspace(agentId: agentId, directory: nil)
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ConsoleError("workspace: \(directory) is not a directory")
            }
            await console.gateway.setAgentWorkspace(directory, agentId: agentId)
            return .workspace(agentId: agentId, directory: directory)
        },
    ]
}
