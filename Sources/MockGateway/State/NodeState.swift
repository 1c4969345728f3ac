import GatewayProtocol

/// The connected nodes and what runs through them: routing, invokes and who waits for them,
/// queued foreground actions, presence and activity, canvas capabilities: the node surface's
/// state.
struct NodeState: Sendable {
    /// The connected nodes and the pending invokes.
    var registry = NodeRegistry()
    /// Scripting-API callers waiting for an invoke's outcome, by invoke id.
    var invokeWaiters: [String: CheckedContinuation<InvokeOutcome, Never>] = [:]
    /// Operator `node.invoke` requests waiting for an invoke's outcome, by invoke id.
    var invokeOperatorCallers: [String: OperatorInvokeCaller] = [:]
    /// The presence state version (`stateVersion.presence`).
    var presenceVersion = 1
    /// Foreground actions a node refused in the background.
    var pendingActions = PendingActionQueue()
    /// When a presence beacon was last persisted, per device and pairing generation
    /// (`NodeEventFacts.presenceThrottleKey`).
    var presencePersistStamps: [String: Int64] = [:]
    /// The latest input activity of each node (`node.presence.activity`), by node id.
    var nodeActivity: [String: NodeActivity] = [:]
    /// A separate random stream for canvas capabilities, so that minting them leaves the ids
    /// drawn from the core's stream as they were.
    var capabilityRandom: SeededRandom
    /// The wake sequences of `node.invoke` and their throttles (`State/NodeState+Wake.swift`).
    var invokeWake = InvokeWakeState()
    /// The canvas capabilities handed out, per session (`GatewayCore+CanvasHost.swift`).
    var canvasCapabilities = CanvasCapabilityLedger()
    /// Whether the canvas host has A2UI assets (503 for `…/__openclaw__/a2ui/` otherwise).
    var a2uiAvailable = true
    /// The node command policy (configured, and any set from the console), and the
    /// `talk.event` sequence numbers.
    var policy: NodePolicyState
    /// Approved command surfaces, node pairing requests and each connected node's declared,
    /// effective and withheld commands (docs/protocol.md §6.7, "Surface approval").
    var surfaces = NodeSurfaceApprovals()
    /// Nodes' push registrations and the pushes handed to a transport.
    var push = PushState()

    /// No node yet; `commandPolicy` is the configured node command policy
    /// (``GatewayConfiguration/nodeCommands``).
    init(capabilityRandom: SeededRandom, commandPolicy: NodeCommandPolicy = NodeCommandPolicy()) {
        self.capabilityRandom = capabilityRandom
        self.policy = NodePolicyState(configured: commandPolicy)
    }

    /// The presence list of `hello-ok.snapshot` and `presence` events: the Gateway, then every
    /// node by id.
    func presenceEntries(nowMs: Int64) -> [PresenceEntry] {
        var entries = [PresenceEntry(ts: Int(nowMs), host: "mock-gateway", mode: "gateway")]
        for node in registry.nodes.values.sorted(by: { $0.nodeId < $1.nodeId }) {
            entries.append(PresenceEntry(
                ts: Int(node.connectedAtMs), ip: node.remoteIp, version: node.version, platform: node.platform,
                deviceFamily: node.deviceFamily, modelIdentifier: node.modelIdentifier, mode: node.clientMode,
                reason: "connect", deviceId: node.nodeId, roles: ["node"], scopes: []))
        }
        return entries
    }

    /// The node set changed: a new presence version and its `presence` broadcast.
    mutating func presenceChanged(nowMs: Int64) -> [GatewayEffect] {
        presenceVersion += 1
        return [.broadcast(event: GatewayEventName.presence.rawValue, payload: PresenceEvent(presence: presenceEntries(nowMs: nowMs)).json,
                           stateVersion: StateVersion(presence: presenceVersion, health: 1))]
    }
}
