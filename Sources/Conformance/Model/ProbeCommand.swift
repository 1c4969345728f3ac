import Foundation
import GatewayProtocol

/// A node command a scenario may invoke just to see that the client still answers (HS-007,
/// INV-001, INV-002, LIFE-002..004 and the invoke scenarios' quick command), with the params it
/// is invoked with.
///
/// The built-in set (``readOnly``) is the read-only commands that need no params among those a
/// real Gateway allows by default; a client that declares none of them names its own with
/// `harness run --probe-command NAME[=PARAMS]` (``init(option:)``).
public struct ProbeCommand: Sendable, Hashable, CustomStringConvertible {
    /// The command name (`device.info`).
    public var name: String
    /// The `params` of the invoke: a JSON object (`{}` for none).
    public var params: JSONValue

    /// Creates a probe command.
    public init(name: String, params: JSONValue = .object([:])) {
        self.name = name
        self.params = params
    }

    /// The built-in probes, in order of preference: read-only commands that need no params.
    /// `device.info`, `device.status` and `camera.list` are in upstream's default node command
    /// allowlist and outside its dangerous set (`DEVICE_COMMANDS`, `CAMERA_COMMANDS` against
    /// `CAMERA_DANGEROUS_COMMANDS` in src/gateway/node-command-policy.ts@fa834b66); they read
    /// and change nothing. `debug.counter` is this project's own harmless command (the
    /// reference client's), kept for clients written against this harness.
    public static let readOnly: [ProbeCommand] = [NodeCommandName.deviceInfo, .deviceStatus, .cameraList, .debugCounter]
        .map { ProbeCommand(name: $0.rawValue) }

    /// `NAME` or `NAME={...}`.
    public var description: String {
        params == .object([:]) ? name : "\(name)=\(params.jsonString)"
    }
}

/// `--probe-command NAME[=PARAMS]`: a command of the client's own to probe it with, PARAMS a
/// JSON object (`acme.weather={"city":"Oslo"}`).
public struct ProbeCommandOption: OptionValue, Hashable {
    /// `NAME[=PARAMS]`.
    public static let placeholder = "NAME[=PARAMS]"
    /// The command.
    public let value: ProbeCommand

    /// Parses `NAME` or `NAME=PARAMS`.
    /// - Throws: ``OptionValueError`` for an empty name or PARAMS that is not a JSON object.
    public init(option text: String) throws(OptionValueError) {
        let name: Substring
        var params = JSONValue.object([:])
        if let equals = text.firstIndex(of: "=") {
            name = text[..<equals]
            let json = String(text[text.index(after: equals)...])
            guard let parsed = try? JSONValue(parsing: json), parsed.objectValue != nil else {
                throw OptionValueError(expected: "NAME or NAME=PARAMS with PARAMS a JSON object ({\"key\": \"value\"}), got params \(json)")
            }
            params = parsed
        } else {
            name = Substring(text)
        }
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.contains(where: \.isWhitespace) else {
            throw OptionValueError(expected: "a command name (NAME or NAME=PARAMS with PARAMS a JSON object)")
        }
        value = ProbeCommand(name: trimmed, params: params)
    }
}
