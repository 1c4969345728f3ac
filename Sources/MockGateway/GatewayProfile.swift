/// One Gateway generation, as a value: what a client sees differ between an older and a newer
/// Gateway. Scenarios run against the built-in profiles and may define their own, for example a
/// strict protocol-3-only Gateway.
public struct GatewayProfile: Sendable, Hashable {
    /// How `node.event` is answered.
    public enum NodeEventReply: String, Sendable, Hashable {
        /// `{ok:true, event, handled, reason?}` (current Gateways).
        case structured
        /// A bare `{ok:true}` (older Gateways): acknowledged, but not a durable record.
        case bareOK
    }

    /// The error a caller gets for a method it lacks the scope for.
    public enum MissingScopeStyle: String, Sendable, Hashable {
        /// `FORBIDDEN` with `details.code:"MISSING_SCOPE"` (current).
        case forbidden
        /// `INVALID_REQUEST` with the same message (older).
        case invalidRequest
    }

    /// How a `PAIRING_REQUIRED` rejection is worded.
    public enum PairingMessageStyle: String, Sendable, Hashable {
        /// `pairing required: <requirement>` with the full details object (current).
        case current
        /// `pairing required` with `details {code, reason, requestId}` (protocol 3 era).
        case legacy
    }

    /// A short name, used in reports and on the command line.
    public var name: String
    /// The highest protocol version this Gateway speaks; `hello-ok.protocol` never exceeds it.
    public var protocolVersion: Int
    /// The lowest protocol version accepted from operator (and other non-node) clients.
    public var minimumClientProtocol: Int
    /// The lowest protocol version accepted from node and probe clients (the N-1 window).
    public var minimumNodeProtocol: Int
    /// The `node.event` reply shape.
    public var nodeEventReply: NodeEventReply
    /// Whether the unified `approval.*` methods exist (the `exec.approval.*` family always does).
    public var hasUnifiedApprovals: Bool
    /// Whether `question.*` exists.
    public var hasQuestions: Bool
    /// Whether the newer node methods (`node.pending.drain`, `node.pluginSurface.refresh`,
    /// `node.invoke.progress`, `node.skills.update`, `node.pluginTools.update`) exist.
    public var hasNewerNodeMethods: Bool
    /// The missing-scope error.
    public var missingScopeStyle: MissingScopeStyle
    /// The pairing error text.
    public var pairingMessageStyle: PairingMessageStyle
    /// The version string in `hello-ok.server.version`.
    public var serverVersion: String

    /// Creates a profile.
    public init(
        name: String,
        protocolVersion: Int,
        minimumClientProtocol: Int,
        minimumNodeProtocol: Int,
        nodeEventReply: NodeEventReply,
        hasUnifiedApprovals: Bool,
        hasQuestions: Bool,
        hasNewerNodeMethods: Bool,
        missingScopeStyle: MissingScopeStyle,
        pairingMessageStyle: PairingMessageStyle,
        serverVersion: String
    ) {
        self.name = name
        self.protocolVersion = protocolVersion
        self.minimumClientProtocol = minimumClientProtocol
        self.minimumNodeProtocol = minimumNodeProtocol
        self.nodeEventReply = nodeEventReply
        self.hasUnifiedApprovals = hasUnifiedApprovals
        self.hasQuestions = hasQuestions
        self.hasNewerNodeMethods = hasNewerNodeMethods
        self.missingScopeStyle = missingScopeStyle
        self.pairingMessageStyle = pairingMessageStyle
        self.serverVersion = serverVersion
    }

    /// The mid-2026 Gateway: protocol 4 (node clients offering only 3 accepted), structured
    /// `node.event` results, unified approvals, questions, `FORBIDDEN` for missing scopes.
    public static let current = GatewayProfile(
        name: "current", protocolVersion: 4, minimumClientProtocol: 4, minimumNodeProtocol: 3,
        nodeEventReply: .structured, hasUnifiedApprovals: true, hasQuestions: true,
        hasNewerNodeMethods: true, missingScopeStyle: .forbidden, pairingMessageStyle: .current,
        serverVersion: "2026.8.1")

    /// The generation before unified approvals and structured `node.event` results: bare
    /// `{ok:true}` replies, `exec.approval.*` only, no `question.*`, `INVALID_REQUEST` for missing
    /// scopes, the older pairing text. It speaks protocol 3 and also accepts 4 (answering with the
    /// highest version both sides offer), so today's clients that require 4 can still be exercised
    /// against old-Gateway behaviour.
    public static let legacy = GatewayProfile(
        name: "legacy", protocolVersion: 4, minimumClientProtocol: 3, minimumNodeProtocol: 3,
        nodeEventReply: .bareOK, hasUnifiedApprovals: false, hasQuestions: false,
        hasNewerNodeMethods: false, missingScopeStyle: .invalidRequest, pairingMessageStyle: .legacy,
        serverVersion: "2026.4.2")

    /// The built-in profiles, in report order.
    public static let builtIn: [GatewayProfile] = [.current, .legacy]

    /// The built-in profile called `name`, if any.
    public static func named(_ name: String) -> GatewayProfile? {
        builtIn.first { $0.name == name }
    }
}
