import GatewayProtocol

/// A node currently registered after `hello-ok` (docs/protocol.md §6.1).
public struct RegisteredNode: Sendable, Hashable {
    /// The node id: the device id (or `client.id` without a device).
    public var nodeId: String
    /// The connection that carries it now.
    public var connectionId: String
    /// `client.id`.
    public var clientId: String
    /// `client.mode`.
    public var clientMode: String
    /// `client.displayName`.
    public var displayName: String?
    /// `client.platform`.
    public var platform: String
    /// `client.version`.
    public var version: String
    /// `client.deviceFamily`.
    public var deviceFamily: String?
    /// `client.modelIdentifier`.
    public var modelIdentifier: String?
    /// Declared capability categories.
    public var caps: [String]
    /// Declared commands (`connect.commands`); the node command policy decides which of them an
    /// operator may invoke (docs/protocol.md §6.7, `NodeCommandPolicy`).
    public var commands: [String]
    /// Declared permission toggles.
    public var permissions: [String: Bool]
    /// `pathEnv`, for node hosts.
    public var pathEnv: String?
    /// The peer address.
    public var remoteIp: String
    /// When it connected (Gateway clock).
    public var connectedAtMs: Int64

    /// Creates a registered node.
    public init(nodeId: String, connectionId: String, clientId: String, clientMode: String, displayName: String?,
                platform: String, version: String, deviceFamily: String?, modelIdentifier: String?, caps: [String],
                commands: [String], permissions: [String: Bool], pathEnv: String?, remoteIp: String, connectedAtMs: Int64) {
        self.nodeId = nodeId
        self.connectionId = connectionId
        self.clientId = clientId
        self.clientMode = clientMode
        self.displayName = displayName
        self.platform = platform
        self.version = version
        self.deviceFamily = deviceFamily
        self.modelIdentifier = modelIdentifier
        self.caps = caps
        self.commands = commands
        self.permissions = permissions
        self.pathEnv = pathEnv
        self.remoteIp = remoteIp
        self.connectedAtMs = connectedAtMs
    }
}

/// An invoke sent to a node and not yet answered.
public struct PendingInvoke: Sendable, Hashable {
    /// The invoke id (`node.invoke.request.id`).
    public var id: String
    /// The target node.
    public var nodeId: String
    /// The connection the request was sent on.
    public var connectionId: String
    /// The command.
    public var command: String
    /// The idempotency key, when the caller gave one.
    public var idempotencyKey: String?
    /// When the Gateway gives up (Gateway clock); `nil` for `timeoutMs: 0` (unbounded).
    public var deadlineMs: Int64?
    /// The params as sent (`paramsJSON`), kept for a foreground action queued on refusal.
    public var paramsJSON: String? = nil
}

/// How a `node.invoke.result` was taken (docs/protocol.md §6.4).
public enum InvokeResultDisposition: Sendable, Hashable {
    /// It answered a pending invoke, which is now complete.
    case completed(PendingInvoke, NodeInvokeResult)
    /// Unknown or late id: acknowledged with `{ok:true, ignored:true}`.
    case ignored
    /// `nodeId` is not the caller's node: `INVALID_REQUEST "nodeId mismatch"`.
    case nodeIdMismatch
}

/// The node side of the Gateway: which node is on which socket and the invokes in flight (the
/// presence throttle is a `node.event` rule, `NodeEventRules`). A value type; the Gateway owns it.
public struct NodeRegistry: Sendable {
    /// The minimum time between two persisted `node.presence.alive` beacons of one device and
    /// pairing generation (docs/protocol.md §6.6); the rule lives in ``NodeEventRules``.
    public static let presenceThrottleMs: Int64 = NodeEventRules.presenceThrottleMs

    /// Registered nodes by node id.
    public private(set) var nodes: [String: RegisteredNode] = [:]
    /// Invokes in flight by invoke id.
    public private(set) var pendingInvokes: [String: PendingInvoke] = [:]

    /// Creates an empty registry.
    public init() {}

    /// Registers a node. A newer socket for the same node id replaces the older one as the
    /// routing target (docs/protocol.md §6.1: the protocol-3-era Gateway
    /// replaced the registry entry and left the old socket alone; that is the tolerant choice).
    /// - Returns: the connection id that was replaced, if any.
    @discardableResult
    public mutating func register(_ node: RegisteredNode) -> String? {
        let previous = nodes[node.nodeId]?.connectionId
        nodes[node.nodeId] = node
        return previous == node.connectionId ? nil : previous
    }

    /// Unregisters the node carried by `connectionId`, unless a newer socket already replaced it.
    /// - Returns: the node id that went away.
    public mutating func unregister(connectionId: String) -> String? {
        guard let entry = nodes.first(where: { $0.value.connectionId == connectionId }) else { return nil }
        nodes.removeValue(forKey: entry.key)
        return entry.key
    }

    /// The node carried by `connectionId`, if it is the current socket of its node.
    public func node(onConnection connectionId: String) -> RegisteredNode? {
        nodes.values.first { $0.connectionId == connectionId }
    }

    /// Records an invoke that is about to be sent.
    public mutating func begin(_ invoke: PendingInvoke) {
        pendingInvokes[invoke.id] = invoke
    }

    /// Takes a `node.invoke.result` from the node on `callerNodeId`.
    ///
    /// The result is matched by invoke id alone, whichever socket of the node it arrives on: the
    /// Gateway accepts it, and conformance checks look at the connection it came on.
    public mutating func takeResult(_ result: NodeInvokeResult, callerNodeId: String) -> InvokeResultDisposition {
        guard result.nodeId == callerNodeId else { return .nodeIdMismatch }
        guard let pending = pendingInvokes[result.id], pending.nodeId == callerNodeId else { return .ignored }
        pendingInvokes.removeValue(forKey: result.id)
        return .completed(pending, result)
    }

    /// Removes and returns the invokes whose deadline has passed.
    public mutating func expireInvokes(nowMs: Int64) -> [PendingInvoke] {
        let expired = pendingInvokes.values.filter { invoke in invoke.deadlineMs.map { $0 <= nowMs } ?? false }
        for invoke in expired { pendingInvokes.removeValue(forKey: invoke.id) }
        return expired.sorted { $0.id < $1.id }
    }

    /// Removes and returns a pending invoke (cancelled by its caller).
    public mutating func cancelInvoke(id: String) -> PendingInvoke? {
        pendingInvokes.removeValue(forKey: id)
    }

    /// The earliest invoke deadline, for the timer.
    public var nextInvokeDeadlineMs: Int64? {
        pendingInvokes.values.compactMap(\.deadlineMs).min()
    }
}
