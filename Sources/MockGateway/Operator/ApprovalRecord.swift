import Foundation
import GatewayProtocol

/// The kind of an approval (`presentation.kind`, docs/protocol.md §7.2).
public enum ApprovalKind: String, Sendable, Hashable, CaseIterable {
    /// A shell command.
    case exec
    /// A plugin tool call.
    case plugin
    /// A system-agent proposal (newer).
    case systemAgent = "system-agent"
}

/// An operator's verdict (`allow-once | allow-always | deny`).
public enum ApprovalDecision: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Allow this one run.
    case allowOnce = "allow-once"
    /// Allow and keep a standing grant.
    case allowAlways = "allow-always"
    /// Deny; always available so that malformed or unsafe input can fail closed.
    case deny

    /// Wire order: allow-once, allow-always, deny.
    public static func < (lhs: ApprovalDecision, rhs: ApprovalDecision) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }

    /// The offered decisions, normalised: unique, in wire order, and always containing `deny`
    /// ("deny is always available so malformed or unsafe input can fail closed", A.2).
    public static func normalizedAllowedDecisions<S: Sequence>(_ offered: S) -> [ApprovalDecision]
    where S.Element == ApprovalDecision {
        Array(Set(offered).union([.deny])).sorted()
    }
}

/// The lifecycle status of an approval (A.2).
public enum ApprovalStatus: String, Sendable, Hashable, CaseIterable {
    /// Awaiting a decision.
    case pending
    /// Allowed (`allow-once` or `allow-always`).
    case allowed
    /// Denied (by a user, a malformed verdict, no route, or corrupt storage).
    case denied
    /// The deadline passed.
    case expired
    /// The run was aborted or the Gateway restarted.
    case cancelled

    /// Whether the record is final.
    public var isTerminal: Bool { self != .pending }
}

/// Why an approval ended (A.2: `reason` on terminal records).
public enum ApprovalTerminalReason: String, Sendable, Hashable, CaseIterable {
    /// A person decided (allowed or denied).
    case user
    /// A resolve with a wrong kind, a decision that was not offered, or invalid params: force-denied.
    case malformedVerdict = "malformed-verdict"
    /// No approver could be reached (denied at creation).
    case noRoute = "no-route"
    /// The stored row was unreadable.
    case storageCorrupt = "storage-corrupt"
    /// The deadline passed (expired).
    case timeout
    /// The requesting run was aborted (cancelled).
    case runAborted = "run-aborted"
    /// The Gateway restarted while the approval was pending (cancelled).
    case gatewayRestart = "gateway-restart"
}

/// Who resolved an approval (`resolver` on terminal RPC snapshots).
public struct ApprovalResolver: Sendable, Hashable {
    /// The resolver's kind.
    public enum Kind: String, Sendable, Hashable {
        /// A paired device (its device id).
        case device
        /// A chat channel acting for a user.
        case channel
        /// A device-less client or runtime (its client id).
        case runtime
        /// The Gateway itself (expiry, restart, no route).
        case system
    }

    /// The kind.
    public var kind: Kind
    /// The device id, channel reviewer id or client id.
    public var id: String?

    /// Creates a resolver.
    public init(kind: Kind, id: String? = nil) {
        self.kind = kind
        self.id = id
    }

    /// The resolver of a wire caller (upstream: device id if any, otherwise `runtime` + client id).
    public init(caller: OperatorCaller) {
        if let deviceId = caller.deviceId {
            self.init(kind: .device, id: deviceId)
        } else {
            self.init(kind: .runtime, id: caller.clientId ?? caller.surface)
        }
    }

    var json: JSONValue {
        var object: [String: JSONValue] = ["kind": .string(kind.rawValue)]
        if let id { object["id"] = .string(id) }
        return .object(object)
    }
}

/// What an exec approval shows.
public struct ExecApprovalPresentation: Sendable, Hashable {
    /// The command as displayed (required).
    public var commandText: String
    /// A short preview.
    public var commandPreview: String?
    /// A warning to show next to the command.
    public var warningText: String?
    /// `gateway` or `node`.
    public var host: String?
    /// The node that runs it (host `node`).
    public var nodeId: String?
    /// The agent asking.
    public var agentId: String?

    /// Creates an exec presentation.
    public init(commandText: String, commandPreview: String? = nil, warningText: String? = nil,
                host: String? = nil, nodeId: String? = nil, agentId: String? = nil) {
        self.commandText = commandText
        self.commandPreview = commandPreview
        self.warningText = warningText
        self.host = host
        self.nodeId = nodeId
        self.agentId = agentId
    }
}

/// What a plugin approval shows.
public struct PluginApprovalPresentation: Sendable, Hashable {
    /// Title, 1-80 characters.
    public var title: String
    /// Description, 1-512 characters.
    public var description: String
    /// `info`, `warning` or `critical`.
    public var severity: String
    /// The plugin.
    public var pluginId: String?
    /// The tool.
    public var toolName: String?
    /// The agent asking.
    public var agentId: String?

    /// Creates a plugin presentation.
    public init(title: String, description: String, severity: String = "warning", pluginId: String? = nil,
                toolName: String? = nil, agentId: String? = nil) {
        self.title = title
        self.description = description
        self.severity = severity
        self.pluginId = pluginId
        self.toolName = toolName
        self.agentId = agentId
    }
}

/// What a system-agent approval shows.
public struct SystemAgentApprovalPresentation: Sendable, Hashable {
    /// Title.
    public var title: String
    /// Description.
    public var description: String
    /// SHA-256 of the proposal, 64 hex characters.
    public var proposalHash: String
    /// The agent asking.
    public var agentId: String?

    /// Creates a system-agent presentation.
    public init(title: String, description: String, proposalHash: String, agentId: String? = nil) {
        self.title = title
        self.description = description
        self.proposalHash = proposalHash
        self.agentId = agentId
    }
}

/// The kind-specific part of an approval (`presentation`, discriminated by `kind`).
public enum ApprovalPresentation: Sendable, Hashable {
    /// `kind:"exec"`.
    case exec(ExecApprovalPresentation)
    /// `kind:"plugin"`.
    case plugin(PluginApprovalPresentation)
    /// `kind:"system-agent"`; its decisions are fixed to `["allow-once","deny"]`.
    case systemAgent(SystemAgentApprovalPresentation)

    /// The kind.
    public var kind: ApprovalKind {
        switch self {
        case .exec: .exec
        case .plugin: .plugin
        case .systemAgent: .systemAgent
        }
    }

    /// The agent asking, for any kind.
    public var agentId: String? {
        switch self {
        case .exec(let value): value.agentId
        case .plugin(let value): value.agentId
        case .systemAgent(let value): value.agentId
        }
    }

    /// The wire object, with `allowedDecisions`; absent optional fields are omitted.
    func json(allowedDecisions: [ApprovalDecision]) -> JSONValue {
        var object: [String: JSONValue] = ["kind": .string(kind.rawValue)]
        func put(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        switch self {
        case .exec(let value):
            put("commandText", value.commandText)
            put("commandPreview", value.commandPreview)
            put("warningText", value.warningText)
            put("host", value.host)
            put("nodeId", value.nodeId)
            put("agentId", value.agentId)
        case .plugin(let value):
            put("title", value.title)
            put("description", value.description)
            put("severity", value.severity)
            put("pluginId", value.pluginId)
            put("toolName", value.toolName)
            put("agentId", value.agentId)
        case .systemAgent(let value):
            put("title", value.title)
            put("description", value.description)
            put("proposalHash", value.proposalHash)
            put("agentId", value.agentId)
        }
        object["allowedDecisions"] = .array(allowedDecisions.map { .string($0.rawValue) })
        return .object(object)
    }
}

/// One approval: a single lifecycle shared by the unified `approval.*` API and the legacy
/// `exec.approval.*` adapter (the design note: "existing exec/plugin methods kept as thin
/// adapters").
public struct ApprovalRecord: Sendable, Hashable {
    /// The exact full id (compared as exact bytes).
    public let id: String
    /// What the approval shows.
    public var presentation: ApprovalPresentation
    /// The offered decisions: 1-3 unique values that always include `deny`.
    public var allowedDecisions: [ApprovalDecision]
    /// Creation time (Gateway clock).
    public var createdAtMs: Int64
    /// The deadline; `now == expiresAtMs` already counts as expired.
    public var expiresAtMs: Int64
    /// The status.
    public var status: ApprovalStatus
    /// The decision, for `allowed` and `denied`.
    public var decision: ApprovalDecision?
    /// Why it ended (terminal only).
    public var reason: ApprovalTerminalReason?
    /// When it ended (terminal only).
    public var resolvedAtMs: Int64?
    /// Who ended it (terminal only).
    public var resolver: ApprovalResolver?
    /// The legacy `resolvedBy` label of the winning caller (`displayName ?? client.id`).
    public var resolvedBy: String?
    /// The requesting agent.
    public var sourceAgentId: String?
    /// The requesting session (routes `session.approval` events).
    public var sourceSessionKey: String?
    /// When non-empty, only these paired devices (and `operator.admin`) may see and resolve it.
    public var reviewerDeviceIds: [String]
    /// The legacy stored `request` object (`exec.approval.requested`, `exec.approval.list`).
    public var legacyRequest: JSONValue

    /// Creates a record. `allowedDecisions` is normalised (unique, wire order, `deny` added).
    public init(id: String, presentation: ApprovalPresentation, allowedDecisions: [ApprovalDecision],
                createdAtMs: Int64, expiresAtMs: Int64, sourceAgentId: String? = nil,
                sourceSessionKey: String? = nil, reviewerDeviceIds: [String] = [], legacyRequest: JSONValue? = nil) {
        self.id = id
        self.presentation = presentation
        let offered: [ApprovalDecision] = presentation.kind == .systemAgent ? [.allowOnce, .deny] : allowedDecisions
        self.allowedDecisions = ApprovalDecision.normalizedAllowedDecisions(offered)
        self.createdAtMs = createdAtMs
        self.expiresAtMs = expiresAtMs
        self.status = .pending
        self.sourceAgentId = sourceAgentId ?? presentation.agentId
        self.sourceSessionKey = sourceSessionKey
        self.reviewerDeviceIds = reviewerDeviceIds
        self.legacyRequest = .null
        self.legacyRequest = legacyRequest ?? ExecApprovalWire.defaultRequest(for: self)
    }

    /// `<basePath>/approve/<id>`; the id is percent-encoded like JavaScript's
    /// `encodeURIComponent` (⚠️ UNCONFIRMED how upstream escapes non-ASCII ids; a plain UUID is
    /// unchanged either way).
    public func urlPath(basePath: String = "") -> String {
        let unreserved = CharacterSet(charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")
        let encoded = id.addingPercentEncoding(withAllowedCharacters: unreserved) ?? id
        let base = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
        return "\(base)/approve/\(encoded)"
    }

    /// The unified snapshot (A.2). RPC readers (`approval.get`, `approval.resolve`,
    /// `approval.history`) get `source` and `resolver` on terminal records; session events do not
    /// (`withAttribution: false`).
    public func snapshot(basePath: String = "", withAttribution: Bool = true) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(id),
            "status": .string(status.rawValue),
            "urlPath": .string(urlPath(basePath: basePath)),
            "createdAtMs": .int(createdAtMs),
            "expiresAtMs": .int(expiresAtMs),
            "presentation": presentation.json(allowedDecisions: allowedDecisions),
        ]
        if status.isTerminal {
            if let resolvedAtMs { object["resolvedAtMs"] = .int(resolvedAtMs) }
            if let reason { object["reason"] = .string(reason.rawValue) }
            if let decision, status == .allowed || status == .denied { object["decision"] = .string(decision.rawValue) }
            if withAttribution {
                var source: [String: JSONValue] = [:]
                if let sourceAgentId { source["agentId"] = .string(sourceAgentId) }
                if let sourceSessionKey { source["sessionKey"] = .string(sourceSessionKey) }
                object["source"] = .object(source)
                if let resolver { object["resolver"] = resolver.json }
            }
        }
        return .object(object)
    }

    /// Whether `caller` may see and resolve this record (A.5 "Who may resolve"): admin always; with
    /// a reviewer list only those devices; otherwise any `operator.approvals` session (the fake
    /// Gateway does not model the requester binding).
    public func isVisible(to caller: OperatorCaller) -> Bool {
        if caller.isAdmin || reviewerDeviceIds.isEmpty { return true }
        guard let deviceId = caller.deviceId else { return false }
        return reviewerDeviceIds.contains(deviceId)
    }
}
