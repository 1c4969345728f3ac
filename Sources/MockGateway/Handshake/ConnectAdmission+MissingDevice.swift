import Foundation
import GatewayProtocol

extension ConnectAdmission {
    /// What the admission knows about the socket a connect came on.
    public struct ConnectionFacts: Sendable, Hashable {
        /// The peer address is a loopback address.
        public var isLoopback: Bool
        /// The `Host` header of the upgrade request.
        public var host: String?
        /// `X-Forwarded-For`, `X-Real-IP`, `X-Forwarded-Host` or `Forwarded` was present.
        public var hasProxyHeaders: Bool
        /// A non-empty `Origin` header was present (a browser).
        public var hasBrowserOrigin: Bool

        /// Creates facts; the default is a remote peer.
        public init(isLoopback: Bool = false, host: String? = nil, hasProxyHeaders: Bool = false, hasBrowserOrigin: Bool = false) {
            self.isLoopback = isLoopback
            self.host = host
            self.hasProxyHeaders = hasProxyHeaders
            self.hasBrowserOrigin = hasBrowserOrigin
        }

        /// The `Host` header without port and brackets, lower-cased.
        var hostName: String {
            let host = (self.host ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            if host.hasPrefix("["), let end = host.firstIndex(of: "]") {
                return String(host[host.index(after: host.startIndex)..<end])
            }
            return String(host.split(separator: ":", maxSplits: 1).first ?? "")
        }

        /// Upstream's `isLocalDirectRequest`: a loopback peer, a local `Host` (`localhost`,
        /// `127.0.0.1`, `::1`, or a Tailscale Serve `*.ts.net` name) and no proxy headers
        /// (src/gateway/auth.ts, `isLocalDirectRequest`).
        public var isLocalDirect: Bool {
            let name = hostName
            let hostIsLocal = name == "localhost" || name == "127.0.0.1" || name == "::1" || name.hasSuffix(".ts.net")
            return isLoopback && hostIsLocal && !hasProxyHeaders
        }

        /// A loopback peer without proxy headers or `Origin` whose `Host` is a loopback or
        /// private name: upstream's `shared_secret_loopback_local` locality, which a connect
        /// gets once its shared secret passed (a container reaching the host through its own
        /// address).
        var isLoopbackWithPrivateHost: Bool {
            guard isLoopback, !hasProxyHeaders, !hasBrowserOrigin else { return false }
            let name = hostName
            if name == "localhost" { return true }
            guard let address = try? IPAddress(parsing: name) else { return false }
            return address.isLoopback || Self.privateNetworks.contains { $0.contains(address) }
        }

        private static let privateNetworks: [IPNetwork] = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fe80::/10"]
            .compactMap { try? IPNetwork(parsing: $0) }
    }

    /// What to do with a connect that has no `device` block.
    enum MissingDeviceDecision: Sendable, Hashable {
        /// Admit it; `keepsScopes` false means the requested scopes are dropped (they are bound
        /// to no paired device or token).
        case allow(keepsScopes: Bool)
        /// The Control UI without a device identity.
        case rejectControlUI
        /// A failed shared secret: the auth failure is the answer.
        case rejectUnauthorized
        /// `NOT_PAIRED` "device identity required".
        case rejectDeviceRequired
    }

    /// Upstream's rules for a connect without a device identity (current Gateway:
    /// `evaluateMissingDeviceIdentity` and `shouldClearUnboundScopesForMissingDeviceIdentity`
    /// in src/gateway/server/ws-connection/connect-policy.ts@9b6c33a7, applied by
    /// `authenticateGatewayConnect` in connect-auth.ts@9b6c33a7; the locality helpers in
    /// src/gateway/server/ws-connection/handshake-auth-helpers.ts):
    ///
    /// 1. A local backend (`gateway-client` / `backend`, direct-local or shared-secret loopback,
    ///    no `Origin`) authenticated by mode `none` or a shared secret: allowed, scopes kept.
    /// 2. The Control UI: refused (`CONTROL_UI_DEVICE_IDENTITY_REQUIRED`). In this version the
    ///    `gateway.controlUi.allowInsecureAuth` and `dangerouslyDisableDeviceAuth` switches no
    ///    longer change anything (`void params.controlUiConfig`); older Gateways let a local
    ///    Control UI in with `allowInsecureAuth` and skipped the check with
    ///    `dangerouslyDisableDeviceAuth` (connect-policy.ts@0c5d67df). The fake has no Control UI
    ///    settings and follows the current rule on every profile.
    /// 3. An operator whose shared token or password passed (`roleCanSkipDeviceIdentity`,
    ///    src/gateway/role-policy.ts): allowed, scopes cleared, except for the local CLI
    ///    (`cli` / `cli`, direct-local, no `Origin`), which keeps them.
    /// 4. A shared secret that was sent and failed: the auth failure.
    /// 5. Everything else, nodes and operators on auth mode `none` included: `NOT_PAIRED`
    ///    "device identity required", close 1008.
    static func missingDevice(_ params: ConnectParams, role: GatewayRole, mode: GatewayAuthMode,
                              facts: ConnectionFacts) -> MissingDeviceDecision {
        let token = trimmedNonEmpty(params.auth?.token), password = trimmedNonEmpty(params.auth?.password)
        let hasSharedAuth = token != nil || password != nil
        // The comparison only: rate limits and failure counting belong to `sharedSecretCheck`.
        let shared = checkSharedSecret(token: token, password: password, mode: mode)
        let authOk: Bool
        let sharedAuthOk: Bool
        switch shared {
        case .passed(.sharedToken), .passed(.password):
            authOk = true
            sharedAuthOk = hasSharedAuth
        case .passed:
            authOk = true
            sharedAuthOk = false
        case .failed:
            authOk = false
            sharedAuthOk = false
        }
        let usesNoAuth = shared == .passed(.none)
        let client = params.client
        let sharedSecretLoopbackLocal = sharedAuthOk && facts.isLoopbackWithPrivateHost
        let isLocalBackend = client.id == .gatewayClient && client.mode == .backend && !facts.hasBrowserOrigin
            && (facts.isLocalDirect || sharedSecretLoopbackLocal) && (usesNoAuth || sharedAuthOk)
        if isLocalBackend && role == .operator { return .allow(keepsScopes: true) }
        if client.id == .controlUI { return .rejectControlUI }
        if role == .operator && sharedAuthOk {
            let isLocalCLI = client.id == .cli && client.mode == .cli && !facts.hasBrowserOrigin
                && (facts.isLocalDirect || sharedSecretLoopbackLocal)
            return .allow(keepsScopes: isLocalCLI)
        }
        if !authOk && hasSharedAuth { return .rejectUnauthorized }
        return .rejectDeviceRequired
    }

    /// The refusal of the Control UI without a device identity (connect-auth.ts@9b6c33a7).
    static let controlUIDeviceRequired = Rejection(
        stage: .deviceIdentity, requestID: nil,
        error: ErrorShape(
            code: ErrorCode.invalidRequest.rawValue,
            message: "control ui requires device identity (use HTTPS or localhost secure context)",
            details: ["code": .string(ConnectErrorDetailCode.controlUIDeviceIdentityRequired.rawValue)]),
        closeCode: .policyViolation, closeReason: "control ui requires device identity (use HTTPS or localhost secure context)")

    /// `NOT_PAIRED` "device identity required", close 1008.
    static let deviceRequired = Rejection(
        stage: .deviceIdentity, requestID: nil, error: DeviceProofFailure.identityRequired.errorShape,
        closeCode: .policyViolation, closeReason: DeviceProofFailure.identityRequired.message)
}
