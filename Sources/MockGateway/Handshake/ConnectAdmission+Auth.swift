import Foundation
import GatewayProtocol

extension ConnectAdmission {
    /// §5.3: the shared secret first; then a bootstrap token (which wins even over a passing
    /// shared secret); then, if still unauthenticated, the device token. Bootstrap and device
    /// tokens are only considered when the connect carries a device block.
    static func authenticate<Credentials: ConnectCredentialVerifier>(
        _ params: ConnectParams, role: GatewayRole, mode: GatewayAuthMode, credentials: inout Credentials
    ) -> Result<AuthMethod, Rejection> {
        let auth = params.auth
        var method: AuthMethod?
        var failure: AuthFailureReason?
        var retryAfterMs: Int?

        switch checkSharedSecret(auth, mode: mode) {
        case .passed(let passed): method = passed
        case .failed(let reason): failure = reason
        }

        if let device = params.device {
            let request = ConnectCredentialRequest(
                deviceId: device.id, publicKey: device.publicKey, role: role, scopes: params.scopes ?? [], params: params)

            if let bootstrapToken = nonEmpty(auth?.bootstrapToken) {
                switch credentials.verifyBootstrapToken(bootstrapToken, for: request) {
                case .valid:
                    method = .bootstrapToken(bootstrapToken)
                case .invalid(let reason, let retry):
                    // A failed bootstrap token only matters when nothing else authenticated.
                    if method == nil {
                        failure = reason ?? .bootstrapTokenInvalid
                        retryAfterMs = retry
                    }
                }
            }

            if method == nil, let candidate = DeviceTokenCandidate.select(deviceToken: auth?.deviceToken, token: auth?.token) {
                switch credentials.verifyDeviceToken(candidate, for: request) {
                case .valid:
                    method = .deviceToken(candidate)
                case .invalid(let reason, let retry):
                    if reason == .rateLimited {
                        failure = .rateLimited
                        retryAfterMs = retry
                    } else if candidate.source == .deviceTokenField {
                        failure = .deviceTokenMismatch
                    }
                    // A candidate from `auth.token` leaves the shared-secret failure standing.
                }
            }
        }

        if let method { return .success(method) }
        let reason = failure ?? .tokenMismatch
        return .failure(authRejection(reason: reason, params: params, mode: mode, retryAfterMs: retryAfterMs))
    }

    /// The outcome of the shared-secret step.
    enum SharedSecretCheck: Equatable {
        case passed(AuthMethod)
        case failed(AuthFailureReason)
    }

    /// §5.3 step 1. Mode `none` passes at once; an empty configured secret is "not configured".
    static func checkSharedSecret(_ auth: ConnectAuth?, mode: GatewayAuthMode) -> SharedSecretCheck {
        switch mode {
        case .none:
            return .passed(.none)
        case .token(let secret):
            guard !secret.isEmpty else { return .failed(.tokenMissingConfig) }
            guard let token = nonEmpty(auth?.token) else { return .failed(.tokenMissing) }
            return ConstantTime.equals(token, secret) ? .passed(.sharedToken) : .failed(.tokenMismatch)
        case .password(let secret):
            guard !secret.isEmpty else { return .failed(.passwordMissingConfig) }
            guard let password = nonEmpty(auth?.password) else { return .failed(.passwordMissing) }
            return ConstantTime.equals(password, secret) ? .passed(.password) : .failed(.passwordMismatch)
        }
    }

    /// The `INVALID_REQUEST` answer to a failed authentication (§3.7): `details` carry the code,
    /// the raw reason as `authReason`, and the recovery hints; the close reason is the message.
    static func authRejection(reason: AuthFailureReason, params: ConnectParams, mode: GatewayAuthMode, retryAfterMs: Int?) -> Rejection {
        let canRetry = canRetryWithDeviceToken(reason: reason, params: params)
        let message = authFailureMessage(reason: reason, client: params.client)
        let details: JSONValue = [
            "code": .string(reason.detailCode.rawValue),
            "authReason": .string(reason.rawValue),
            "canRetryWithDeviceToken": .bool(canRetry),
            "recommendedNextStep": .string(recommendedNextStep(reason: reason, canRetryWithDeviceToken: canRetry).rawValue),
        ]
        return Rejection(
            stage: .authentication, requestID: nil,
            error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message, details: details, retryAfterMs: retryAfterMs),
            closeCode: .policyViolation, closeReason: message)
    }

    /// Whether a one-shot retry with the stored device token may help: only after a shared-token
    /// mismatch, for a client with a device identity that has not already sent an explicit
    /// `auth.deviceToken` (that retry would be the one that just failed).
    static func canRetryWithDeviceToken(reason: AuthFailureReason, params: ConnectParams) -> Bool {
        reason == .tokenMismatch && params.device != nil && nonEmpty(params.auth?.deviceToken) == nil
    }

    /// `details.recommendedNextStep` for a failure reason.
    static func recommendedNextStep(reason: AuthFailureReason, canRetryWithDeviceToken: Bool) -> RecommendedNextStep {
        if canRetryWithDeviceToken { return .retryWithDeviceToken }
        switch reason {
        case .tokenMissingConfig, .passwordMissingConfig:
            return .updateAuthConfiguration
        case .tokenMissing, .tokenMismatch, .passwordMissing, .passwordMismatch, .bootstrapTokenInvalid, .deviceTokenMismatch:
            return .updateAuthCredentials
        case .rateLimited:
            return .waitThenRetry
        default:
            return .reviewAuthConfiguration
        }
    }

    /// The `error.message` of an auth failure. The token-mismatch text is confirmed
    /// (`unauthorized: gateway token mismatch (provide gateway auth token)`); ⚠️ the other texts
    /// follow the same upstream pattern but are unconfirmed (gateway-protocol.md §11 item 4).
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

    static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
