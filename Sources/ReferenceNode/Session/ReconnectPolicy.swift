import GatewayProtocol

/// How one connection attempt or session ended.
public enum ConnectionEnd: Sendable, Hashable {
    /// No session came about: the socket could not be opened, closed before `hello-ok`, or the
    /// challenge or connect reply did not arrive in time.
    case transportFailure(String)
    /// The Gateway refused `connect` with this error (the socket is closed afterwards).
    case rejected(ErrorShape)
    /// An established session ended with this close code (1006 when the TCP connection dropped).
    case ended(closeCode: Int, reason: String)
    /// The client itself dropped the session for `reason` (tick watchdog, seq gap, ...).
    case droppedByClient(reason: String)
    /// The client was told to disconnect or stop.
    case stoppedByClient
}

extension ConnectionEnd: CustomStringConvertible {
    /// A one-line description for logs and stimulus replies, e.g.
    /// `refused: NOT_PAIRED (PAIRING_REQUIRED) pairing required: device is not approved yet`.
    public var description: String {
        switch self {
        case .transportFailure(let reason): "no session: \(reason)"
        case .rejected(let error):
            "refused: \(error.code)\(error.detailCode.map { " (\($0))" } ?? "") \(error.message)"
        case .ended(let code, let reason): "ended with close \(code)\(reason.isEmpty ? "" : " \(reason)")"
        case .droppedByClient(let reason): "dropped by the client: \(reason)"
        case .stoppedByClient: "stopped by the client"
        }
    }
}

/// What a session does after a connection ended.
public enum ReconnectDecision: Sendable, Hashable {
    /// Connect again after this many milliseconds.
    case retry(afterMs: Int64)
    /// Pairing is pending: retry (same identity) after this many milliseconds.
    case pairingWait(afterMs: Int64, requestId: String?)
    /// Stop reconnecting automatically until an explicit `connect` (docs/protocol.md §11.3).
    case pause(reason: String)
    /// Nothing to do: the client stopped.
    case idle
}

/// A side effect the owner performs together with a decision.
enum ReconnectEffect: Sendable, Hashable {
    /// Forget the stored device token of this session's role.
    case clearStoredToken
    /// Next connect: the one-shot retry `{token: shared, deviceToken: stored}`.
    case useDeviceTokenRetry
    /// Replace the device identity (the `pairing-churn` mutant).
    case regenerateIdentity
    /// Forget the setup-code bootstrap token (the `drop-bootstrap-while-pending` mutant).
    case clearBootstrapToken
}

/// The credentials used by the attempt being judged.
struct AttemptContext: Sendable, Hashable {
    var authSource: ConnectAuthSource
    var hadStoredToken: Bool
    var usedDeviceTokenRetry: Bool
    /// Whether the endpoint may get the stored device token on the one-shot retry: loopback, or
    /// `wss://` with a pinned certificate (see ``ConnectBuilder/isTrustedDeviceRetryEndpoint(_:pinnedFingerprint:)``).
    var trustedEndpoint: Bool = true
}

/// The reconnect rules of docs/protocol.md §11.3 as a value: capped exponential backoff
/// (0.5 s doubling to 30 s, reset after a session), `retryAfterMs` on `UNAVAILABLE`, a pause on
/// the non-recoverable codes, a slower retry loop (at most 2 per second) while pairing is
/// pending, and token hygiene after refusals (docs/protocol.md §5.6).
struct ReconnectPolicy: Sendable {
    /// Codes after which Swift pauses automatic reconnects (docs/protocol.md §11.3), plus `CLIENT_VERSION_MISMATCH`.
    static let nonRecoverable: Set<String> = Set([
        ConnectErrorDetailCode.authTokenMissing, .authBootstrapTokenInvalid, .authTokenNotConfigured, .authPasswordMissing,
        .authPasswordMismatch, .authPasswordNotConfigured, .authRateLimited, .authScopeMismatch,
        .controlUIDeviceIdentityRequired, .deviceIdentityRequired, .clientVersionMismatch,
    ].map(\.rawValue))

    private(set) var backoffAttempt = 0
    private(set) var pairingAttempt = 0
    /// The newest pairing `requestId` reported to this session.
    private(set) var pairingRequestId: String?
    private var random: SeededGenerator
    private let mutants: Set<Mutant>
    /// Where to wait for an explicit `connect` instead of retrying (legal variants, see
    /// `ReferenceConfiguration.waitsForUser`).
    private let waitsForUser: UserWaits

    /// The drop reason of an attempt ended on a `connect.challenge` without an integer `ts`.
    static let invalidChallengeReason = "connect challenge without an integer ts"

    init(seed: UInt64, mutants: Set<Mutant>, waitsForUser: UserWaits = []) {
        random = SeededGenerator(seed: seed)
        self.mutants = mutants
        self.waitsForUser = waitsForUser
    }

    /// A session was established: backoff and pairing state start over.
    mutating func sessionEstablished() {
        backoffAttempt = 0
        pairingAttempt = 0
        pairingRequestId = nil
    }

    /// An explicit `connect` stimulus: the next failure starts a fresh pairing loop.
    mutating func explicitResume() {
        pairingAttempt = 0
    }

    /// The next delay of the capped exponential backoff, with up to 25 % positive jitter (never
    /// shorter than the nominal delay, so the rate limit holds).
    mutating func nextBackoffMs() -> Int64 {
        let base = min(ClientTimers.backoffMaximumMs, ClientTimers.backoffInitialMs << Int64(min(backoffAttempt, 16)))
        backoffAttempt += 1
        return base + Int64.random(in: 0...(base / 4), using: &random)
    }

    /// The next pairing retry delay: 1 s × 1.7ⁿ capped at 8 s, with positive jitter.
    mutating func nextPairingDelayMs() -> Int64 {
        var base = Double(ClientTimers.pairingRetryInitialMs)
        for _ in 0..<min(pairingAttempt, 16) { base *= 1.7 }
        let capped = min(Int64(base), ClientTimers.pairingRetryMaximumMs)
        pairingAttempt += 1
        return capped + Int64.random(in: 0...(capped / 10), using: &random)
    }

    /// Decides what to do after `end`.
    mutating func decide(_ end: ConnectionEnd, context: AttemptContext) -> (ReconnectDecision, [ReconnectEffect]) {
        let (decision, effects) = classify(end, context: context)
        return (paced(decision), effects)
    }

    /// The one place where delays become real: the `tight-reconnect-loop` mutant replaces every
    /// delay with 100 ms.
    private func paced(_ decision: ReconnectDecision) -> ReconnectDecision {
        guard mutants.contains(.tightReconnectLoop) else { return decision }
        switch decision {
        case .retry: return .retry(afterMs: ClientTimers.tightLoopMs)
        case .pairingWait(_, let requestId): return .pairingWait(afterMs: ClientTimers.tightLoopMs, requestId: requestId)
        case .pause, .idle: return decision
        }
    }

    private mutating func classify(_ end: ConnectionEnd, context: AttemptContext) -> (ReconnectDecision, [ReconnectEffect]) {
        switch end {
        case .stoppedByClient:
            return (.idle, [])
        case .transportFailure(let reason) where reason == Self.invalidChallengeReason && waitsForUser.contains(.afterInvalidChallenge):
            return (.pause(reason: reason), [])
        case .transportFailure, .droppedByClient:
            return (.retry(afterMs: nextBackoffMs()), [])
        case .ended(let closeCode, _):
            return (afterSession(closeCode: closeCode), [])
        case .rejected(let error):
            return afterRejection(error, context: context)
        }
    }

    private mutating func afterSession(closeCode: Int) -> ReconnectDecision {
        switch closeCode {
        case 1002:
            if mutants.contains(.reconnectAfterProtocolMismatch) { return .retry(afterMs: nextBackoffMs()) }
            return .pause(reason: "protocol mismatch")
        case 1012:
            // A planned restart (docs/protocol.md §11.4): reconnect with backoff until the Gateway is back.
            if mutants.contains(.noReconnectAfterRestart) { return .pause(reason: "gateway restarted") }
            return .retry(afterMs: nextBackoffMs())
        case 1008:
            // Policy closes include a removed device or a revoked token (docs/protocol.md §5.5-5.6): the next connect
            // gets a fresh pairing request or a new token.
            if mutants.contains(.stopOnPolicyClose) { return .pause(reason: "closed by policy") }
            return .retry(afterMs: nextBackoffMs())
        case Int(GatewayCloseCode.gatewayAuthChanged.rawValue):
            // 4001 "gateway auth changed": the shared secret changed. Reconnect; every attempt
            // reads its credentials afresh (the stored device token, a new shared secret), and a
            // stale shared secret is rescued by the one-shot device-token retry (connect-auth.ts).
            if mutants.contains(.stopAfterAuthChanged) { return .pause(reason: "gateway auth changed") }
            return .retry(afterMs: nextBackoffMs())
        default:
            return .retry(afterMs: nextBackoffMs())
        }
    }

    private mutating func afterRejection(_ error: ErrorShape, context: AttemptContext) -> (ReconnectDecision, [ReconnectEffect]) {
        // Swift drives the policy by `details.code`, falling back to the top-level code (docs/protocol.md §10.1).
        let code = error.detailCode ?? error.code
        switch code {
        case ConnectErrorDetailCode.protocolMismatch.rawValue:
            if mutants.contains(.reconnectAfterProtocolMismatch) { return (.retry(afterMs: nextBackoffMs()), []) }
            return (.pause(reason: "protocol mismatch"), [])
        case ConnectErrorDetailCode.pairingRequired.rawValue:
            return afterPairingRequired(error)
        case ConnectErrorDetailCode.pairingRejected.rawValue, ConnectErrorDetailCode.pairingExpired.rawValue:
            return (.pairingWait(afterMs: nextPairingDelayMs(), requestId: pairingRequestId), [])
        case ConnectErrorDetailCode.authDeviceTokenMismatch.rawValue:
            // The stored token is dead (docs/protocol.md §5.6): forget it, then pair again.
            let effects: [ReconnectEffect] = mutants.contains(.keepRevokedToken) ? [] : [.clearStoredToken]
            return (.retry(afterMs: nextBackoffMs()), effects)
        case ConnectErrorDetailCode.authTokenMismatch.rawValue:
            return afterTokenMismatch(context: context)
        case ConnectErrorDetailCode.authRateLimited.rawValue:
            // Locked out: wait at least `retryAfterMs` (the lockout left), then try again; without
            // a hint, wait for an explicit reconnect (docs gateway/security/rate-limiting.md).
            // The limit is the address's (failed attempts, or node-pairing requests): the identity
            // and the credentials stay; a new identity would be one more node-pairing request.
            let effects: [ReconnectEffect] = mutants.contains(.newIdentityAfterRateLimit) ? [.regenerateIdentity] : []
            guard let retryAfter = error.retryAfterMs else { return (.pause(reason: code), effects) }
            if mutants.contains(.ignoreRateLimitRetryAfter) { return (.retry(afterMs: ClientTimers.tightLoopMs), effects) }
            return (.retry(afterMs: max(nextBackoffMs(), Int64(retryAfter))), effects)
        case ConnectErrorDetailCode.authScopeMismatch.rawValue:
            // The token is good but does not cover the scopes asked for: re-pair or approve, keep
            // the token (docs gateway/protocol.md "Auth").
            let effects: [ReconnectEffect] = mutants.contains(.clearTokenOnScopeMismatch) ? [.clearStoredToken] : []
            return (.pause(reason: code), effects)
        default:
            break
        }
        if Self.nonRecoverable.contains(code) { return (.pause(reason: code), []) }
        if error.code == ErrorCode.unavailable.rawValue {
            let backoff = nextBackoffMs()
            guard let retryAfter = error.retryAfterMs else { return (.retry(afterMs: backoff), []) }
            if mutants.contains(.ignoreRetryAfter) { return (.retry(afterMs: backoff), []) }
            return (.retry(afterMs: max(backoff, Int64(retryAfter))), [])
        }
        return (.retry(afterMs: nextBackoffMs()), [])
    }

    private mutating func afterPairingRequired(_ error: ErrorShape) -> (ReconnectDecision, [ReconnectEffect]) {
        let details = error.details
        let requestId = details?["requestId"]?.stringValue
        let previous = pairingRequestId
        if let requestId { pairingRequestId = requestId }
        // A detached approval may still land (bootstrap, SSH verify): keep retrying normally,
        // with the same bootstrap token (docs/protocol.md §5.8; docs gateway/protocol.md "Auth").
        if details?["pauseReconnect"]?.boolValue == false
            || details?["recommendedNextStep"]?.stringValue == RecommendedNextStep.waitThenRetry.rawValue {
            let effects: [ReconnectEffect] = mutants.contains(.dropBootstrapWhilePending) ? [.clearBootstrapToken] : []
            return (.retry(afterMs: nextBackoffMs()), effects)
        }
        // A new id is no progress: supersession by the device's other session makes one on every
        // alternation, so the backoff keeps growing.
        if mutants.contains(.resetBackoffOnNewRequestId), let previous, let requestId, previous != requestId {
            pairingAttempt = 0
        }
        if mutants.contains(.followSupersededRequest), let previous, let requestId, previous != requestId {
            return (.pause(reason: "pairing request \(previous) was replaced"), [])
        }
        if mutants.contains(.noPairingRetry) || waitsForUser.contains(.afterPairingRequired) { return (.pause(reason: "pairing required"), []) }
        let effects: [ReconnectEffect] = mutants.contains(.pairingChurn) ? [.regenerateIdentity] : []
        return (.pairingWait(afterMs: nextPairingDelayMs(), requestId: pairingRequestId), effects)
    }

    private mutating func afterTokenMismatch(context: AttemptContext) -> (ReconnectDecision, [ReconnectEffect]) {
        switch context.authSource {
        case .storedDeviceToken:
            // The Gateway refused the stored device token sent as auth.token: it is revoked or
            // belongs to another Gateway generation. Forget it and fall back to pairing (docs/protocol.md §5.6).
            let effects: [ReconnectEffect] = mutants.contains(.keepRevokedToken) ? [] : [.clearStoredToken]
            return (.retry(afterMs: nextBackoffMs()), effects)
        case .sharedToken where context.hadStoredToken && !context.usedDeviceTokenRetry
            && context.trustedEndpoint && !mutants.contains(.noDeviceTokenRetry):
            // The one-shot retry with the stored device token next to the shared token, only on a
            // trusted endpoint (loopback, or pinned wss://): docs gateway/protocol.md "Auth",
            // `isTrustedDeviceRetryEndpoint` in packages/gateway-client/src/client.ts
            // @166b22cac689bb426e034c2fa9428363ece3ec23.
            return (.retry(afterMs: ClientTimers.fastRetryMs), [.useDeviceTokenRetry])
        default:
            return (.pause(reason: ConnectErrorDetailCode.authTokenMismatch.rawValue), [])
        }
    }
}
