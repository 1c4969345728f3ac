import GatewayProtocol

/// `talk.config`: the talk configuration the iOS app reads for Talk mode (voice, model, output
/// format, interruption), the main session key and the UI's seam colour.
///
/// Upstream: the early handler generation of `src/gateway/server-methods/talk.ts` whose
/// normaliser (`normalizeTalkConfigSection`) is in the handler file itself, so the whole chain is
/// readable (the tool stores that version without its commit; the newer ones, e.g.
/// `talk.ts@008640bfd74f4f944c10b590bb7f5a4e9067ec8e`, go through `config/talk.ts` and the
/// speech-provider registry and are not followed): closed params `{includeSecrets?: boolean}`
/// (`TalkConfigParamsSchema`, `src/gateway/protocol/schema/channels.ts@8db91855a86eac9bdf001feb4f1ce3645d2b2e71`);
/// `includeSecrets: true` needs `operator.admin` or `operator.talk.secrets` among the
/// connection's own scopes, else `INVALID_REQUEST "missing scope: operator.talk.secrets"`; the
/// answer is `{config: {talk?, session?: {mainKey}, ui?: {seamColor}}}`, where `talk` keeps only
/// the string `voiceId`, `modelId`, `outputFormat`, `apiKey`, the boolean `interruptOnSpeech`
/// and the string-valued `voiceAliases` of the configuration's `talk` section (redacted with
/// `redactConfigObject` unless secrets were asked for; absent when nothing is left), `session`
/// only when `session.mainKey` is a string and `ui` only when `ui.seamColor` is one.
enum TalkConfig {
    /// The answer to `params` from a caller with `scopes` over the Gateway configuration `config`.
    static func answer(_ params: JSONValue?, scopes: [String], config: [String: JSONValue])
        -> Result<JSONValue, GatewayError>
    {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .talkConfig, members: ["includeSecrets"])
            let includeSecrets = try reader.bool("includeSecrets") ?? false
            if includeSecrets, !scopes.contains(OperatorScope.admin.rawValue),
               !scopes.contains(OperatorScope.talkSecrets.rawValue) {
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                              message: "missing scope: \(OperatorScope.talkSecrets.rawValue)"))
            }
            var payload: [String: JSONValue] = [:]
            if let source = config["talk"] {
                // `redactConfigObject(talk)`: the paths are the talk section's own (`apiKey`).
                let talkSource = includeSecrets ? source : ConfigSnapshot.redact(source, at: "")
                if let talk = section(talkSource) { payload["talk"] = talk }
            }
            if let mainKey = config["session"]?["mainKey"]?.stringValue {
                payload["session"] = ["mainKey": .string(mainKey)]
            }
            if let seamColor = config["ui"]?["seamColor"]?.stringValue {
                payload["ui"] = ["seamColor": .string(seamColor)]
            }
            return .success(["config": .object(payload)])
        } catch {
            return .failure(error)
        }
    }

    /// Upstream's `normalizeTalkConfigSection`: the members it keeps, `nil` when none is left.
    static func section(_ value: JSONValue) -> JSONValue? {
        guard let source = value.objectValue else { return nil }
        var talk: [String: JSONValue] = [:]
        for key in ["voiceId", "modelId", "outputFormat", "apiKey"] {
            if let text = source[key]?.stringValue { talk[key] = .string(text) }
        }
        if let aliases = source["voiceAliases"]?.objectValue {
            let kept = aliases.compactMapValues { $0.stringValue.map(JSONValue.string) }
            if !kept.isEmpty { talk["voiceAliases"] = .object(kept) }
        }
        if let interrupt = source["interruptOnSpeech"]?.boolValue { talk["interruptOnSpeech"] = .bool(interrupt) }
        return talk.isEmpty ? nil : .object(talk)
    }
}
