import Foundation
import GatewayProtocol

/// `chat.metadata`: what a chat screen reads before its first message, the models of the model
/// picker and the text slash commands, for one agent.
///
/// Upstream: the handler generation of `src/gateway/server-methods/chat-history-handler.ts
/// @2cfb0c9ba5ca55c9b5e5d65613d4320185bd2c6a` (`handleChatMetadataRequest`,
/// `buildChatMetadataResult`) with the closed params `ChatMetadataParamsSchema {agentId?:
/// NonEmptyString}`: a blank `agentId` means the default agent, another one is normalised and must
/// be a configured agent, else `INVALID_REQUEST "Unknown agent id \"<agentId as sent>\""`; the
/// answer is `{...buildModelsListResult({view: "configured"}), ...buildCommandsListResult({scope:
/// "text", includeArgs: true})}`, that is `{models, commands}`. The fake Gateway builds both with
/// the rules of its own `models.list` (``ModelsList``) and `commands.list` (``CommandCatalogue``)
/// over the same fixtures, so the three answers agree. It reads fixtures only: the chat store is
/// not involved.
enum ChatMetadata {
    /// The answer to `params` over the fixtures.
    static func answer(_ params: JSONValue?, models: [ModelFixture], commands: [CommandFixture], agents: AgentRoster)
        -> Result<JSONValue, GatewayError>
    {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .chatMetadata, members: ["agentId"])
            let raw = try reader.string("agentId", nonEmpty: true)
            let requested = CronSchedule.normalized(raw)
            let agentId = requested.isEmpty ? agents.defaultId : requested
            guard agents.agents.contains(where: { CronSchedule.normalized($0.id) == agentId }) else {
                // Upstream words it with the agent id as sent (`undefined` cannot happen here: a
                // missing id resolves to the default agent, which is always configured).
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                              message: "Unknown agent id \"\(raw ?? "")\""))
            }
            let modelsAnswer = ModelsList.answer(["view": "configured"], models: models)
            let commandsAnswer = CommandCatalogue.list(["scope": "text", "includeArgs": true],
                                                       commands: commands, agents: agents)
            var result: [String: JSONValue] = [:]
            for part in [modelsAnswer, commandsAnswer] {
                let object = try part.get().objectValue ?? [:]
                result.merge(object) { _, new in new }
            }
            return .success(.object(result))
        } catch {
            return .failure(error)
        }
    }
}
