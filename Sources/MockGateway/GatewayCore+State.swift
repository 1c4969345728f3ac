import GatewayProtocol

/// Short names for the members of the surface state values the rules use (the values are the
/// stored properties of `GatewayCore`; this file holds no state).
extension GatewayCore {
    /// The Gateway generation it acts as.
    nonisolated var profile: GatewayProfile { configuration.profile }
    /// The Gateway clock.
    nonisolated var clock: GatewayClock { configuration.clock }
    /// The event log.
    nonisolated var events: EventLog<GatewayEvent> { environment.events }
    /// The wire transcript.
    nonisolated var transcript: Transcript { environment.transcript }
    /// The Gateway's identity.
    nonisolated var identity: DeviceIdentity { environment.identity }
    /// When the Gateway started.
    nonisolated var startedAtMs: Int64 { environment.startedAtMs }
    /// The state directory generation.
    nonisolated var generation: Int { environment.generation }
    /// The TLS certificate fingerprint.
    nonisolated var tlsFingerprint: String? { environment.tlsFingerprint }

    /// Every open socket by connection id (read only: the connection table changes through its
    /// inputs, ``ConnectionTable/handle(_:)``).
    var connections: [String: ConnectionState] { connectionTable.byId }
    /// Push registrations and deliveries.
    var push: PushState {
        get { nodeState.push }
        _modify { yield &nodeState.push }
    }
    /// The apps' surfaces, `nil` until first used.
    var appSurfacesState: AppSurfaces? {
        get { apps.surfaces }
        _modify { yield &apps.surfaces }
    }
    /// Whether connects are refused as starting up (the fault layer's; `setStartingUp` arms it).
    var startingUp: Bool { faultLayer.startingUp }
    /// The connected nodes and pending invokes.
    var nodes: NodeRegistry {
        get { nodeState.registry }
        _modify { yield &nodeState.registry }
    }
    /// Scripting-API callers waiting for invokes.
    var invokeWaiters: [String: CheckedContinuation<InvokeOutcome, Never>] {
        get { nodeState.invokeWaiters }
        _modify { yield &nodeState.invokeWaiters }
    }
    /// Operator `node.invoke` requests waiting for invokes.
    var invokeOperatorCallers: [String: OperatorInvokeCaller] {
        get { nodeState.invokeOperatorCallers }
        _modify { yield &nodeState.invokeOperatorCallers }
    }
    /// The presence state version.
    var presenceVersion: Int {
        get { nodeState.presenceVersion }
        _modify { yield &nodeState.presenceVersion }
    }
    /// Queued foreground actions.
    var pendingActions: PendingActionQueue {
        get { nodeState.pendingActions }
        _modify { yield &nodeState.pendingActions }
    }
    /// When beacons were last persisted.
    var presencePersistStamps: [String: Int64] {
        get { nodeState.presencePersistStamps }
        _modify { yield &nodeState.presencePersistStamps }
    }
    /// The wake sequences of `node.invoke` and their throttles.
    var invokeWake: InvokeWakeState {
        get { nodeState.invokeWake }
        _modify { yield &nodeState.invokeWake }
    }
    /// The canvas capabilities handed out, per session.
    var canvasCapabilities: CanvasCapabilityLedger {
        get { nodeState.canvasCapabilities }
        _modify { yield &nodeState.canvasCapabilities }
    }
    /// Whether the canvas host has A2UI assets.
    var a2uiAvailable: Bool {
        get { nodeState.a2uiAvailable }
        set { nodeState.a2uiAvailable = newValue }
    }
    /// The console's node command policy and the `talk.event` sequence numbers.
    var nodePolicyState: NodePolicyState {
        get { nodeState.policy }
        _modify { yield &nodeState.policy }
    }
    /// Approved node command surfaces and node pairing requests.
    var nodeSurfaceApprovals: NodeSurfaceApprovals {
        get { nodeState.surfaces }
        _modify { yield &nodeState.surfaces }
    }
    /// The latest input activity of each node, by node id.
    var nodeActivity: [String: NodeActivity] {
        get { nodeState.nodeActivity }
        _modify { yield &nodeState.nodeActivity }
    }
    /// The canvas capability random stream.
    var capabilityRandom: SeededRandom {
        get { nodeState.capabilityRandom }
        _modify { yield &nodeState.capabilityRandom }
    }
    /// Paired devices, pending requests, device tokens.
    var pairingStore: PairingStore {
        get { access.pairing }
        _modify { yield &access.pairing }
    }
    /// Setup codes' bootstrap tokens.
    var bootstrapTokens: BootstrapTokenStore {
        get { access.bootstrapTokens }
        _modify { yield &access.bootstrapTokens }
    }
    /// The shared-secret mode in force.
    var sharedAuth: GatewayAuthMode {
        get { access.sharedAuth }
        _modify { yield &access.sharedAuth }
    }
    /// The shared secret's generation.
    var sharedAuthGeneration: Int {
        get { access.sharedAuthGeneration }
        _modify { yield &access.sharedAuthGeneration }
    }
    /// Failed authentications per scope and address.
    var authRateLimiter: AuthRateLimiter {
        get { access.authRateLimiter }
        _modify { yield &access.authRateLimiter }
    }
    /// Devices whose node surface was requested.
    var nodeSurfaces: [String: String] {
        get { access.nodeSurfaces }
        _modify { yield &access.nodeSurfaces }
    }
    /// The last state-save failure reported.
    var lastSaveFailure: String? {
        get { access.lastSaveFailure }
        _modify { yield &access.lastSaveFailure }
    }
    /// Nodes' push registrations.
    var pushRegistrations: [String: JSONValue] {
        get { push.registrations }
        _modify { yield &push.registrations }
    }
    /// Every push handed to a transport.
    var pushDeliveries: [PushDelivery] {
        get { push.deliveries }
        _modify { yield &push.deliveries }
    }
}
