import Foundation
import GatewayProtocol

/// One choice of a slash-command argument (`CommandArgChoiceSchema`).
public struct CommandArgChoice: Sendable, Hashable {
    /// The value sent.
    public var value: String
    /// The label shown.
    public var label: String

    /// Creates a choice.
    public init(value: String, label: String) {
        self.value = value
        self.label = label
    }
}

/// One argument of a slash command (`CommandArgSchema`).
public struct CommandArgFixture: Sendable, Hashable {
    /// The argument types the schema admits.
    public static let types = ["string", "number", "boolean"]

    /// The name (non-empty).
    public var name: String
    /// The description.
    public var description: String
    /// `string`, `number` or `boolean`.
    public var type: String
    /// Whether the argument must be given.
    public var required: Bool?
    /// The static choices, if any.
    public var choices: [CommandArgChoice]?
    /// Whether the choices are computed (`dynamic`).
    public var dynamic: Bool?

    /// Creates an argument.
    public init(name: String, description: String, type: String, required: Bool? = nil,
                choices: [CommandArgChoice]? = nil, dynamic: Bool? = nil) {
        self.name = name
        self.description = description
        self.type = type
        self.required = required
        self.choices = choices
        self.dynamic = dynamic
    }
}

/// One slash command of the catalogue `commands.list` answers (`CommandEntrySchema`), a fixture
/// a test, the console or `harness serve --fixtures` sets.
public struct CommandFixture: Sendable, Hashable {
    /// The sources the schema admits.
    public static let sources = ["native", "skill", "plugin"]
    /// The scopes the schema admits (also the `scope` filter of `commands.list`).
    public static let scopes = ["text", "native", "both"]
    /// The categories the schema admits.
    public static let categories = ["session", "options", "status", "management", "media", "tools", "docks"]

    /// The command name (non-empty).
    public var name: String
    /// The description.
    public var description: String
    /// The category, if any.
    public var category: String?
    /// `native`, `skill` or `plugin`.
    public var source: String
    /// `text`, `native` or `both`.
    public var scope: String
    /// Whether the command takes arguments.
    public var acceptsArgs: Bool
    /// The arguments, if described.
    public var args: [CommandArgFixture]?

    /// Creates a command.
    public init(name: String, description: String, category: String? = nil, source: String = "native",
                scope: String = "both", acceptsArgs: Bool = false, args: [CommandArgFixture]? = nil) {
        self.name = name
        self.description = description
        self.category = category
        self.source = source
        self.scope = scope
        self.acceptsArgs = acceptsArgs
        self.args = args
    }

    /// The entry as `commands.list` sends it; `args` only with `includeArgs`, when the command
    /// accepts arguments and has some (upstream `mapCommand`).
    func entry(includeArgs: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name), "description": .string(description), "source": .string(source),
            "scope": .string(scope), "acceptsArgs": .bool(acceptsArgs),
        ]
        if let category { object["category"] = .string(category) }
        if includeArgs, acceptsArgs, let args, !args.isEmpty { object["args"] = .array(args.map(\.json)) }
        return .object(object)
    }
}

extension CommandArgFixture {
    /// The argument as sent.
    var json: JSONValue {
        var object: [String: JSONValue] = ["name": .string(name), "description": .string(description), "type": .string(type)]
        if required == true { object["required"] = true }
        if let choices {
            object["choices"] = .array(choices.map { ["value": .string($0.value), "label": .string($0.label)] })
        }
        if dynamic == true { object["dynamic"] = true }
        return .object(object)
    }
}

/// `commands.list`: the slash-command catalogue an operator client reads for its command picker.
///
/// Upstream: the handler `src/gateway/server-methods/commands.ts@405925c6d12f76f6df98fd7c5e7883f4f45425c5`
/// and its schema `src/gateway/protocol/schema/commands.ts@405925c6d12f76f6df98fd7c5e7883f4f45425c5`:
/// params closed `{agentId?, provider?, scope?: "text" | "native" | "both", includeArgs?: boolean}`;
/// an `agentId` that is not a configured agent is `INVALID_REQUEST "unknown agent id \"<id>\""`;
/// a `scope` other than `both` keeps the commands of that scope and those of scope `both`;
/// `includeArgs` (default true) adds `args` to commands that accept arguments and have some.
/// The result is `{commands: [CommandEntry]}`. `provider` renames native commands through
/// channel plugins upstream; the fake Gateway has none, so it is validated and otherwise unused.
enum CommandCatalogue {
    /// The answer to `params` over `commands` for the agents `agents`.
    static func list(_ params: JSONValue?, commands: [CommandFixture], agents: AgentRoster)
        -> Result<JSONValue, GatewayError>
    {
        do throws(GatewayError) {
            let reader = try MethodParams(params, method: .commandsList,
                                          members: ["agentId", "provider", "scope", "includeArgs"])
            let agentId = try reader.string("agentId", nonEmpty: true)
            _ = try reader.string("provider", nonEmpty: true)
            let scope = try reader.string("scope")
            if let scope, !CommandFixture.scopes.contains(scope) {
                throw MethodParams.invalid(.commandsList, at: "/scope", "must be equal to one of the allowed values")
            }
            let includeArgs = try reader.bool("includeArgs") ?? true
            let requested = agentId.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
            if !requested.isEmpty, agents.agent(requested) == nil {
                throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                              message: "unknown agent id \"\(requested)\""))
            }
            let filter = scope ?? "both"
            let listed = commands.filter { filter == "both" || $0.scope == "both" || $0.scope == filter }
            return .success(["commands": .array(listed.map { $0.entry(includeArgs: includeArgs) })])
        } catch {
            return .failure(error)
        }
    }
}

extension MethodParams {
    /// An optional boolean member.
    func bool(_ key: String) throws(GatewayError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard let flag = value.boolValue else { throw Self.invalid(method, at: "/\(key)", "must be boolean") }
        return flag
    }
}
