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
    /// `approve` of a node pairing request (a widened command surface): the node and its approved
    /// commands.
    case nodeSurfaceApproved(requestId: String, nodeId: String, commands: [String])
    /// `reject`.
    case rejected(requestId: String, deviceId: String?)
    /// `reject` of a node pairing request: the node and the commands it asked for (its approved
    /// surface stays).
    case nodeSurfaceRejected(requestId: String, nodeId: String, commands: [String])
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
    /// `node-commands`: the node command policy now in force.
    case nodeCommandPolicy(NodeCommandPolicy)
    /// `voicewake`: the voice wake triggers now.
    case voiceWake([String])
    /// `workspace`: the agent and its workspace directory now (`nil`: none).
    case workspace(agentId: String, directory: String?)
    /// `commands` / `talk-mode`: the fixture now in force.
    case appFixture(AppFixtureReply)

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

    /// The reply type that renders this result: each is declared next to its command's spec
    /// (`ConsoleCommands.swift`, `ChatConsoleCommand.swift`), so that a command's arguments,
    /// handler and output are in one place.
    var rendering: any ConsoleRendering {
        switch self {
        case .pending(let requests): PendingReply(requests: requests)
        case .devices(let devices, let connected): DevicesReply(devices: devices, connected: connected)
        case .approved(let requestId, let device): ApprovedReply(requestId: requestId, device: device)
        case .nodeSurfaceApproved(let requestId, let nodeId, let commands):
            NodeSurfaceApprovedReply(requestId: requestId, nodeId: nodeId, commands: commands)
        case .rejected(let requestId, let deviceId): RejectedReply(requestId: requestId, deviceId: deviceId)
        case .nodeSurfaceRejected(let requestId, let nodeId, let commands):
            NodeSurfaceRejectedReply(requestId: requestId, nodeId: nodeId, commands: commands)
        case .removed(let deviceId): RemovedReply(deviceId: deviceId)
        case .revoked(let deviceId, let role): RevokedReply(deviceId: deviceId, role: role)
        case .invoked(let nodeId, let command, let result): InvokedReply(nodeId: nodeId, command: command, result: result)
        case .setupCode(let issued, let profile, let qr): SetupCodeReply(issued: issued, profile: profile, qr: qr)
        case .nodes(let nodes): NodesReply(nodes: nodes)
        case .connections(let connections): ConnectionsReply(connections: connections)
        case .status(let status): status
        case .helpCommand(let entry): entry
        case .faultArmed(let description): FaultArmedReply(description: description)
        case .eventSent(let name, let connectionIds): EventSentReply(name: name, connectionIds: connectionIds)
        case .advanced(let seconds, let nowMs): AdvancedReply(seconds: seconds, nowMs: nowMs)
        case .restarted: RestartedReply()
        case .help(let commands): HelpReply(commands: commands)
        case .quitting: QuittingReply()
        case .approvalCreated(let record): ApprovalCreatedReply(record: record)
        case .approvalResolved(let applied, let record): ApprovalResolvedReply(applied: applied, record: record)
        case .questionCreated(let record): QuestionCreatedReply(record: record)
        case .questionResolved(let record): QuestionResolvedReply(record: record)
        case .chat(let result): result
        case .drained(let drain): DrainedReply(drain: drain)
        case .nodeCommandPolicy(let policy): NodeCommandPolicyReply(policy: policy)
        case .voiceWake(let triggers): VoiceWakeReply(triggers: triggers)
        case .workspace(let agentId, let directory): WorkspaceReply(agentId: agentId, directory: directory)
        case .woken(let attempt): WokenReply(attempt: attempt)
        case .appFixture(let reply): reply
        }
    }

    /// The result as a JSON object (the `result` member of `command.ok`).
    public var json: JSONValue { rendering.json }

    /// The result as text for a person at a terminal (may span lines).
    public var text: String { rendering.text }
}

/// How a console command's reply is written: the `result` member of `command.ok`, and the text
/// for a terminal. Each command's reply type conforms next to the command's spec.
protocol ConsoleRendering: Sendable {
    /// The `result` member of `command.ok`.
    var json: JSONValue { get }
    /// The text for a person at a terminal (may span lines).
    var text: String { get }
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

    /// One line per item, or `empty` when there are none (the listings: `pending`, `devices`, ...).
    static func lines<Item>(_ items: [Item], empty: String, _ line: (Item) -> String) -> String {
        items.isEmpty ? empty : items.map(line).joined(separator: "\n")
    }

    /// `2` rather than `2.0`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
