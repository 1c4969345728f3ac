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
/// <validation error>"`. The fake Gateway has no model providers: every view lists the model
/// fixtures (``GatewayFixtures/models``; by default the one model behind the scripted chat agent).
enum ModelsList {
    /// The `view` values the schema admits.
    static let views = ["default", "configured", "all"]

    /// The answer to `params` over `models`: the result, or the `INVALID_REQUEST` error naming the
    /// offending member.
    static func answer(_ params: JSONValue?, models: [ModelFixture]) -> Result<JSONValue, GatewayError> {
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
        return .success(["models": .array(models.map(\.json))])
    }
}

/// One model of the catalogue `models.list` answers (`ModelChoiceSchema`), a fixture a test or
/// `harness serve --fixtures` sets.
public struct ModelFixture: Sendable, Hashable {
    /// The model id (non-empty).
    public var id: String
    /// The display name (non-empty).
    public var name: String
    /// The provider (non-empty).
    public var provider: String
    /// An alias, if any.
    public var alias: String?
    /// The context window in tokens, if known.
    public var contextWindow: Int?
    /// Whether the model reasons, if known.
    public var reasoning: Bool?

    /// The scripted chat agent (`ChatStore`) as a model: the default catalogue.
    public static let mockEcho = ModelFixture(id: "mock-echo", name: "Mock Gateway echo agent", provider: "mock-gateway")

    /// Creates a model.
    public init(id: String, name: String, provider: String, alias: String? = nil, contextWindow: Int? = nil,
                reasoning: Bool? = nil) {
        self.id = id
        self.name = name
        self.provider = provider
        self.alias = alias
        self.contextWindow = contextWindow
        self.reasoning = reasoning
    }

    /// The entry as `models.list` sends it.
    var json: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "name": .string(name), "provider": .string(provider)]
        if let alias { object["alias"] = .string(alias) }
        if let contextWindow { object["contextWindow"] = .int(Int64(contextWindow)) }
        if let reasoning { object["reasoning"] = .bool(reasoning) }
        return .object(object)
    }
}
