import GatewayProtocol

/// A drain: the Gateway keeps its sessions but refuses new work with a retryable `UNAVAILABLE`,
/// as a real Gateway does while it prepares a restart, a cooperative host suspension, or the
/// close of one server generation.
///
/// Upstream (read for facts, not copied): the reasons are `gateway-restarting`,
/// `gateway-suspending` and `gateway-closing`
/// (`packages/gateway-protocol/src/restart-unavailable.ts@dfad8d8a`). A refused request gets
/// `UNAVAILABLE "<method> unavailable during gateway restart|suspension"` with `retryable:true`,
/// `retryAfterMs` 1000 and `details {method, reason, phase}` (`workAdmissionUnavailableError`,
/// upstream); a closing generation refuses even `connect` with
/// `details {method, reason:"gateway-closing"}` (an upstream server test).
/// Continuations of admitted work stay allowed: a node's `node.invoke.result` /
/// `node.invoke.progress` for a pending invoke, and an operator's resolve or read of a pending
/// approval or question (upstream `runGatewayPendingWorkContinuation`).
///
/// Unconfirmed, so chosen to be tolerant: the message of a `gateway-closing` refusal (this
/// Gateway says "<method> unavailable while the gateway closes"), the `phase` values (this
/// Gateway sends `accepting` during a restart drain, `draining` during a suspension and none for
/// a closing generation), and whether a restart or suspension drain refuses `connect` (it does
/// not here: new sessions are admitted, their requests are refused).
public enum GatewayDrain: String, Sendable, Hashable, CaseIterable, Codable {
    /// A restart drain (`details.reason` `gateway-restarting`).
    case restarting
    /// A cooperative host suspension (`gateway-suspending`).
    case suspending
    /// One directly closed server generation draining (`gateway-closing`).
    case closing

    /// `details.reason` of a refusal.
    public var reason: String { "gateway-\(rawValue)" }

    /// The drain named by `text`: `restarting`/`restart`, `suspending`/`suspend`,
    /// `closing`/`close`, or the reason itself (`gateway-restarting`, ...).
    public init?(name text: String) {
        let name = text.hasPrefix("gateway-") ? String(text.dropFirst("gateway-".count)) : text
        switch name {
        case "restarting", "restart": self = .restarting
        case "suspending", "suspend": self = .suspending
        case "closing", "close": self = .closing
        default: return nil
        }
    }

    /// How long a refused client should wait, as upstream tells it.
    public static let retryAfterMs = 1_000

    /// The methods a drain still admits: continuations of work admitted before it.
    static let continuationMethods: Set<String> = Set([
        GatewayMethod.nodeInvokeResult, .nodeInvokeProgress,
        .approvalResolve, .approvalGet, .execApprovalResolve, .execApprovalGet, .pluginApprovalResolve,
        .questionResolve, .questionGet,
    ].map(\.rawValue))

    /// Whether a request for `method` is still served during this drain.
    func admits(method: String) -> Bool { Self.continuationMethods.contains(method) }

    /// The refusal of a request for `method`.
    public func refusal(method: String) -> ErrorShape {
        var details: [String: JSONValue] = ["method": .string(method), "reason": .string(reason)]
        let message: String
        switch self {
        case .restarting:
            message = "\(method) unavailable during gateway restart"
            details["phase"] = "accepting"
        case .suspending:
            message = "\(method) unavailable during gateway suspension"
            details["phase"] = "draining"
        case .closing:
            message = "\(method) unavailable while the gateway closes"
        }
        return ErrorShape(code: ErrorCode.unavailable.rawValue, message: message, details: .object(details),
                          retryable: true, retryAfterMs: Self.retryAfterMs)
    }

    /// Whether `error` is a drain refusal (any of the three reasons), the way upstream clients
    /// test it: `UNAVAILABLE` with `details.reason` one of the drain reasons.
    public static func isDrainRefusal(_ error: ErrorShape) -> Bool {
        guard error.code == ErrorCode.unavailable.rawValue, let reason = error.details?["reason"]?.stringValue else { return false }
        return allCases.contains { $0.reason == reason }
    }
}
