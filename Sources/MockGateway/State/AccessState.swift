import GatewayProtocol

/// Who may connect and with what: pairing, device and bootstrap tokens, the shared secret and
/// the failed-attempt limits: the pairing-and-tokens surface's state. Its durable part is what
/// the state directory holds.
struct AccessState: Sendable {
    /// Paired devices, pending requests, device tokens.
    var pairing: PairingStore
    /// Setup codes' bootstrap tokens and their outcomes.
    var bootstrapTokens: BootstrapTokenStore
    /// The shared-secret mode in force (it starts as `configuration.auth` and changes with
    /// `Gateway.changeSharedSecret`).
    var sharedAuth: GatewayAuthMode
    /// Bumped whenever the shared secret changes.
    var sharedAuthGeneration = 0
    /// Failed authentications per (scope, address).
    var authRateLimiter: AuthRateLimiter
    /// The devices whose node capability surface was requested (their first node session), by
    /// public key: later node sessions of the same key are "paired reconnects", not counted by
    /// the node-pairing rate limit.
    var nodeSurfaces: [String: String] = [:]
    /// Whether rejecting a pairing request revokes the device's bootstrap tokens (the current
    /// Gateway: `GatewayProfile.rejectRevokesBootstrapTokens`).
    var rejectRevokesBootstrapTokens = true
    /// Whether setup-code outcomes are recorded and announced (`GatewayProfile.hasSetupCodeLifecycle`).
    var hasSetupCodeLifecycle = true
    /// The last state-save failure reported, so that a failing disk is reported once per message.
    var lastSaveFailure: String?
}
