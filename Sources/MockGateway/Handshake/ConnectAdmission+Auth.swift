import Foundation
import GatewayProtocol

extension ConnectAdmission {
    /// Where authentication stands while a connect is admitted (upstream `ConnectAuthState` and
    /// `ConnectAuthDecision`, `src/gateway/server/ws-connection/auth-context.ts`).
    struct AuthState {
        /// How the connect authenticated so far; `nil` while it has not.
        var method: AuthMethod?
        /// The failure reported if nothing authenticates it.
        var failure: AuthFailureReason
        /// The lockout left, when the failure is `rate_limited`.
        var retryAfterMs: Int?
        /// Whether the shared token or password itself verified (upstream `sharedAuthOk`).
        var sharedSecretVerified: Bool

        init(_ check: SharedSecretCheck) {
            switch check {
            case .passed(let method):
                self.method = method
                failure = .tokenMismatch
                sharedSecretVerified = method == .sharedToken || method == .password
            case .failed(let reason, let retryAfterMs):
                method = nil
                failure = reason
                self.retryAfterMs = retryAfterMs
                sharedSecretVerified = false
            }
        }
    }

    /// The outcome of the shared-secret step.
    enum SharedSecretCheck: Equatable {
        case passed(AuthMethod)
        case failed(AuthFailureReason, retryAfterMs: Int? = nil)
    }

    /// docs/protocol.md §5.3 step 1, as upstream `authorizeGatewayConnectCore` (`src/gateway/auth.ts`
    /// @00893f8670e00923e40fbeb524227d1307e56dd7): mode `none` passes at once; otherwise, when
    /// the connect offers a token or password (after trimming, `resolveSharedConnectAuth` in
    /// auth-context.ts), a locked-out address is refused before any comparison; a missing
    /// credential is not counted as a failure, a wrong one is, a right one resets the counter.
    static func sharedSecretCheck<Credentials: ConnectCredentialVerifier>(
        _ params: ConnectParams, mode: GatewayAuthMode, credentials: inout Credentials
    ) -> SharedSecretCheck {
        if case .none = mode { return .passed(.none) }
        let token = trimmedNonEmpty(params.auth?.token)
        let password = trimmedNonEmpty(params.auth?.password)
        let provided = token != nil || password != nil
        if provided, let retryAfter = credentials.rateLimitRetryAfterMs(.sharedSecret) {
            return .failed(.rateLimited, retryAfterMs: retryAfter)
        }
        let check = checkSharedSecret(token: token, password: password, mode: mode)
        guard provided else { return check }
        switch check {
        case .passed: credentials.resetAuthFailures(.sharedSecret)
        case .failed(let reason, _):
            if reason == .tokenMismatch || reason == .passwordMismatch { credentials.recordAuthFailure(.sharedSecret) }
        }
        return check
    }

    /// The comparison itself. An empty configured secret is "not configured".
    static func checkSharedSecret(token: String?, password: String?, mode: GatewayAuthMode) -> SharedSecretCheck {
        switch mode {
        case .none:
            return .passed(.none)
        case .token(let secret):
            guard !secret.isEmpty else { return .failed(.tokenMissingConfig) }
            guard let token else { return .failed(.tokenMissing) }
            return ConstantTime.equals(token, secret) ? .passed(.sharedToken) : .failed(.tokenMismatch)
        case .password(let secret):
            guard !secret.isEmpty else { return .failed(.passwordMissingConfig) }
            guard let password else { return .failed(.passwordMissing) }
            return ConstantTime.equals(password, secret) ? .passed(.password) : .failed(.passwordMismatch)
        }
    }

    /// docs/protocol.md §5.3 steps 3-4 for a verified device, as upstream `resolveConnectAuthDecision`
    /// (auth-context.ts): a bootstrap token wins even over a passing shared secret; a device
    /// token is tried only while nothing authenticated. Each is refused while its scope is
    /// locked out; a failed bootstrap token is counted only if the connect fails overall.
    static func decideCredentials<Credentials: ConnectCredentialVerifier>(
        _ auth: inout AuthState, params: ConnectParams, role: GatewayRole, device: VerifiedDevice,
        credentials: inout Credentials
    ) {
        let request = ConnectCredentialRequest(
            deviceId: device.deviceId, publicKey: device.publicKey, role: role, scopes: params.scopes ?? [], params: params)
        var pendingBootstrapFailure = false
        if let bootstrapToken = trimmedNonEmpty(params.auth?.bootstrapToken) {
            if let retryAfter = credentials.rateLimitRetryAfterMs(.bootstrapToken) {
                if auth.method == nil {
                    auth.failure = .rateLimited
                    auth.retryAfterMs = retryAfter
                }
            } else {
                switch credentials.verifyBootstrapToken(bootstrapToken, for: request) {
                case .valid:
                    auth.method = .bootstrapToken(bootstrapToken)
                    credentials.resetAuthFailures(.bootstrapToken)
                case .invalid(let reason):
                    if auth.method == nil {
                        auth.failure = reason ?? .bootstrapTokenInvalid
                        auth.retryAfterMs = nil
                        pendingBootstrapFailure = true
                    }
                }
            }
        }

        guard auth.method == nil,
              let candidate = DeviceTokenCandidate.select(deviceToken: trimmedNonEmpty(params.auth?.deviceToken),
                                                          token: trimmedNonEmpty(params.auth?.token))
        else {
            if pendingBootstrapFailure { credentials.recordAuthFailure(.bootstrapToken) }
            return
        }
        if let retryAfter = credentials.rateLimitRetryAfterMs(.deviceToken) {
            auth.failure = .rateLimited
            auth.retryAfterMs = retryAfter
            return
        }
        switch credentials.verifyDeviceToken(candidate, for: request) {
        case .valid:
            auth.method = .deviceToken(candidate)
            credentials.resetAuthFailures(.deviceToken)
            if hasSharedAuth(params.auth) { credentials.resetAuthFailures(.sharedSecret) }
        case .invalid(let reason):
            // `mapDeviceTokenAuthFailureReason`: a scope mismatch is reported as such whatever
            // field the token came in; an explicit `auth.deviceToken` is a device-token mismatch;
            // a token from `auth.token` leaves the earlier failure standing.
            // (Upstream rebuilds the failure object here, which drops `retryAfterMs` of a
            // rate-limited shared secret that stands; the fake keeps the hint, so that every
            // `AUTH_RATE_LIMITED` carries it.)
            if reason == .scopeMismatch {
                auth.failure = .scopeMismatch
                auth.retryAfterMs = nil
            } else if candidate.source == .deviceTokenField {
                auth.failure = .deviceTokenMismatch
                auth.retryAfterMs = nil
            }
            credentials.recordAuthFailure(.deviceToken)
            if pendingBootstrapFailure { credentials.recordAuthFailure(.bootstrapToken) }
        }
    }

    /// Whether the connect offers a shared token or password (upstream `hasSharedAuth`:
    /// `Boolean(auth.token) || Boolean(auth.password)`, untrimmed).
    static func hasSharedAuth(_ auth: ConnectAuth?) -> Bool {
        !(auth?.token ?? "").isEmpty || !(auth?.password ?? "").isEmpty
    }

    /// The `INVALID_REQUEST` answer to a failed authentication (docs/protocol.md §10.3, upstream `rejectUnauthorized`
    /// in connect-auth.ts @9b6c33a767926c508097bbd5a34b09a3be3465c0): `details` carry the code,
    /// the raw reason as `authReason`, and the recovery hints; a rate-limited failure also carries
    /// top-level `retryable:true` and `retryAfterMs`; the close reason is the message.
    static func authRejection(reason: AuthFailureReason, params: ConnectParams, mode: GatewayAuthMode, retryAfterMs: Int?,
                              hasDevice: Bool) -> Rejection {
        let canRetry = canRetryWithDeviceToken(reason: reason, params: params, hasDevice: hasDevice)
        let message = authFailureMessage(reason: reason, client: params.client)
        let details: JSONValue = [
            "code": .string(reason.detailCode.rawValue),
            "authReason": .string(reason.rawValue),
            "canRetryWithDeviceToken": .bool(canRetry),
            "recommendedNextStep": .string(recommendedNextStep(reason: reason, canRetryWithDeviceToken: canRetry).rawValue),
        ]
        let rateLimited = reason == .rateLimited
        return Rejection(
            stage: .authentication, requestID: nil,
            error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message, details: details,
                              retryable: rateLimited ? true : nil, retryAfterMs: rateLimited ? retryAfterMs : nil),
            closeCode: .policyViolation, closeReason: message)
    }

    /// Whether a one-shot retry with the stored device token may help (upstream
    /// `resolveUnauthorizedHandshakeContext`, handshake-auth-helpers.ts
    /// @66072549fda8e4fc85bb954ff4880471fe9657ee): only after a shared-token mismatch, for a
    /// client with a device identity that offered a token (and no password) but no explicit
    /// `auth.deviceToken` (that retry would be the one that just failed).
    static func canRetryWithDeviceToken(reason: AuthFailureReason, params: ConnectParams, hasDevice: Bool) -> Bool {
        let tokenProvided = (params.auth?.password ?? "").isEmpty && !(params.auth?.token ?? "").isEmpty
        return reason == .tokenMismatch && hasDevice && tokenProvided && (params.auth?.deviceToken ?? "").isEmpty
    }

    /// `details.recommendedNextStep` for a failure reason (handshake-auth-helpers.ts @66072549).
    static func recommendedNextStep(reason: AuthFailureReason, canRetryWithDeviceToken: Bool) -> RecommendedNextStep {
        if canRetryWithDeviceToken { return .retryWithDeviceToken }
        switch reason {
        case .tokenMissing, .tokenMissingConfig, .passwordMissing, .passwordMissingConfig:
            return .updateAuthConfiguration
        case .tokenMismatch, .passwordMismatch, .deviceTokenMismatch:
            return .updateAuthCredentials
        case .rateLimited:
            return .waitThenRetry
        default:
            return .reviewAuthConfiguration
        }
    }

    /// The `error.message` of an auth failure. The token-mismatch text is confirmed
    /// (`unauthorized: gateway token mismatch (provide gateway auth token)`); ⚠️ the other texts
    /// follow the same upstream pattern but are unconfirmed (docs/protocol.md §10.5).
    /// Clients key on `details.code`, never on the text.
    static func authFailureMessage(reason: AuthFailureReason, client: ClientInfo) -> String {
        let isCLI = client.id == .cli || client.mode == .cli
        let isControlUI = client.id == .controlUI || client.id == .webchatUI
        let tokenHint =
            isCLI ? "set gateway.remote.token to match gateway.auth.token"
            : isControlUI ? "open the dashboard URL and paste the token in Control UI settings" : "provide gateway auth token"
        let passwordHint =
            isCLI ? "set gateway.remote.password to match gateway.auth.password"
            : isControlUI ? "enter the password in Control UI settings" : "provide gateway auth password"
        switch reason {
        case .tokenMissing: return "unauthorized: gateway token missing (\(tokenHint))"
        case .tokenMismatch: return "unauthorized: gateway token mismatch (\(tokenHint))"
        case .tokenMissingConfig: return "unauthorized: gateway token not configured on gateway (set gateway.auth.token)"
        case .passwordMissing: return "unauthorized: gateway password missing (\(passwordHint))"
        case .passwordMismatch: return "unauthorized: gateway password mismatch (\(passwordHint))"
        case .passwordMissingConfig: return "unauthorized: gateway password not configured on gateway (set gateway.auth.password)"
        case .bootstrapTokenInvalid: return "unauthorized: bootstrap token invalid or expired (scan a fresh setup code)"
        case .deviceTokenMismatch: return "unauthorized: device token mismatch (rotate/reissue device token)"
        case .rateLimited: return "unauthorized: too many failed authentication attempts (retry later)"
        case .scopeMismatch: return "unauthorized: device token scope mismatch (re-pair or rotate the device token)"
        default: return "unauthorized"
        }
    }

    /// `value` trimmed, or `nil` when that leaves nothing (upstream `normalizeOptionalString`).
    static func trimmedNonEmpty(_ value: String?) -> String? {
        guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
