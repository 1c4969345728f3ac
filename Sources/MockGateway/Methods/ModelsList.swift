import GatewayProtocol

/// `models.list`: the model catalogue an operator client reads to fill its model picker.
///
/// Params and result follow upstream's closed schemas (`ModelsListParamsSchema`,
/// `ModelsListResultSchema` and `ModelChoiceSchema` in
/// `src/gateway/protocol/schema/agents-models-skills.ts@0efa6ad399c69335445838e9f9b371a2b4fdc2e3`):
/// params `{view?: "default" | "configured" | "all"}` and nothing else; result
/// `{models: [{id, name, provider, alias?, contextWindow?, reasoning?}]}`. Invalid params are
/// answered as upstream's `assertValidParams` does (`src/gateway/server-methods/validation.ts
/// @ffeb2428c05597355c8eb4472199f6531eb25564`): `INVALID_REQUEST "invalid models.list params:
/// <validation error>"`. The fake Gateway has no model providers: every view lists the one model
/// behind its scripted chat agent.
enum ModelsList {
    /// The `view` values the schema admits.
    static let views = ["default", "configured", "all"]

    /// The catalogue: the scripted chat agent (`ChatStore`) as the one model.
    static let catalogue: [JSONValue] = [
        ["id": "mock-echo", "name": "Mock Gateway echo agent", "provider": "mock-gateway"],
    ]

    /// The answer to `params`: the result, or the `INVALID_REQUEST` error naming the offending member.
    static func answer(_ params: JSONValue?) -> Result<JSONValue, GatewayError> {
        func invalid(_ detail: String) -> Result<JSONValue, GatewayError> {
            .failure(GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                             message: "invalid \(GatewayMethod.modelsList) params: \(detail)")))
        }
        if let params, params.objectValue == nil { return invalid("at root: must be object") }
        let object = params?.objectValue ?? [:]
        if let unknown = object.keys.sorted().first(where: { $0 != "view" }) {
            return invalid("at root: unexpected property '\(unknown)'")
        }
        if let view = object["view"], !(view.stringValue.map(views.contains) ?? false) {
            return invalid("at /view: must be equal to one of the allowed values")
        }
        return .success(["models": .array(catalogue)])
    }
}
