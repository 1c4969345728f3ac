import GatewayProtocol

/// What the access machine decided on a checked Watch connect
/// (``AccessState/admitWatch(_:policy:reportTokenScopes:nowMs:to:)``), each with the
/// announcements and log entries to run first.
enum WatchCredentialDecision: Sendable {
    /// Refused: 401.
    case refused([GatewayEffect])
    /// Refused by a rate limit: 429 with `retryAfterMs`.
    case rateLimited(retryAfterMs: Int64, [GatewayEffect])
    /// Admitted: the Watch gets `deviceToken`; a setup code's `bootstrap` grant is finished once
    /// the node is registered.
    case admitted(deviceToken: String, bootstrap: BootstrapGrant?, [GatewayEffect])
}

extension AccessState {
    /// The credential and pairing decision of a checked Watch connect (docs/protocol.md §13.2
    /// step 6): a bootstrap token of the `node` setup profile pairs the device silently; a device
    /// token must be the paired device's node token. Failed credentials count in their rate
    /// limit; a device's first node surface counts in the node-pairing limit, as on the
    /// WebSocket path (upstream's Watch connect wraps `requestNodePairing` in
    /// AUTH_RATE_LIMIT_SCOPE_NODE_PAIRING).
    mutating func admitWatch(_ candidate: WatchConnectCandidate, policy: AutoApprovalPolicy, reportTokenScopes: Bool,
                             nowMs: Int64, to listeners: [OperatorListener]) -> WatchCredentialDecision {
        let device = candidate.device
        let address = candidate.clientAddress
        let attempt = PairingAttempt(params: candidate.params, deviceId: device.deviceId, publicKey: device.publicKey,
                                     remoteIp: address, isLoopback: (try? IPAddress(parsing: address))?.isLoopback ?? false,
                                     hasBrowserOrigin: false, origin: nil)
        var bootstrapGrant: BootstrapGrant?
        switch candidate.credential {
        case .bootstrapToken(let token):
            let check = authRateLimiter.check(address, scope: .bootstrapToken, nowMs: nowMs)
            guard check.allowed else { return .rateLimited(retryAfterMs: check.retryAfterMs, []) }
            if let existing = pairing.pairedDevice(device.deviceId), existing.publicKey != device.publicKey { return .refused([]) }
            guard case .success(let grant) = bootstrapTokens.verify(token, deviceId: device.deviceId, publicKey: device.publicKey,
                                                                    role: .node, scopes: [], nowMs: nowMs),
                  grant.profile.access == .node
            else {
                authRateLimiter.recordFailure(address, scope: .bootstrapToken, nowMs: nowMs)
                return .refused([])
            }
            authRateLimiter.reset(address, scope: .bootstrapToken)
            bootstrapGrant = grant
        case .deviceToken(let token):
            let check = authRateLimiter.check(address, scope: .deviceToken, nowMs: nowMs)
            guard check.allowed else { return .rateLimited(retryAfterMs: check.retryAfterMs, []) }
            guard pairing.pairedDevice(device.deviceId)?.publicKey == device.publicKey,
                  case .success = pairing.verifyDeviceToken(token, deviceId: device.deviceId, role: .node, scopes: [],
                                                            sharedAuthGeneration: sharedAuthGeneration, nowMs: nowMs)
            else {
                authRateLimiter.recordFailure(address, scope: .deviceToken, nowMs: nowMs)
                return .refused([])
            }
            authRateLimiter.reset(address, scope: .deviceToken)
        }
        // A node-profile setup code approves a canonical Watch whatever the client (upstream
        // `approveBootstrapDevicePairing` on the Watch route); the WebSocket rule that limits
        // setup-code approval to the mobile apps does not apply here.
        let mobileOnly = pairing.setupCodeApprovalRequiresMobileClient
        pairing.setupCodeApprovalRequiresMobileClient = false
        let admission = pairing.admit(attempt, policy: policy, bootstrap: bootstrapGrant, nowMs: nowMs)
        pairing.setupCodeApprovalRequiresMobileClient = mobileOnly
        let handOff: BootstrapProfile?
        var effects: [GatewayEffect]
        switch admission {
        case .rejected(_, _, let pairingEffects):
            return .refused(announce(pairingEffects, nowMs: nowMs, to: listeners))
        case .admitted(let admitted, let pairingEffects):
            effects = announce(pairingEffects, nowMs: nowMs, to: listeners)
            handOff = admitted.bootstrapHandOff
        }
        // A device's first node surface is a node pairing request (`countNodeSurfaceRequest` on
        // the WebSocket path): locked out, 429.
        if nodeSurfaces[device.deviceId] != device.publicKey {
            let check = authRateLimiter.check(address, scope: .nodePairing, nowMs: nowMs)
            guard check.allowed else { return .rateLimited(retryAfterMs: check.retryAfterMs, effects) }
            authRateLimiter.recordFailure(address, scope: .nodePairing, nowMs: nowMs)
        }
        pairing.recordConnect(attempt, nowMs: nowMs)
        nodeSurfaces[device.deviceId] = device.publicKey
        let grant = pairing.grantHelloAuth(deviceId: device.deviceId, role: .node, scopes: [], handOff: handOff,
                                           reportTokenScopes: reportTokenScopes, nowMs: nowMs)
        guard let token = grant.deviceToken?.token else { return .refused(effects) }
        if bootstrapGrant != nil { effects.append(.log(.deviceToken(deviceId: device.deviceId, role: .node, action: .issued))) }
        return .admitted(deviceToken: token, bootstrap: bootstrapGrant, effects)
    }
}
