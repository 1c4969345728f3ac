import GatewayProtocol

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
    /// The version-dependent part of the `connect` schema (whether `device.nonce` is required).
    public var connectSchema: ConnectSchemaRules
    /// Whether `hello-ok.protocol` is always ``protocolVersion`` (current upstream:
    /// `protocol: PROTOCOL_VERSION` in `connect-hello.ts` @6eec7e0ec17433b40821fac09f7808d1d8e0345e,
    /// even for a node that offered only 3) or the negotiated version.
    public var announcesCurrentProtocol: Bool
    /// Whether `hello-ok.auth.scopes` are the issued device token's scopes (current upstream:
    /// `deviceToken ? deviceToken.scopes : scopes`, connect-hello.ts @6eec7e0e) or the scopes of
    /// the connection.
    public var helloReportsTokenScopes: Bool
    /// `hello-ok.features.capabilities`; empty means the member is left out.
    public var serverCapabilities: [String]
    /// Whether a pending pairing request is refreshed in place only for the same primary role
    /// (and browser origin), so a device whose node and operator connections alternate churns
    /// request ids (current upstream `samePendingApprovalSnapshot`); otherwise the primary role
    /// is ignored.
    public var supersessionComparesRole: Bool
    /// Whether rejecting a pairing request also revokes the device's bootstrap tokens (current
    /// upstream `rejectDevicePairingInWorker`).
    public var rejectRevokesBootstrapTokens: Bool
    /// Whether a setup code is approved silently only for a matching official mobile client
    /// (`openclaw-ios` on iOS/iPadOS and an iPhone/iPad, `openclaw-android` on Android) with a
    /// mobile setup profile; otherwise any fresh scopeless node presenting it is.
    public var setupCodeApprovalRequiresMobileClient: Bool
    /// Whether setup codes carry `expiresAtMs` and the setup lifecycle exists
    /// (`device.pair.setupCode`, `device.pair.setupStatus`, `device.pair.setup.completed` /
    /// `device.pair.setup.deliveryUncertain`).
    public var hasSetupCodeLifecycle: Bool

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
        serverVersion: String,
        connectSchema: ConnectSchemaRules = .current,
        announcesCurrentProtocol: Bool = true,
        helloReportsTokenScopes: Bool = true,
        serverCapabilities: [String] = GatewayProfile.currentServerCapabilities,
        supersessionComparesRole: Bool = true,
        rejectRevokesBootstrapTokens: Bool = true,
        setupCodeApprovalRequiresMobileClient: Bool = true,
        hasSetupCodeLifecycle: Bool = true
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
        self.connectSchema = connectSchema
        self.announcesCurrentProtocol = announcesCurrentProtocol
        self.helloReportsTokenScopes = helloReportsTokenScopes
        self.serverCapabilities = serverCapabilities
        self.supersessionComparesRole = supersessionComparesRole
        self.rejectRevokesBootstrapTokens = rejectRevokesBootstrapTokens
        self.setupCodeApprovalRequiresMobileClient = setupCodeApprovalRequiresMobileClient
        self.hasSetupCodeLifecycle = hasSetupCodeLifecycle
    }

    /// `GATEWAY_SERVER_CAPS` of the current Gateway (frames.ts
    /// @9e18229e9ccec911e6df63c4b5ec1c1fbd2836de, sent by connect-hello.ts @6eec7e0e).
    public static let currentServerCapabilities = [
        "board-widget-put-canvas-doc", "chat-send-routing-contract", "openclaw-setup-model-ref",
    ]

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
    ///
    /// Where the current Gateway changed handshake and pairing rules, this profile keeps the
    /// protocol-3-era reading: a missing `device.nonce` is `DEVICE_AUTH_NONCE_REQUIRED` (not a
    /// schema error); `hello-ok` announces the negotiated protocol and the connection's scopes
    /// and no `features.capabilities`; a pending request is refreshed whatever the primary role;
    /// rejecting a request leaves bootstrap tokens alone; any fresh scopeless node presenting a
    /// setup code is approved; setup codes have no `expiresAtMs` and there is no setup
    /// lifecycle. (⚠️ When each of these changed is not dated upstream; the legacy choices are
    /// the more tolerant ones.)
    public static let legacy = GatewayProfile(
        name: "legacy", protocolVersion: 4, minimumClientProtocol: 3, minimumNodeProtocol: 3,
        nodeEventReply: .bareOK, hasUnifiedApprovals: false, hasQuestions: false,
        hasNewerNodeMethods: false, missingScopeStyle: .invalidRequest, pairingMessageStyle: .legacy,
        serverVersion: "2026.4.2", connectSchema: .legacy, announcesCurrentProtocol: false,
        helloReportsTokenScopes: false, serverCapabilities: [], supersessionComparesRole: false,
        rejectRevokesBootstrapTokens: false, setupCodeApprovalRequiresMobileClient: false, hasSetupCodeLifecycle: false)

    /// The Gateway generation that spoke protocol 3 only (upstream's
    /// `PROTOCOL_VERSION = 3` era): the ``legacy`` behaviours, but `hello-ok.protocol` is 3 and
    /// a client whose range does not reach 3 (today's `4..4`) is refused with `PROTOCOL_MISMATCH`,
    /// `details.expectedProtocol: 3`, which upstream's own node host answers by retrying with its
    /// protocol-3 envelope (`shouldRetryWithLegacyNodeProtocol`, `packages/gateway-client`).
    /// Not part of ``builtIn`` (a client that requires 4 cannot run the catalogue here); a
    /// scenario selects it explicitly, `harness serve --profile protocol3` serves it.
    public static let protocol3: GatewayProfile = {
        var profile = GatewayProfile.legacy
        profile.name = "protocol3"
        profile.protocolVersion = 3
        profile.minimumClientProtocol = 3
        profile.minimumNodeProtocol = 3
        return profile
    }()

    /// The built-in profiles every scenario runs against by default, in report order.
    public static let builtIn: [GatewayProfile] = [.current, .legacy]

    /// Every profile a name selects (``builtIn`` and ``protocol3``).
    public static let selectable: [GatewayProfile] = builtIn + [.protocol3]

    /// The profile called `name` (one of ``selectable``), if any.
    public static func named(_ name: String) -> GatewayProfile? {
        selectable.first { $0.name == name }
    }
}
