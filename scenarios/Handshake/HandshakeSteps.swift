import Conformance
import GatewayProtocol
import MockGateway

/// Steps of the handshake scenarios that judge retry timing.
enum HandshakeSteps {
    /// One refusal that asked the client to wait, and the client's next connection of the same
    /// role, measured on the Gateway clock (the transcript).
    struct Retry: Sendable {
        /// The refused connection.
        var refused: String
        /// Its connect's role.
        var role: String
        /// The `retryAfterMs` of the refusal.
        var retryAfterMs: Int
        /// The close code the refused connection got.
        var closeCode: Int
        /// Milliseconds from the refusal to the next connection of that role, `nil` if none came.
        var waitedMs: Int64?
    }

    /// Locks every loopback address the client may connect from out of `scope` for
    /// `durationMs` of Gateway time, so that its connects are refused with AUTH_RATE_LIMITED.
    static func lockOutLoopback(_ run: ScenarioRun, scope: AuthRateLimitScope, durationMs: Int64 = 10_000) async {
        for address in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            await run.gateway.lockOutAuthentication(address: address, scope: scope, durationMs: durationMs)
        }
    }

    /// Requires every connection after an AUTH_RATE_LIMITED refusal since `cursor` (of `role`
    /// only, when given) to come at least the refusal's `retryAfterMs` later.
    static func expectRateLimitRetriesHonoured(_ run: ScenarioRun, from cursor: EventCursor, role: GatewayRole? = nil) throws {
        let retries = retries(run, from: cursor) { $0.detailCode == ConnectErrorDetailCode.authRateLimited.rawValue }
        for retry in retries where role.map({ retry.role == $0.rawValue }) ?? true {
            guard let waited = retry.waitedMs else { continue }
            try run.expect(waited >= Int64(retry.retryAfterMs),
                           "the client connected again (\(retry.role)) sooner than retryAfterMs after AUTH_RATE_LIMITED",
                           expected: "at least \(retry.retryAfterMs) ms between the refusal of \(retry.refused) and the next \(retry.role) connection",
                           actual: "\(waited) ms")
        }
    }

    /// Every refusal since `cursor` that `matches`, with the wait before the client's next
    /// connection of the same role (upstream clients wait at least `retryAfterMs`).
    static func retries(_ run: ScenarioRun, from cursor: EventCursor, matches: (ErrorShape) -> Bool) -> [Retry] {
        var order: [String] = []
        var roleOf: [String: String] = [:]
        var refusals: [String: (retryAfterMs: Int, closeCode: Int)] = [:]
        for event in run.events(from: cursor) {
            switch event {
            case .connectionOpened(let id, _, _):
                order.append(id)
            case .frameIn(let id, .request(let request)?, _) where request.method == GatewayMethod.connect.rawValue:
                roleOf[id] = request.params?["role"]?.stringValue ?? GatewayRole.operator.rawValue
            case .handshakeRejected(let id, let error, let closeCode) where matches(error):
                refusals[id] = (error.retryAfterMs ?? 0, closeCode)
            default:
                break
            }
        }
        var openedAt: [String: Int64] = [:]
        var refusedAt: [String: Int64] = [:]
        for entry in run.gateway.transcript.entries {
            switch entry.kind {
            case .open: openedAt[entry.connectionId] = openedAt[entry.connectionId] ?? entry.gatewayMs
            case .outbound where entry.message?["type"]?.stringValue == "res" && refusals[entry.connectionId] != nil:
                refusedAt[entry.connectionId] = refusedAt[entry.connectionId] ?? entry.gatewayMs
            default: break
            }
        }
        return order.enumerated().compactMap { index, id in
            guard let refusal = refusals[id], let role = roleOf[id], let refused = refusedAt[id] else { return nil }
            let next = order[(index + 1)...].first { roleOf[$0] == role }.flatMap { openedAt[$0] }
            return Retry(refused: id, role: role, retryAfterMs: refusal.retryAfterMs, closeCode: refusal.closeCode,
                         waitedMs: next.map { $0 - refused })
        }
    }
}
