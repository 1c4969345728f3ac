import GatewayProtocol

/// How a paired record was approved (`approvedVia`, docs/protocol.md §5.10).
public enum ApprovalMethod: String, Sendable, Hashable, CaseIterable {
    /// An operator (or the scripting API) approved the request.
    case manual
    /// Silent local approval of a loopback client.
    case silent
    /// A fresh scopeless node from a trusted network.
    case trustedCIDR = "trusted-cidr"
    /// A setup-code connect with a valid bootstrap token.
    case bootstrap
    /// The fake Gateway's approve-everything convenience mode.
    case auto
}

/// When a paired device's node capability surface was first created and last approved
/// (upstream `PairedDeviceNodeSurface.createdAtMs` / `approvedAtMs`, src/infra/device-pairing.types.ts
/// @29507a52f11653a1e9d05ebed2f7849943e57628). This Gateway approves the surface together with the
/// node role, so both change only when an approval grants (or re-grants) the node role.
public struct NodeSurfaceApproval: Sendable, Hashable {
    /// When the surface was first approved for this record.
    public var createdAtMs: Int64
    /// When the latest approval that granted the node role happened.
    public var approvedAtMs: Int64
}

/// A paired device: the durable source of its approved roles and scopes
/// (docs/protocol.md §5.7, §6.6, §7.10).
public struct PairedDevice: Sendable, Hashable {
    /// `device.id`.
    public var deviceId: String
    /// The raw base64url public key the approval was for.
    public var publicKey: String
    /// `client.displayName`, refreshed on every successful connect.
    public var displayName: String?
    /// The pinned platform (an OS-version change in the same family is refreshed silently).
    public var platform: String?
    /// The pinned device family.
    public var deviceFamily: String?
    /// `client.id` at approval time.
    public var clientId: ClientID?
    /// `client.mode` at approval time.
    public var clientMode: ClientMode?
    /// The approved roles, in the order they were first granted.
    public var roles: [GatewayRole]
    /// The approved operator scopes; a node role holds none.
    public var scopes: [String]
    /// When the record was first created.
    public var createdAtMs: Int64
    /// When the latest approval happened.
    public var approvedAtMs: Int64
    /// How the latest approval happened.
    public var approvedVia: ApprovalMethod
    /// The client IP at the latest approval or connect.
    public var remoteIp: String?
    /// When the device was last seen (a connect or a `node.presence.alive` beacon).
    public var lastSeenAtMs: Int64?
    /// Why it was last seen: `connect`, or the normalised presence trigger.
    public var lastSeenReason: String?
    /// The operator's label (`device.pair.rename`); survives reconnects, unlike `displayName`.
    public var label: String?
    /// The node surface's approval times, once the node role was approved (part of the node
    /// pairing generation, ``NodePairingGeneration``).
    public var nodeSurface: NodeSurfaceApproval?

    /// Creates a record.
    public init(
        deviceId: String, publicKey: String, displayName: String? = nil, platform: String? = nil,
        deviceFamily: String? = nil, clientId: ClientID? = nil, clientMode: ClientMode? = nil, roles: [GatewayRole],
        scopes: [String], createdAtMs: Int64, approvedAtMs: Int64, approvedVia: ApprovalMethod,
        remoteIp: String? = nil, lastSeenAtMs: Int64? = nil, lastSeenReason: String? = nil, label: String? = nil,
        nodeSurface: NodeSurfaceApproval? = nil
    ) {
        self.deviceId = deviceId
        self.publicKey = publicKey
        self.displayName = displayName
        self.platform = platform
        self.deviceFamily = deviceFamily
        self.clientId = clientId
        self.clientMode = clientMode
        self.roles = roles
        self.scopes = scopes
        self.createdAtMs = createdAtMs
        self.approvedAtMs = approvedAtMs
        self.approvedVia = approvedVia
        self.remoteIp = remoteIp
        self.lastSeenAtMs = lastSeenAtMs
        self.lastSeenReason = lastSeenReason
        self.label = label
        self.nodeSurface = nodeSurface
    }

    /// Whether `role` is approved.
    public func hasRole(_ role: GatewayRole) -> Bool { roles.contains(role) }

    /// Whether the approved scopes satisfy every scope `role` asks for. Only operator
    /// connections carry scopes; an empty ask is always allowed.
    public func allowsScopes(_ scopes: [String], for role: GatewayRole) -> Bool {
        let asked = PairingScopes.grantable(for: role, from: scopes)
        if asked.isEmpty { return true }
        return PairingScopes.firstMissing(asked, granted: self.scopes) == nil
    }

    /// Marks the device as seen now, for `reason` (`connect`, or a presence trigger).
    public mutating func markSeen(atMs nowMs: Int64, reason: String) {
        lastSeenAtMs = nowMs
        lastSeenReason = reason
    }
}
