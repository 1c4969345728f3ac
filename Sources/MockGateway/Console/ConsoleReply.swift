import Foundation
import GatewayProtocol

/// How `harness serve` writes its lines.
public enum ConsoleOutputFormat: String, Sendable, Hashable {
    /// Human-readable text.
    case text
    /// One JSON object per line, each with an `"event"` member.
    case json
}

/// A setup code's QR code as the console shows it.
public struct SetupCodeQR: Sendable, Hashable {
    /// The symbol drawn for a terminal (text mode only).
    public var terminalText: String
    /// Where the PNG was written, when one was asked for.
    public var pngFile: String?

    /// Creates a rendering.
    public init(terminalText: String, pngFile: String? = nil) {
        self.terminalText = terminalText
        self.pngFile = pngFile
    }
}

/// The console's one-line `status`.
public struct ConsoleStatus: Sendable, Hashable {
    /// The URL clients connect to.
    public var url: String
    /// Paired devices.
    public var devices: Int
    /// Connected nodes.
    public var nodes: Int
    /// Pending pairing requests.
    public var pending: Int
    /// Open connections.
    public var connections: Int
    /// The armed faults.
    public var faults: FaultStatus
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
    /// `setup-code`: the code with its setup id and expiry, the name of its profile, and its QR
    /// code when the console can draw one.
    case setupCode(IssuedSetupCode, profile: String, qr: SetupCodeQR?)
    /// `nodes`.
    case nodes([RegisteredNode])
    /// `connections`.
    case connections([ConnectionSummary])
    /// `status`.
    case status(ConsoleStatus)
    /// `help <command>`.
    case helpCommand(ConsoleCommandHelp)
    /// A fault command: what was armed (the `fault.injected` line confirms it).
    case faultArmed(String)
    /// `event`: the connections it was sent to.
    case eventSent(name: String, connectionIds: [String])
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
    /// `drain`: the drain now in force (`nil` after `drain off`).
    case drained(GatewayDrain?)
    /// `wake`: the silent push that was sent and what its transport answered.
    case woken(NodeWakeAttempt)
    /// `voicewake`: the voice wake triggers now.
    case voiceWake([String])
    /// `workspace`: the agent and its workspace directory now (`nil`: none).
    case workspace(agentId: String, directory: String?)

    /// The result with its secrets replaced by `<redacted>`: what is printed without
    /// `--show-secrets`.
    public var redacted: ConsoleResult {
        switch self {
        case .setupCode(var issued, let profile, let qr):
            issued.code.redactSecrets()
            return .setupCode(issued, profile: profile, qr: qr)
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
        case .setupCode(let issued, let profile, let qr):
            let code = issued.code
            var object: [String: JSONValue] = [
                "setupCode": .string(code.encoded), "url": .string(code.url), "link": .string(code.link),
                "bootstrapToken": .string(code.bootstrapToken), "profile": .string(profile), "setupId": .string(issued.setupId),
                "access": .string(issued.access.rawValue), "expiresAtMs": .int(issued.expiresAtMs),
            ]
            if let fingerprint = code.tlsFingerprint { object["tlsFingerprint"] = .string(fingerprint) }
            if let png = qr?.pngFile { object["qrPng"] = .string(png) }
            if issued.accessDowngraded { object["accessDowngraded"] = true }
            return .object(object)
        case .nodes(let nodes):
            return ["nodes": .array(nodes.map { node in
                var object: [String: JSONValue] = [
                    "nodeId": .string(node.nodeId), "connectionId": .string(node.connectionId), "clientId": .string(node.clientId),
                    "platform": .string(node.platform), "version": .string(node.version), "commands": .consoleList(node.commands),
                    "remoteIp": .string(node.remoteIp), "connectedAtMs": .int(node.connectedAtMs),
                ]
                if let name = node.displayName { object["displayName"] = .string(name) }
                return .object(object)
            })]
        case .connections(let connections):
            return ["connections": .array(connections.map { connection in
                var object: [String: JSONValue] = [
                    "connectionId": .string(connection.connectionId), "remoteAddress": .string(connection.remoteAddress),
                    "closing": .bool(connection.closing),
                ]
                if let role = connection.role { object["role"] = .string(role) }
                if let deviceId = connection.deviceId { object["deviceId"] = .string(deviceId) }
                if let clientId = connection.clientId { object["clientId"] = .string(clientId) }
                return .object(object)
            })]
        case .status(let status):
            return ["url": .string(status.url), "devices": .int(Int64(status.devices)), "nodes": .int(Int64(status.nodes)),
                    "pending": .int(Int64(status.pending)), "connections": .int(Int64(status.connections)),
                    "faults": .consoleList(status.faults.descriptions)]
        case .helpCommand(let entry):
            return ["name": .string(entry.name), "usage": .string(entry.usage), "summary": .string(entry.summary),
                    "example": .string(entry.example)]
        case .faultArmed(let description):
            return ["fault": .string(description)]
        case .eventSent(let name, let connectionIds):
            return ["event": .string(name), "connectionIds": .consoleList(connectionIds)]
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
        case .drained(let drain):
            return ["drain": drain.map { .string($0.rawValue) } ?? .null, "reason": drain.map { .string($0.reason) } ?? .null,
                    "retryAfterMs": drain == nil ? .null : .int(Int64(GatewayDrain.retryAfterMs))]
        case .voiceWake(let triggers):
            return ["triggers": .array(triggers.map(JSONValue.string))]
        case .workspace(let agentId, let directory):
            return ["agentId": .string(agentId), "directory": directory.map(JSONValue.string) ?? .null]
        case .woken(let attempt):
            var object: [String: JSONValue] = [
                "nodeId": .string(attempt.nodeId), "path": .string(attempt.path.rawValue),
                "delivered": .bool(attempt.isDelivered), "wakeReason": .string(attempt.reason),
            ]
            if let delivery = attempt.delivery {
                object["transport"] = .string(delivery.transport)
                object["pushType"] = .string(delivery.pushType)
                object["accepted"] = .bool(delivery.accepted)
                object["status"] = .int(Int64(delivery.status))
                if let priority = delivery.priority { object["priority"] = .int(Int64(priority)) }
                if let reason = delivery.reason { object["reason"] = .string(reason) }
                if let payload = delivery.payload { object["payload"] = payload }
            }
            return .object(object)
        }
    }

    /// The result as text for a person at a terminal (may span lines).
    public var text: String {
        switch self {
        case .pending(let requests):
            guard !requests.isEmpty else { return "no pending pairing requests" }
            return requests.map { request in
                "\(request.requestId)  device \(ConsoleText.short(request.deviceId))  \(request.roles.map(\.rawValue).joined(separator: ","))"
                    + (request.scopes.isEmpty ? "" : "  \(request.scopes.count) scope\(request.scopes.count == 1 ? "" : "s")")
            }.joined(separator: "\n")
        case .devices(let devices, let connected):
            guard !devices.isEmpty else { return "no paired devices" }
            return devices.map { device in
                var line = "\(ConsoleText.short(device.deviceId))  \(device.roles.map(\.rawValue).joined(separator: ","))"
                if let name = device.label ?? device.displayName { line += "  \(ConsoleText.quoteIfNeeded(String(name.prefix(24))))" }
                if let platform = device.platform { line += "  \(ConsoleText.quoteIfNeeded(String(platform.prefix(16))))" }
                line += "  via \(device.approvedVia.rawValue)"
                if connected.contains(device.deviceId) { line += "  (node connected)" }
                return line
            }.joined(separator: "\n")
        case .nodes(let nodes):
            guard !nodes.isEmpty else { return "no connected nodes" }
            return nodes.map { node in
                var line = "\(ConsoleText.short(node.nodeId))"
                if let name = node.displayName { line += "  \(ConsoleText.quoteIfNeeded(String(name.prefix(24))))" }
                line += "  \(ConsoleText.quoteIfNeeded(String(node.platform.prefix(16))))  \(node.commands.count) commands"
                line += "  \(node.remoteIp)  connection \(ConsoleText.short(node.connectionId))"
                return line
            }.joined(separator: "\n")
        case .connections(let connections):
            guard !connections.isEmpty else { return "no open connections" }
            return connections.map { connection in
                var line = "\(connection.connectionId)  \(connection.remoteAddress)  "
                line += connection.role.map { "\($0)" + (connection.deviceId.map { " \(ConsoleText.short($0))" } ?? "") } ?? "handshake"
                if connection.closing { line += "  (closing)" }
                return line
            }.joined(separator: "\n")
        case .status(let status):
            let faults = status.faults.descriptions
            return "\(status.url)  \(status.devices) device\(status.devices == 1 ? "" : "s")  \(status.nodes) node\(status.nodes == 1 ? "" : "s")"
                + "  \(status.pending) pending  \(status.connections) connection\(status.connections == 1 ? "" : "s")"
                + "  faults: \(faults.isEmpty ? "none" : faults.joined(separator: ", "))"
        case .helpCommand(let entry):
            return "\(entry.usage)\n  \(entry.summary)\n  example: \(entry.example)"
        case .faultArmed(let description):
            return "fault armed: \(description)"
        case .eventSent(let name, let connectionIds):
            return "sent \(name) to \(connectionIds.count) connection\(connectionIds.count == 1 ? "" : "s")"
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
        case .setupCode(let issued, let profile, let qr):
            let code = issued.code
            var lines: [String] = []
            if let qr { lines.append(qr.terminalText) }
            let hidden = code.isRedacted ? " (scan the QR code, or run serve with --show-secrets to see it)" : ""
            lines.append("setup code \(code.encoded)\(hidden)")
            lines.append("link \(code.link)")
            lines.append("url \(code.url)")
            lines.append("profile \(profile), access \(issued.access.rawValue), setup \(issued.setupId), expires at \(issued.expiresAtMs)")
            if issued.accessDowngraded {
                lines.append("""
                    access lowered from full to limited (no operator.admin): the code travels over plain ws:// on the LAN, \
                    where anyone on the network can read its bootstrap token; serve with --tls for a full-access code
                    """)
            }
            if let fingerprint = code.tlsFingerprint { lines.append("tls fingerprint \(fingerprint)") }
            if let png = qr?.pngFile { lines.append("qr png \(png)") }
            return lines.joined(separator: "\n")
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
        case .drained(let drain):
            guard let drain else { return "drain ended: serving requests again" }
            return "draining (\(drain.reason)): new requests get UNAVAILABLE with retryAfterMs \(GatewayDrain.retryAfterMs) until 'drain off'"
        case .voiceWake(let triggers):
            return "voice wake triggers: " + triggers.map { ConsoleText.quoteIfNeeded($0) }.joined(separator: ", ")
        case .workspace(let agentId, let directory):
            return directory.map { "agent \(agentId) browses \($0)" } ?? "agent \(agentId) has no workspace"
        case .woken(let attempt):
            var line = attempt.summary
            if let payload = attempt.delivery?.payload { line += "\npayload \(payload.jsonString)" }
            return line + "\nno real APNs or relay is contacted: a real device is not woken"
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
        ["requestId": .string(requestId), "deviceId": .string(deviceId), "role": .string(role.rawValue),
         "roles": .consoleList(roles.map(\.rawValue)), "scopes": .consoleList(scopes), "createdAtMs": .int(createdAtMs)]
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

extension FaultStatus {
    /// One short phrase per armed fault.
    public var descriptions: [String] {
        var items = droppedResponses.map { "drop-next \($0)" }
        if let responseDelay { items.append("delay \(responseDelay)") }
        if ticksStopped { items.append("ticks stopped") }
        if startingUp { items.append("starting (1013)") }
        if down { items.append("down until resume") }
        if eventsAsBinary > 0 { items.append("\(eventsAsBinary) binary events") }
        if eventsFragmented > 0 { items.append("\(eventsFragmented) fragmented events") }
        return items
    }
}

/// Small text helpers of the console's output.
public enum ConsoleText {
    /// `text` as one console word: as is when it has no space or quote, else in double quotes
    /// with `"` and `\\` escaped.
    public static func quoted(_ text: String) -> String {
        guard text.isEmpty || text.contains(where: { $0 == " " || $0 == "\t" || $0 == "\"" || $0 == "\\" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// A long id cut to 12 characters and `…`, so that listings fit a terminal line; the
    /// console accepts such a prefix wherever it expects an id.
    static func short(_ id: String) -> String {
        id.count > 16 ? String(id.prefix(12)) + "…" : id
    }

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
