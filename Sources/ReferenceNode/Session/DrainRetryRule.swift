import GatewayProtocol

/// What the client does with a request the Gateway refused because it is draining (a restart,
/// a host suspension, or one server generation closing).
///
/// Upstream clients resend such a request instead of failing it: the TypeScript Gateway client
/// resends on `UNAVAILABLE` + `retryable:true` with `details.reason` `gateway-restarting` or
/// `gateway-suspending` (`packages/gateway-client/src/pending-request.ts`), and its read retries wait
/// `max(retryAfterMs, min(500 ms × 2^attempt, 5 s))` (`packages/gateway-client/src`); the reasons are those
/// of `packages/gateway-protocol/src/restart-unavailable.ts@dfad8d8a`. `gateway-closing` is
/// treated the same way here (a closing generation also answers with a retryable refusal).
public enum DrainRetryRule {
    /// The `details.reason` values of a drain refusal.
    public static let reasons: Set<String> = ["gateway-restarting", "gateway-suspending", "gateway-closing"]

    /// How long the client keeps resending one request (client clock).
    public static let windowMs: Int64 = 30_000

    /// Whether `error` is a drain refusal the client retries.
    public static func isRetryable(_ error: ErrorShape) -> Bool {
        error.code == ErrorCode.unavailable.rawValue && error.retryable == true
            && (error.details?["reason"]?.stringValue).map(reasons.contains) == true
    }

    /// The wait before resend number `attempt + 1` (0 for the first resend).
    public static func delayMs(for error: ErrorShape, attempt: Int) -> Int64 {
        let backoff = min(500 * (Int64(1) << Int64(min(max(attempt, 0), 4))), 5_000)
        return max(Int64(max(error.retryAfterMs ?? 0, 0)), backoff)
    }
}
