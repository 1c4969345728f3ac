import GatewayProtocol

/// The line-delimited JSON protocol between the harness and a client process
/// (`docs/adapter-protocol.md`): one JSON object per line on the client's stdin and stdout.
public enum AdapterProtocol {
    /// The version this harness speaks (`adapterProtocol` in the hello).
    public static let version: Int64 = 1

    /// A message the client writes on stdout.
    public enum ClientMessage: Sendable, Hashable {
        /// The first line: the protocol version, who the client is, the stimuli it supports, and
        /// the read-only commands of its own it names as safe to probe it with (optional
        /// `probeCommands`, empty when absent).
        case hello(version: Int64, client: JSONValue?, stimuli: [StimulusKind], probeCommands: [ProbeCommand])
        /// The answer to the stimulus `id`: `ok`, `unsupported` or `error`, with an optional message.
        case reply(id: String, status: String, message: String?)
        /// A log line from the client, kept for the report.
        case log(level: String, message: String)
    }

    /// Why a line is not a valid client message.
    public struct DecodingProblem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Decodes one line written by the client.
    /// - Throws: `DecodingProblem` naming what is wrong; never crashes on garbage.
    public static func decode(_ line: String) throws -> ClientMessage {
        guard let value = try? JSONValue(parsing: line), let object = value.objectValue else {
            throw DecodingProblem(description: "not a JSON object")
        }
        switch object["type"]?.stringValue {
        case "hello":
            guard let version = object["adapterProtocol"]?.int64Value else {
                throw DecodingProblem(description: "hello without an integer \"adapterProtocol\"")
            }
            guard let names = object["stimuli"]?.arrayValue else {
                throw DecodingProblem(description: "hello without a \"stimuli\" array")
            }
            let stimuli = names.compactMap(\.stringValue).map(StimulusKind.init(rawValue:))
            return .hello(version: version, client: object["client"], stimuli: stimuli,
                          probeCommands: try probeCommands(object["probeCommands"]))
        case "reply":
            let id = object["id"]?.stringValue ?? object["id"]?.int64Value.map(String.init)
            guard let id else { throw DecodingProblem(description: "reply without an \"id\"") }
            guard let status = object["status"]?.stringValue, ["ok", "unsupported", "error"].contains(status) else {
                throw DecodingProblem(description: "reply whose \"status\" is not ok, unsupported or error")
            }
            return .reply(id: id, status: status, message: object["message"]?.stringValue)
        case "log":
            return .log(level: object["level"]?.stringValue ?? "info", message: object["message"]?.stringValue ?? "")
        case let type?:
            throw DecodingProblem(description: "unknown message type \"\(type)\"")
        case nil:
            throw DecodingProblem(description: "no \"type\"")
        }
    }

    /// The hello's `probeCommands`: each a command name, or `{"command": NAME, "params": {...}}`.
    /// - Throws: `DecodingProblem` for anything else (a hello that names probes wrongly would
    ///   otherwise leave its scenarios `unsupported` without a word).
    static func probeCommands(_ value: JSONValue?) throws -> [ProbeCommand] {
        guard let value, value != .null else { return [] }
        guard let items = value.arrayValue else { throw DecodingProblem(description: "hello whose \"probeCommands\" is not an array") }
        return try items.map { item in
            if let name = item.stringValue, !name.isEmpty { return ProbeCommand(name: name) }
            guard let name = item["command"]?.stringValue, !name.isEmpty else {
                throw DecodingProblem(description: "a \"probeCommands\" entry that is neither a command name nor {\"command\": NAME}")
            }
            let params = item["params"] ?? .object([:])
            guard params.objectValue != nil else {
                throw DecodingProblem(description: "the \"params\" of probe command \(name) is not a JSON object")
            }
            return ProbeCommand(name: name, params: params)
        }
    }

    /// The line that asks the client to act on `stimulus`.
    public static func encode(stimulus: Stimulus, id: String) -> String {
        JSONValue.object([
            "type": "stimulus", "id": .string(id), "stimulus": .string(stimulus.kind.rawValue),
            "params": .object(stimulus.params),
        ]).jsonString
    }
}
