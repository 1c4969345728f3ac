import Foundation
import GatewayProtocol

/// How `harness serve` writes its lines.
public enum ConsoleOutputFormat: String, Sendable, Hashable {
    /// Human-readable text.
    case text
    /// One JSON object per line, each with an `"event"` member.
    case json
}

/// What a console command produced, as a typed value.
public enum ConsoleResult: Sendable, Hashable {
    /// `pending`.
    case pending([PairingRequestInfo])
    /// `devices`: the paired devices and which of them have a node connected now.
    case devices([PairedDevice], connectedNodeIds: Set<String>)
    /// `approve`: the request and the paired record.
    case approved(requestId: String, device: PairedDevice)
    /// `reject`.
    case rejected(requestId: String, deviceId: String?)
    /// `remove`.
    case removed(deviceId: String)
    /// `revoke`.
    case revoked(deviceId: String, role: String)
    /// `invoke`: the node's answer (which may itself be `ok:false`).
    case invoked(nodeId: String, command: String, result: NodeInvokeResult)
    /// `setup-code`.
    case setupCode(SetupCode)
    /// `advance`: the Gateway time afterwards.
    case advanced(seconds: Double, nowMs: Int64)
    /// `shutdown`: the restart happened and connections are accepted again.
    case restarted
    /// `help`.
    case help([ConsoleCommandHelp])
    /// `quit`.
    case quitting
    /// `approval`: the pending record.
    case approvalCreated(ApprovalRecord)
    /// `resolve-approval`: whether the console's answer won, and the terminal record.
    case approvalResolved(applied: Bool, record: ApprovalRecord)
    /// `question`: the pending record.
    case questionCreated(QuestionRecord)
    /// `answer-question` / `cancel-question`: the terminal record.
    case questionResolved(QuestionRecord)
    /// A `chat-*` command.
    case chat(ChatConsoleResult)

    /// The result with its secrets replaced by `<redacted>`: what is printed without
    /// `--show-secrets`.
    public var redacted: ConsoleResult {
        switch self {
        case .setupCode(var code):
            code.redactSecrets()
            return .setupCode(code)
        default:
            return self
        }
    }

    /// The result as a JSON object (the `result` member of `command.ok`).
    public var json: JSONValue {
        switch self {
        case .pending(let requests):
            return ["requests": .array(requests.map(\.consoleJSON))]
        case .devices(let devices, let connected):
            return ["devices": .array(devices.map { $0.consoleJSON(connected: connected.contains($0.deviceId)) })]
        case .approved(let requestId, let device):
            return ["requestId": .string(requestId), "deviceId": .string(device.deviceId),
                    "roles": .array(device.roles.map { .string($0.rawValue) }), "scopes": .consoleList(device.scopes),
                    "approvedVia": .string(device.approvedVia.rawValue)]
        case .rejected(let requestId, let deviceId):
            var object: [String: JSONValue] = ["requestId": .string(requestId)]
            if let deviceId { object["deviceId"] = .string(deviceId) }
            return .object(object)
        case .removed(let deviceId):
            return ["deviceId": .string(deviceId)]
        case .revoked(let deviceId, let role):
            return ["deviceId": .string(deviceId), "role": .string(role)]
        case .invoked(let nodeId, let command, let result):
            var object: [String: JSONValue] = ["id": .string(result.id), "nodeId": .string(nodeId),
                                               "command": .string(command), "ok": .bool(result.ok)]
            if let payload = result.payload { object["payload"] = payload }
            if let payloadJSON = result.payloadJSON { object["payloadJSON"] = .string(payloadJSON) }
            if let error = result.error, let value = try? JSONValue(encoding: error) { object["error"] = value }
            return .object(object)
        case .setupCode(let code):
            return ["setupCode": .string(code.encoded), "url": .string(code.url), "link": .string(code.link),
                    "bootstrapToken": .string(code.bootstrapToken)]
        case .advanced(let seconds, let nowMs):
            return ["seconds": .double(seconds), "nowMs": .int(nowMs)]
        case .restarted:
            return ["restarted": true]
        case .help(let commands):
            return ["commands": .array(commands.map {
                ["name": .string($0.name), "usage": .string($0.usage), "summary": .string($0.summary)]
            })]
        case .quitting:
            return .object([:])
        case .approvalCreated(let record):
            return record.snapshot()
        case .approvalResolved(let applied, let record):
            var object = record.snapshot().objectValue ?? [:]
            object["applied"] = .bool(applied)
            return .object(object)
        case .questionCreated(let record), .questionResolved(let record):
            return record.json
        case .chat(let result):
            return result.json
        }
    }

    /// The result as text for a person at a terminal (may span lines).
    public var text: String {
        switch self {
        case .pending(let requests):
            guard !requests.isEmpty else { return "no pending pairing requests" }
            return requests.map { request in
                "\(request.requestId)  device \(request.deviceId)  role \(request.role)"
                    + (request.scopes.isEmpty ? "" : "  scopes \(request.scopes.joined(separator: ","))")
            }.joined(separator: "\n")
        case .devices(let devices, let connected):
            guard !devices.isEmpty else { return "no paired devices" }
            return devices.map { device in
                var line = "\(device.deviceId)  roles \(device.roles.map(\.rawValue).joined(separator: ","))"
                if !device.scopes.isEmpty { line += "  scopes \(device.scopes.joined(separator: ","))" }
                if let name = device.displayName { line += "  \(ConsoleText.quoteIfNeeded(name))" }
                if connected.contains(device.deviceId) { line += "  (node connected)" }
                return line
            }.joined(separator: "\n")
        case .approved(let requestId, let device):
            return "approved \(requestId): device \(device.deviceId) roles \(device.roles.map(\.rawValue).joined(separator: ","))"
        case .rejected(let requestId, _):
            return "rejected \(requestId)"
        case .removed(let deviceId):
            return "removed \(deviceId)"
        case .revoked(let deviceId, let role):
            return "revoked the \(role) token of \(deviceId)"
        case .invoked(let nodeId, let command, let result):
            var line = "\(command) on \(nodeId): ok=\(result.ok)"
            if let payloadJSON = result.payloadJSON { line += " payloadJSON=\(payloadJSON)" }
            if let payload = result.payload { line += " payload=\(payload.jsonString)" }
            if let error = result.error, let value = try? JSONValue(encoding: error) { line += " error=\(value.jsonString)" }
            return line
        case .setupCode(let code):
            return "setup code \(code.encoded)\nlink \(code.link)\nurl \(code.url)"
        case .advanced(let seconds, let nowMs):
            return "advanced \(ConsoleText.number(seconds)) s; gateway time is now \(nowMs)"
        case .restarted:
            return "restarted: sent shutdown, closed every connection with 1012, accepting again"
        case .help(let commands):
            let width = (commands.map(\.usage.count).max() ?? 0) + 2
            return commands.map { $0.usage.padding(toLength: width, withPad: " ", startingAt: 0) + $0.summary }
                .joined(separator: "\n")
        case .quitting:
            return "stopping"
        case .approvalCreated(let record):
            return "approval \(record.id) pending, decisions \(record.allowedDecisions.map(\.rawValue).joined(separator: ",")), expires at \(record.expiresAtMs)"
        case .approvalResolved(let applied, let record):
            let outcome = "\(record.status.rawValue)" + (record.decision.map { " (\($0.rawValue))" } ?? "")
            return applied ? "approval \(record.id) \(outcome)" : "approval \(record.id) was already \(outcome)"
        case .questionCreated(let record):
            return "question \(record.id) pending, expires at \(record.expiresAtMs)"
        case .questionResolved(let record):
            var line = "question \(record.id) \(record.status.rawValue)"
            if let answers = record.answers { line += " " + QuestionRecord.answersJSON(answers).jsonString }
            return line
        case .chat(let result):
            return result.text
        }
    }
}

/// The console's answer to one line.
public struct ConsoleReply: Sendable, Hashable {
    /// The command name as typed (the first word of the line).
    public var command: String
    /// The result, or why the command failed.
    public var outcome: Result<ConsoleResult, ConsoleError>

    /// Creates a reply.
    public init(command: String, outcome: Result<ConsoleResult, ConsoleError>) {
        self.command = command
        self.outcome = outcome
    }

    /// The result when the command succeeded.
    public var result: ConsoleResult? { try? outcome.get() }

    /// The error message when the command failed.
    public var errorMessage: String? {
        if case .failure(let error) = outcome { return error.message }
        return nil
    }

    /// `{"event":"command.ok","command":…,"result":…}` or
    /// `{"event":"command.error","command":…,"message":…}`.
    public var json: JSONValue {
        switch outcome {
        case .success(let result):
            return ["event": "command.ok", "command": .string(command), "result": result.json]
        case .failure(let error):
            return ["event": "command.error", "command": .string(command), "message": .string(error.message)]
        }
    }

    /// The reply as written: one JSON line, or text (`error: …` on one line for failures).
    /// - Parameters:
    ///   - format: text or JSON.
    ///   - showSecrets: when `false`, secrets in the result (the setup code, its link and its
    ///     bootstrap token) are written as `<redacted>` (`harness serve` without `--show-secrets`).
    public func rendered(_ format: ConsoleOutputFormat, showSecrets: Bool = true) -> String {
        let result = showSecrets ? self.result : self.result?.redacted
        switch (format, outcome) {
        case (.json, .success):
            return ConsoleReply(command: command, outcome: .success(result ?? .quitting)).json.jsonString
        case (.json, .failure): return json.jsonString
        case (.text, .success): return result?.text ?? ""
        case (.text, .failure(let error)): return "error: \(error.message)"
        }
    }
}

extension PairingRequestInfo {
    var consoleJSON: JSONValue {
        ["requestId": .string(requestId), "deviceId": .string(deviceId), "role": .string(role),
         "roles": .consoleList(roles), "scopes": .consoleList(scopes), "createdAtMs": .int(createdAtMs)]
    }
}

extension PairedDevice {
    func consoleJSON(connected: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "deviceId": .string(deviceId), "roles": .array(roles.map { .string($0.rawValue) }), "scopes": .consoleList(scopes),
            "approvedVia": .string(approvedVia.rawValue), "approvedAtMs": .int(approvedAtMs), "nodeConnected": .bool(connected),
        ]
        if let displayName { object["displayName"] = .string(displayName) }
        if let platform { object["platform"] = .string(platform) }
        if let lastSeenAtMs { object["lastSeenAtMs"] = .int(lastSeenAtMs) }
        if let lastSeenReason { object["lastSeenReason"] = .string(lastSeenReason) }
        return .object(object)
    }
}

extension JSONValue {
    static func consoleList(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
}

/// Small text helpers of the console's output.
enum ConsoleText {
    /// `text` as is when it is a plain word, otherwise as a JSON string literal.
    static func quoteIfNeeded(_ text: String) -> String {
        let plain = !text.isEmpty && !text.contains { $0.isWhitespace || $0 == "\"" || $0 == "=" }
        return plain ? text : JSONValue.string(text).jsonString
    }

    /// `2` rather than `2.0`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
