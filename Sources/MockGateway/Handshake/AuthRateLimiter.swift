import GatewayProtocol

/// A credential class with its own failure counter (upstream `AUTH_RATE_LIMIT_SCOPE_*` in
/// `src/gateway/auth-rate-limit.ts` @96e5d168e158cfe17c74f7a963052752238b8254).
public enum AuthRateLimitScope: String, Sendable, Hashable, CaseIterable {
    /// The shared token or password (`shared-secret`).
    case sharedSecret = "shared-secret"
    /// Device tokens (`device-token`).
    case deviceToken = "device-token"
    /// Setup-code bootstrap tokens (`bootstrap-token`).
    case bootstrapToken = "bootstrap-token"
    /// Node-pairing requests of nodes whose capability surface is not paired yet (`node-pairing`,
    /// `connect-node-session.ts` @eb43e943c9f52eb9076fcea3919c62d736b1053a).
    case nodePairing = "node-pairing"
    /// Apple Watch challenge issuance (`watch-challenge`): every challenge counts, a successful
    /// Watch connect resets it (`src/gateway/watch-node-http.ts` @2432998cc475ff3e91432bd627c6021a01e861d9).
    case watchChallenge = "watch-challenge"
    /// Node pairing update requests of a paired node (`node-reapproval`), keyed `node:<nodeId>`
    /// and never exempt: each request a widened surface opens, or refreshes with new metadata,
    /// counts; keeping a waiting one as it is does not (`createNodeReapprovalCoordinator`, src/gateway/node-reapproval-coordinator.ts,
    /// with `exemptLoopback: false`).
    case nodeReapproval = "node-reapproval"
}

/// The limits of ``AuthRateLimiter``; the defaults are upstream's (`createAuthRateLimiter` in
/// `src/gateway/auth-rate-limit.ts` @031bede2d5e1bb10480f968a29cdbeaabd46a6ad): 10 failures in a
/// sliding minute lock an address out for 5 minutes, and loopback addresses are exempt.
public struct AuthRateLimitConfiguration: Sendable, Hashable {
    /// Failures inside the window that lock the address out.
    public var maxAttempts: Int
    /// The sliding window.
    public var windowMs: Int64
    /// How long a lockout lasts (the `retryAfterMs` of the first refusal).
    public var lockoutMs: Int64
    /// Whether loopback addresses are never limited (upstream's default). Turn it off to
    /// exercise the limits against a client on the same machine.
    public var exemptLoopback: Bool

    /// Creates limits; every parameter has upstream's default.
    public init(maxAttempts: Int = 10, windowMs: Int64 = 60_000, lockoutMs: Int64 = 300_000, exemptLoopback: Bool = true) {
        self.maxAttempts = maxAttempts
        self.windowMs = windowMs
        self.lockoutMs = lockoutMs
        self.exemptLoopback = exemptLoopback
    }

    /// Upstream's defaults.
    public static let upstreamDefault = AuthRateLimitConfiguration()
}

/// The answer of ``AuthRateLimiter/check(_:scope:nowMs:)``.
public struct AuthRateLimitCheck: Sendable, Hashable {
    /// Whether the attempt may go ahead.
    public var allowed: Bool
    /// Failures left before the lockout.
    public var remaining: Int
    /// How long the lockout still lasts (0 when not locked).
    public var retryAfterMs: Int64
}

/// Failed authentication attempts per (scope, client address), as a pure value: a sliding window
/// of failure times and a lockout (upstream `src/gateway/auth-rate-limit.ts`
/// @031bede2d5e1bb10480f968a29cdbeaabd46a6ad, ported rule by rule: `check`, `recordFailure`,
/// `reset`). The owner passes its clock.
public struct AuthRateLimiter: Sendable {
    private struct Key: Hashable, Sendable {
        var scope: AuthRateLimitScope
        var address: String
    }

    private struct Entry: Sendable {
        var attempts: [Int64] = []
        var lockedUntilMs: Int64?
    }

    /// The limits in force.
    public var configuration: AuthRateLimitConfiguration
    private var entries: [Key: Entry] = [:]

    /// Creates an empty limiter.
    public init(configuration: AuthRateLimitConfiguration = .upstreamDefault) {
        self.configuration = configuration
    }

    /// Whether `address` is exempt: a loopback address while the exemption is on. An address
    /// that does not parse counts as remote.
    public func isExempt(_ address: String) -> Bool {
        configuration.exemptLoopback && ((try? IPAddress(parsing: address))?.isLoopback ?? false)
    }

    /// Whether `address` may attempt to authenticate in `scope` now.
    public mutating func check(_ address: String, scope: AuthRateLimitScope, nowMs: Int64) -> AuthRateLimitCheck {
        let maxAttempts = configuration.maxAttempts
        guard !isExempt(address), var entry = entries[Key(scope: scope, address: address)] else {
            return AuthRateLimitCheck(allowed: true, remaining: maxAttempts, retryAfterMs: 0)
        }
        let key = Key(scope: scope, address: address)
        if let lockedUntil = entry.lockedUntilMs {
            if nowMs < lockedUntil { return AuthRateLimitCheck(allowed: false, remaining: 0, retryAfterMs: lockedUntil - nowMs) }
            // The lockout is over: start afresh.
            entry.lockedUntilMs = nil
            entry.attempts = []
        }
        entry.attempts.removeAll { $0 <= nowMs - configuration.windowMs }
        entries[key] = entry
        let remaining = max(0, maxAttempts - entry.attempts.count)
        return AuthRateLimitCheck(allowed: remaining > 0, remaining: remaining, retryAfterMs: 0)
    }

    /// Records a failed attempt; the `maxAttempts`-th failure inside the window starts the lockout.
    public mutating func recordFailure(_ address: String, scope: AuthRateLimitScope, nowMs: Int64) {
        guard !isExempt(address) else { return }
        let key = Key(scope: scope, address: address)
        var entry = entries[key] ?? Entry()
        if let lockedUntil = entry.lockedUntilMs, nowMs < lockedUntil { return }
        entry.attempts.removeAll { $0 <= nowMs - configuration.windowMs }
        entry.attempts.append(nowMs)
        if entry.attempts.count >= configuration.maxAttempts { entry.lockedUntilMs = nowMs + configuration.lockoutMs }
        entries[key] = entry
    }

    /// Forgets the failures of `address` in `scope` (after a successful authentication).
    public mutating func reset(_ address: String, scope: AuthRateLimitScope) {
        entries[Key(scope: scope, address: address)] = nil
    }

    /// Locks `address` out of `scope` for `durationMs` from `nowMs` (a scripted fault: the
    /// state after enough failures, without making them).
    public mutating func lockOut(_ address: String, scope: AuthRateLimitScope, durationMs: Int64, nowMs: Int64) {
        entries[Key(scope: scope, address: address)] = Entry(attempts: [], lockedUntilMs: nowMs + durationMs)
    }
}
