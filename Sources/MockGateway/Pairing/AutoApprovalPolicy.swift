import GatewayProtocol

/// Which connects the fake Gateway approves without an operator (docs/protocol.md §5.10).
///
/// The default is `.manual`: unlike the real Gateway, whose `autoApproveLocal` defaults to
/// `true`, the fake listens on loopback by default and would otherwise admit every client under
/// test without a pairing step. Setup-code (bootstrap) connects of an official mobile app are
/// approved under every policy, since presenting a valid bootstrap token is itself the approval.
public struct AutoApprovalPolicy: Sendable, Hashable {
    /// Approve every request at once (`approvedVia:"auto"`), upgrades included: a convenience mode.
    public var approveEverything: Bool
    /// Silent local approval of loopback clients (`gateway.nodes.pairing.autoApproveLocal`).
    public var approveLoopback: Bool
    /// Trusted networks (`gateway.nodes.pairing.autoApproveCidrs`); empty means off.
    public var trustedNetworks: [IPNetwork]

    /// Creates a policy.
    public init(approveEverything: Bool = false, approveLoopback: Bool = false, trustedNetworks: [IPNetwork] = []) {
        self.approveEverything = approveEverything
        self.approveLoopback = approveLoopback
        self.trustedNetworks = trustedNetworks
    }

    /// Every request waits for an operator (the default).
    public static let manual = AutoApprovalPolicy()
    /// Every request is approved at once.
    public static let auto = AutoApprovalPolicy(approveEverything: true)
    /// Loopback clients are approved silently, like a real Gateway with its defaults.
    public static let loopbackLocal = AutoApprovalPolicy(approveLoopback: true)

    /// Fresh scopeless nodes from `networks` are approved (`approvedVia:"trusted-cidr"`).
    public static func trustedCIDRs(_ networks: [IPNetwork]) -> AutoApprovalPolicy {
        AutoApprovalPolicy(trustedNetworks: networks)
    }

    /// Parses CIDRs and exact IPs (`["10.0.0.0/8", "fd00::/8", "192.168.1.5"]`).
    /// - Throws: `IPNetworkError` for the first entry that does not parse.
    public static func trustedCIDRs(parsing entries: [String]) throws(IPNetworkError) -> AutoApprovalPolicy {
        var networks: [IPNetwork] = []
        for entry in entries { networks.append(try IPNetwork(parsing: entry)) }
        return trustedCIDRs(networks)
    }

    /// The silent path that applies to a connect needing `requirement`, or `nil` for manual approval.
    /// - Parameters:
    ///   - existing: the device's paired record, if any (any public key).
    ///   - bootstrap: the verified bootstrap token of the connect, if it authenticated with one.
    ///   - setupCodeRequiresMobileClient: the current Gateway's narrow setup-code rule (see
    ///     ``isBootstrapPairing(_:_:_:bootstrap:requiresMobileClient:)``).
    public func silentApproval(
        for requirement: PairingRequirement, attempt: PairingAttempt, existing: PairedDevice?, bootstrap: BootstrapGrant?,
        setupCodeRequiresMobileClient: Bool = true
    ) -> ApprovalMethod? {
        if let bootstrap, Self.isBootstrapPairing(requirement, attempt, existing, bootstrap: bootstrap,
                                                  requiresMobileClient: setupCodeRequiresMobileClient) { return .bootstrap }
        if approveEverything { return .auto }
        if approveLoopback, Self.isSilentLocal(requirement, attempt, existing) { return .silent }
        if isTrustedNetworkNode(requirement, attempt, existing) { return .trustedCIDR }
        return nil
    }

    /// Setup-code onboarding: a fresh device's node connect (`role:"node"`, `scopes:[]`,
    /// `client.mode:"node"`, not a browser).
    ///
    /// With `requiresMobileClient` (the current Gateway: `allowSetupCodeMobileBootstrapPairing`
    /// in connect-device-pairing.ts @e7f3d12cc617ea17ea22fd3bf91166cbbe3ff8e5) the code must also
    /// carry a native-mobile setup profile (`full` or `limited`) and the client must be an official
    /// mobile app whose platform and device family match its client id
    /// (`PairingClientInfo.isSetupCodeMobileClient`); any other client presenting a valid code stays
    /// pending (and is told to keep retrying, see ``isWaitingForBootstrapApproval(_:_:_:)``).
    /// Without it (protocol-3-era reading), any fresh scopeless node client is approved.
    static func isBootstrapPairing(_ requirement: PairingRequirement, _ attempt: PairingAttempt, _ existing: PairedDevice?,
                                   bootstrap: BootstrapGrant, requiresMobileClient: Bool) -> Bool {
        guard requirement == .notPaired, existing == nil, attempt.role == GatewayRole.node, attempt.reportedScopes.isEmpty,
              attempt.client.clientMode == .node, !attempt.client.isBrowserClient else { return false }
        guard requiresMobileClient else { return true }
        return bootstrap.profile.isMobileSetupProfile && attempt.client.isSetupCodeMobileClient
    }

    /// Whether a refused bootstrap connect is told to keep retrying (`wait_then_retry`,
    /// `retryable:true`, `pauseReconnect:false`): a fresh device's scopeless node connect that
    /// authenticated with a bootstrap token but was not approved (upstream
    /// `retryAfterBootstrapPairingApproval`, connect-device-pairing.ts @e7f3d12c).
    static func isWaitingForBootstrapApproval(_ requirement: PairingRequirement, _ attempt: PairingAttempt,
                                              _ existing: PairedDevice?) -> Bool {
        requirement == .notPaired && existing == nil && attempt.role == GatewayRole.node && attempt.reportedScopes.isEmpty
    }

    /// Silent local pairing: a loopback client without a browser `Origin` that is not Control UI
    /// or WebChat (the spec's reading; some real builds let Control UI through), for not-paired,
    /// role-upgrade and scope-upgrade; a metadata upgrade only for a first-party native app. Never
    /// for a device that is already paired and connects with a non-operator role.
    static func isSilentLocal(_ requirement: PairingRequirement, _ attempt: PairingAttempt, _ existing: PairedDevice?) -> Bool {
        guard attempt.isLoopback, !attempt.hasBrowserOrigin, !attempt.client.isBrowserClient else { return false }
        if existing != nil, attempt.role != GatewayRole.operator { return false }
        switch requirement {
        case .notPaired, .roleUpgrade, .scopeUpgrade: return true
        case .metadataUpgrade: return attempt.client.isNativeApp
        }
    }

    /// Trusted-CIDR approval: only a fresh request (no record at all) with `role:"node"`, no
    /// scopes as sent (a node that sends operator scopes is not scopeless), not a browser, from
    /// an IP inside one of the networks. Upgrades of any kind stay manual.
    func isTrustedNetworkNode(_ requirement: PairingRequirement, _ attempt: PairingAttempt, _ existing: PairedDevice?) -> Bool {
        guard !trustedNetworks.isEmpty, requirement == .notPaired, existing == nil, attempt.role == GatewayRole.node,
              attempt.reportedScopes.isEmpty, !attempt.hasBrowserOrigin, !attempt.client.isBrowserClient,
              let ip = attempt.remoteIp, let address = try? IPAddress(parsing: ip) else { return false }
        return trustedNetworks.contains { $0.contains(address) }
    }
}
