/// A top-level `error.code` of a failed response (docs/protocol.md §10.2).
///
/// Like every string-constant type of this module, it encodes as its bare wire string (the
/// standard library's `Codable` support for `RawRepresentable`).
///
/// A string wrapper rather than a closed enum: clients must survive codes they do not know, and
/// node error codes are free-form.
public struct ErrorCode: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `NOT_LINKED`.
    public static let notLinked: ErrorCode = "NOT_LINKED"
    /// `NOT_PAIRED`: the device must be (re-)approved, or has no identity.
    public static let notPaired: ErrorCode = "NOT_PAIRED"
    /// `AGENT_TIMEOUT`.
    public static let agentTimeout: ErrorCode = "AGENT_TIMEOUT"
    /// `AGENT_RESULT_NOT_FOUND`.
    public static let agentResultNotFound: ErrorCode = "AGENT_RESULT_NOT_FOUND"
    /// `INVALID_REQUEST`: malformed frames and params, auth and device-proof failures.
    public static let invalidRequest: ErrorCode = "INVALID_REQUEST"
    /// `FORBIDDEN`: a method scope is missing (newest servers; older ones used `INVALID_REQUEST`).
    public static let forbidden: ErrorCode = "FORBIDDEN"
    /// `APPROVAL_NOT_FOUND`.
    public static let approvalNotFound: ErrorCode = "APPROVAL_NOT_FOUND"
    /// `UNAVAILABLE`: for example the Gateway is still starting (close 1013).
    public static let unavailable: ErrorCode = "UNAVAILABLE"

    /// The complete catalogue of docs/protocol.md §10.3.
    public static let allKnown: [ErrorCode] = [
        .notLinked, .notPaired, .agentTimeout, .agentResultNotFound, .invalidRequest, .forbidden,
        .approvalNotFound, .unavailable,
    ]
}

/// A connect-time `error.details.code` (docs/protocol.md §10.2-10.3); clients drive their
/// reconnect policy from it.
public struct ConnectErrorDetailCode: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `AUTH_REQUIRED`: authentication failed without a specific reason.
    public static let authRequired: ConnectErrorDetailCode = "AUTH_REQUIRED"
    /// `AUTH_UNAUTHORIZED`: authentication failed for a reason without its own code.
    public static let authUnauthorized: ConnectErrorDetailCode = "AUTH_UNAUTHORIZED"
    /// `AUTH_TOKEN_MISSING`: the Gateway uses a shared token and none was sent.
    public static let authTokenMissing: ConnectErrorDetailCode = "AUTH_TOKEN_MISSING"
    /// `AUTH_TOKEN_MISMATCH`: the shared token (or a device token sent as `auth.token`) is wrong.
    public static let authTokenMismatch: ConnectErrorDetailCode = "AUTH_TOKEN_MISMATCH"
    /// `AUTH_TOKEN_NOT_CONFIGURED`: token mode without a configured token.
    public static let authTokenNotConfigured: ConnectErrorDetailCode = "AUTH_TOKEN_NOT_CONFIGURED"
    /// `AUTH_PASSWORD_MISSING`: the Gateway uses a password and none was sent.
    public static let authPasswordMissing: ConnectErrorDetailCode = "AUTH_PASSWORD_MISSING"
    /// `AUTH_PASSWORD_MISMATCH`: the password is wrong.
    public static let authPasswordMismatch: ConnectErrorDetailCode = "AUTH_PASSWORD_MISMATCH"
    /// `AUTH_PASSWORD_NOT_CONFIGURED`: password mode without a configured password.
    public static let authPasswordNotConfigured: ConnectErrorDetailCode = "AUTH_PASSWORD_NOT_CONFIGURED"
    /// `AUTH_BOOTSTRAP_TOKEN_INVALID`: the setup-code token is unknown, expired or bound elsewhere.
    public static let authBootstrapTokenInvalid: ConnectErrorDetailCode = "AUTH_BOOTSTRAP_TOKEN_INVALID"
    /// `AUTH_DEVICE_TOKEN_MISMATCH`: an explicit `auth.deviceToken` is wrong or revoked.
    public static let authDeviceTokenMismatch: ConnectErrorDetailCode = "AUTH_DEVICE_TOKEN_MISMATCH"
    /// `AUTH_SCOPE_MISMATCH`: the token does not cover the requested scopes.
    public static let authScopeMismatch: ConnectErrorDetailCode = "AUTH_SCOPE_MISMATCH"
    /// `AUTH_RATE_LIMITED`: too many failed attempts; see `retryAfterMs`.
    public static let authRateLimited: ConnectErrorDetailCode = "AUTH_RATE_LIMITED"
    /// `AUTH_TAILSCALE_IDENTITY_MISSING`.
    public static let authTailscaleIdentityMissing: ConnectErrorDetailCode = "AUTH_TAILSCALE_IDENTITY_MISSING"
    /// `AUTH_TAILSCALE_PROXY_MISSING`.
    public static let authTailscaleProxyMissing: ConnectErrorDetailCode = "AUTH_TAILSCALE_PROXY_MISSING"
    /// `AUTH_TAILSCALE_WHOIS_FAILED`.
    public static let authTailscaleWhoisFailed: ConnectErrorDetailCode = "AUTH_TAILSCALE_WHOIS_FAILED"
    /// `AUTH_TAILSCALE_IDENTITY_MISMATCH`.
    public static let authTailscaleIdentityMismatch: ConnectErrorDetailCode = "AUTH_TAILSCALE_IDENTITY_MISMATCH"
    /// `AUTH_IDENTITY_HEADER_REQUIRED`.
    public static let authIdentityHeaderRequired: ConnectErrorDetailCode = "AUTH_IDENTITY_HEADER_REQUIRED"
    /// `AUTH_VERIFIED_USER_REQUIRED`.
    public static let authVerifiedUserRequired: ConnectErrorDetailCode = "AUTH_VERIFIED_USER_REQUIRED"
    /// `AUTHENTICATED_PROFILE_UNAVAILABLE`.
    public static let authenticatedProfileUnavailable: ConnectErrorDetailCode = "AUTHENTICATED_PROFILE_UNAVAILABLE"
    /// `OPERATOR_ACCESS_DENIED`.
    public static let operatorAccessDenied: ConnectErrorDetailCode = "OPERATOR_ACCESS_DENIED"
    /// `CONTROL_UI_BUILD_MISMATCH`.
    public static let controlUIBuildMismatch: ConnectErrorDetailCode = "CONTROL_UI_BUILD_MISMATCH"
    /// `CONTROL_UI_ORIGIN_NOT_ALLOWED`.
    public static let controlUIOriginNotAllowed: ConnectErrorDetailCode = "CONTROL_UI_ORIGIN_NOT_ALLOWED"
    /// `PROTOCOL_MISMATCH`: no common protocol version (close 1002).
    public static let protocolMismatch: ConnectErrorDetailCode = "PROTOCOL_MISMATCH"
    /// `CONTROL_UI_DEVICE_IDENTITY_REQUIRED`.
    public static let controlUIDeviceIdentityRequired: ConnectErrorDetailCode = "CONTROL_UI_DEVICE_IDENTITY_REQUIRED"
    /// `DEVICE_IDENTITY_REQUIRED`: a node connected without a `device` block.
    public static let deviceIdentityRequired: ConnectErrorDetailCode = "DEVICE_IDENTITY_REQUIRED"
    /// `DEVICE_AUTH_INVALID`: the device block is unusable.
    public static let deviceAuthInvalid: ConnectErrorDetailCode = "DEVICE_AUTH_INVALID"
    /// `DEVICE_AUTH_DEVICE_ID_MISMATCH`: `device.id` is not the SHA-256 of the public key.
    public static let deviceAuthDeviceIdMismatch: ConnectErrorDetailCode = "DEVICE_AUTH_DEVICE_ID_MISMATCH"
    /// `DEVICE_AUTH_SIGNATURE_EXPIRED`: `signedAt` is more than two minutes off.
    public static let deviceAuthSignatureExpired: ConnectErrorDetailCode = "DEVICE_AUTH_SIGNATURE_EXPIRED"
    /// `DEVICE_AUTH_NONCE_REQUIRED`: `device.nonce` is missing or blank.
    public static let deviceAuthNonceRequired: ConnectErrorDetailCode = "DEVICE_AUTH_NONCE_REQUIRED"
    /// `DEVICE_AUTH_NONCE_MISMATCH`: `device.nonce` is not this connection's challenge nonce.
    public static let deviceAuthNonceMismatch: ConnectErrorDetailCode = "DEVICE_AUTH_NONCE_MISMATCH"
    /// `DEVICE_AUTH_SIGNATURE_INVALID`: neither the v3 nor the v2 payload verifies.
    public static let deviceAuthSignatureInvalid: ConnectErrorDetailCode = "DEVICE_AUTH_SIGNATURE_INVALID"
    /// `DEVICE_AUTH_PUBLIC_KEY_INVALID`: the public key cannot be decoded.
    public static let deviceAuthPublicKeyInvalid: ConnectErrorDetailCode = "DEVICE_AUTH_PUBLIC_KEY_INVALID"
    /// `PAIRING_REQUIRED`: the device (or its new role, scopes or metadata) awaits approval.
    public static let pairingRequired: ConnectErrorDetailCode = "PAIRING_REQUIRED"
    /// `PAIRING_REJECTED`.
    public static let pairingRejected: ConnectErrorDetailCode = "PAIRING_REJECTED"
    /// `PAIRING_EXPIRED`.
    public static let pairingExpired: ConnectErrorDetailCode = "PAIRING_EXPIRED"
    /// `CLIENT_VERSION_MISMATCH`.
    public static let clientVersionMismatch: ConnectErrorDetailCode = "CLIENT_VERSION_MISMATCH"

    /// The complete list of docs/protocol.md §10.3, in the order of the upstream source.
    public static let allKnown: [ConnectErrorDetailCode] = [
        .authRequired, .authUnauthorized, .authTokenMissing, .authTokenMismatch, .authTokenNotConfigured,
        .authPasswordMissing, .authPasswordMismatch, .authPasswordNotConfigured, .authBootstrapTokenInvalid,
        .authDeviceTokenMismatch, .authScopeMismatch, .authRateLimited, .authTailscaleIdentityMissing,
        .authTailscaleProxyMissing, .authTailscaleWhoisFailed, .authTailscaleIdentityMismatch,
        .authIdentityHeaderRequired, .authVerifiedUserRequired, .authenticatedProfileUnavailable,
        .operatorAccessDenied, .controlUIBuildMismatch, .controlUIOriginNotAllowed, .protocolMismatch,
        .controlUIDeviceIdentityRequired, .deviceIdentityRequired, .deviceAuthInvalid,
        .deviceAuthDeviceIdMismatch, .deviceAuthSignatureExpired, .deviceAuthNonceRequired,
        .deviceAuthNonceMismatch, .deviceAuthSignatureInvalid, .deviceAuthPublicKeyInvalid, .pairingRequired,
        .pairingRejected, .pairingExpired, .clientVersionMismatch,
    ]
}

/// `error.details.recommendedNextStep` of a connect failure (docs/protocol.md §10.2).
public struct RecommendedNextStep: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `retry_with_device_token`: retry once with the stored device token.
    public static let retryWithDeviceToken: RecommendedNextStep = "retry_with_device_token"
    /// `update_auth_configuration`: the Gateway's auth configuration must change.
    public static let updateAuthConfiguration: RecommendedNextStep = "update_auth_configuration"
    /// `update_auth_credentials`: the client must be given other credentials.
    public static let updateAuthCredentials: RecommendedNextStep = "update_auth_credentials"
    /// `wait_then_retry`: retry later (for example while an approval may still land).
    public static let waitThenRetry: RecommendedNextStep = "wait_then_retry"
    /// `review_auth_configuration`: a human should review the setup.
    public static let reviewAuthConfiguration: RecommendedNextStep = "review_auth_configuration"

    /// Every known value.
    public static let allKnown: [RecommendedNextStep] = [
        .retryWithDeviceToken, .updateAuthConfiguration, .updateAuthCredentials, .waitThenRetry,
        .reviewAuthConfiguration,
    ]
}

/// The internal reason an authentication attempt failed, sent as `details.authReason`; maps to
/// a `details.code` (docs/protocol.md §10.3).
public struct AuthFailureReason: WireName {
    /// The wire value.
    public var rawValue: String
    /// Wraps a wire value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `token_missing` → `AUTH_TOKEN_MISSING`.
    public static let tokenMissing: AuthFailureReason = "token_missing"
    /// `token_mismatch` → `AUTH_TOKEN_MISMATCH`.
    public static let tokenMismatch: AuthFailureReason = "token_mismatch"
    /// `token_missing_config` → `AUTH_TOKEN_NOT_CONFIGURED`.
    public static let tokenMissingConfig: AuthFailureReason = "token_missing_config"
    /// `password_missing` → `AUTH_PASSWORD_MISSING`.
    public static let passwordMissing: AuthFailureReason = "password_missing"
    /// `password_mismatch` → `AUTH_PASSWORD_MISMATCH`.
    public static let passwordMismatch: AuthFailureReason = "password_mismatch"
    /// `password_missing_config` → `AUTH_PASSWORD_NOT_CONFIGURED`.
    public static let passwordMissingConfig: AuthFailureReason = "password_missing_config"
    /// `bootstrap_token_invalid` → `AUTH_BOOTSTRAP_TOKEN_INVALID`.
    public static let bootstrapTokenInvalid: AuthFailureReason = "bootstrap_token_invalid"
    /// `rate_limited` → `AUTH_RATE_LIMITED`.
    public static let rateLimited: AuthFailureReason = "rate_limited"
    /// `device_token_mismatch` → `AUTH_DEVICE_TOKEN_MISMATCH`.
    public static let deviceTokenMismatch: AuthFailureReason = "device_token_mismatch"
    /// `scope_mismatch` → `AUTH_SCOPE_MISMATCH`.
    public static let scopeMismatch: AuthFailureReason = "scope_mismatch"
    /// `tailscale_identity_missing` → `AUTH_TAILSCALE_IDENTITY_MISSING`.
    public static let tailscaleIdentityMissing: AuthFailureReason = "tailscale_identity_missing"
    /// `tailscale_proxy_missing` → `AUTH_TAILSCALE_PROXY_MISSING`.
    public static let tailscaleProxyMissing: AuthFailureReason = "tailscale_proxy_missing"
    /// `tailscale_whois_failed` → `AUTH_TAILSCALE_WHOIS_FAILED`.
    public static let tailscaleWhoisFailed: AuthFailureReason = "tailscale_whois_failed"
    /// `tailscale_identity_mismatch` → `AUTH_TAILSCALE_IDENTITY_MISMATCH`.
    public static let tailscaleIdentityMismatch: AuthFailureReason = "tailscale_identity_mismatch"

    /// The `details.code` for a failure reason: the upstream reason→code map, where `nil` (no
    /// reason) gives `AUTH_REQUIRED` and an unknown reason gives `AUTH_UNAUTHORIZED`.
    public static func detailCode(for reason: AuthFailureReason?) -> ConnectErrorDetailCode {
        guard let reason else { return .authRequired }
        switch reason {
        case .tokenMissing: return .authTokenMissing
        case .tokenMismatch: return .authTokenMismatch
        case .tokenMissingConfig: return .authTokenNotConfigured
        case .passwordMissing: return .authPasswordMissing
        case .passwordMismatch: return .authPasswordMismatch
        case .passwordMissingConfig: return .authPasswordNotConfigured
        case .bootstrapTokenInvalid: return .authBootstrapTokenInvalid
        case .rateLimited: return .authRateLimited
        case .deviceTokenMismatch: return .authDeviceTokenMismatch
        case .scopeMismatch: return .authScopeMismatch
        case .tailscaleIdentityMissing: return .authTailscaleIdentityMissing
        case .tailscaleProxyMissing: return .authTailscaleProxyMissing
        case .tailscaleWhoisFailed: return .authTailscaleWhoisFailed
        case .tailscaleIdentityMismatch: return .authTailscaleIdentityMismatch
        default: return .authUnauthorized
        }
    }

    /// This reason's `details.code`.
    public var detailCode: ConnectErrorDetailCode { Self.detailCode(for: self) }
}

/// A WebSocket close code the Gateway (or a client) uses (docs/protocol.md §10.5).
public struct GatewayCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric close code.
    public var rawValue: UInt16

    /// Wraps a numeric close code.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// The number.
    public var description: String { String(rawValue) }

    /// 1000: normal closure (also the protocol-3-era handshake-timeout close).
    public static let normal = GatewayCloseCode(rawValue: 1000)
    /// 1001: going away (sent by Swift clients on shutdown or socket replacement).
    public static let goingAway = GatewayCloseCode(rawValue: 1001)
    /// 1002: `protocol mismatch`.
    public static let protocolError = GatewayCloseCode(rawValue: 1002)
    /// 1008: policy violation: invalid handshake, role, auth, device auth, pairing required, abuse.
    public static let policyViolation = GatewayCloseCode(rawValue: 1008)
    /// 1009: `preauth payload too large`.
    public static let messageTooBig = GatewayCloseCode(rawValue: 1009)
    /// 1012: `service restart`, after a `shutdown` event.
    public static let serviceRestart = GatewayCloseCode(rawValue: 1012)
    /// 1013: `gateway starting`; retry later.
    public static let tryAgainLater = GatewayCloseCode(rawValue: 1013)
    /// 4000: `tick timeout`, sent by the TypeScript client.
    public static let tickTimeout = GatewayCloseCode(rawValue: 4000)
    /// 4001: `gateway auth changed`: the shared secret changed.
    public static let gatewayAuthChanged = GatewayCloseCode(rawValue: 4001)
}

/// Close-reason rules shared by every close the Gateway sends.
public enum CloseReason {
    /// The longest close reason the Gateway sends, in UTF-8 bytes (docs/protocol.md §10.5;
    /// `CLOSE_REASON_MAX_BYTES` in upstream `src/gateway/server/close-reason.ts`); the WebSocket
    /// layer's own limit is 123.
    public static let maxBytes = 120

    /// `reason` cut to at most `maxBytes` UTF-8 bytes without splitting a character.
    /// - Parameters:
    ///   - reason: the full reason text.
    ///   - maxBytes: the byte budget; 120 by default, as the real Gateway's `truncateCloseReason`.
    /// - Returns: the reason itself when it fits, otherwise its longest prefix that fits.
    public static func truncate(_ reason: String, maxBytes: Int = CloseReason.maxBytes) -> String {
        guard reason.utf8.count > maxBytes else { return reason }
        var result = ""
        var used = 0
        // Whole characters only, so that a multi-byte scalar or a grapheme cluster never ends up
        // half-sent (the WebSocket layer requires valid UTF-8 in close reasons).
        for character in reason {
            let size = character.utf8.count
            if used + size > maxBytes { break }
            result.append(character)
            used += size
        }
        return result
    }
}
