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
    /// The apps' surfaces, `nil` until first used.
    var appSurfacesState: AppSurfaces? {
        get { apps.surfaces }
        _modify { yield &apps.surfaces }
    }
    /// Whether connects are refused as starting up (the fault layer's; `setStartingUp` arms it).
    var startingUp: Bool { faultLayer.startingUp }
    /// The connected nodes and pending invokes (for the Watch glue, `GatewayCore+Watch.swift`;
    /// the node rules use `nodeState.registry`).
    var nodes: NodeRegistry {
        get { nodeState.registry }
        _modify { yield &nodeState.registry }
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
}
