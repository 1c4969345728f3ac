import Foundation

/// The approved command surface of each node and the node pairing requests that widen it
/// (docs/protocol.md §6.7, "Surface approval").
///
/// On every node connect the Gateway reconciles the declared surface with the approved one
/// (``reconcile(nodeId:declared:allowlist:metadata:nowMs:newRequestId:)``): the declared
/// commands are trimmed, de-duplicated and cut to the allowlist; a node first seen has its
/// surface approved with its device; a known node whose declared surface holds a command
/// outside its approved surface is still admitted, but only its approved ∩ allowlisted commands
/// are effective, and the widened surface waits in a node pairing request. Approving the request
/// makes its commands the node's approved surface; rejecting it drops the request and keeps the
/// old one. Requests expire after ``pendingTimeToLiveMs``.
///
/// One request per node, and what a reconnect does to it while it waits:
/// - the same surface (the same set of commands and caps) keeps the request: its id stays,
///   `created: false`, nothing is announced (with changed metadata the request takes the new
///   metadata and a new `ts`);
/// - another widened surface **supersedes** it: the old request is dropped (reported in
///   ``Reconciliation/superseded``, announced `node.pair.resolved` `rejected`) and a new one with
///   a new id opens (`created: true`, `node.pair.requested`);
/// - a surface within the approved one clears it (reported in ``Reconciliation/superseded`` too,
///   `node.pair.resolved` `rejected`): nothing is left to approve.
///
/// Upstream (read for facts, nothing copied): `reconcileNodePairingOnConnect` in
/// src/gateway/node-connect-reconcile.ts, `requestNodePairing` / `reusePendingNodePairingForReconnect` /
/// `finalizeNodePairingCleanupClaim` / `approveNodePairing` / `rejectNodePairing` /
/// `listNodePairing` in src/infra/node-pairing.ts, `reconcilePendingPairingRequests` in
/// src/infra/pairing-files.ts, the reapproval coordinator in
/// src/gateway/node-reapproval-coordinator.ts and the connect handler's
/// `broadcastNodePairingResult` (docs/fidelity.md cites the revisions). Difference: upstream
/// also holds a first-time node's whole surface for approval; the fake approves it with the device.
///
/// A pure value: no clock, no randomness; the caller passes the time and the new request id.
public struct NodeSurfaceApprovals: Sendable, Hashable {
    /// `PENDING_TTL_MS`: a pending request older than this is dropped.
    public static let pendingTimeToLiveMs: Int64 = 5 * 60 * 1000

    /// What a node reported about itself when it asked for its surface.
    public struct Metadata: Sendable, Hashable {
        /// `client.displayName`.
        public var displayName: String?
        /// `client.platform`.
        public var platform: String?
        /// `client.version`.
        public var version: String?
        /// `client.deviceFamily`.
        public var deviceFamily: String?
        /// `client.modelIdentifier`.
        public var modelIdentifier: String?
        /// `connect.caps`.
        public var caps: [String]
        /// The address the node connected from.
        public var remoteIp: String?

        /// Metadata with these fields.
        public init(displayName: String? = nil, platform: String? = nil, version: String? = nil, deviceFamily: String? = nil,
                    modelIdentifier: String? = nil, caps: [String] = [], remoteIp: String? = nil) {
            self.displayName = displayName
            self.platform = platform
            self.version = version
            self.deviceFamily = deviceFamily
            self.modelIdentifier = modelIdentifier
            self.caps = caps
            self.remoteIp = remoteIp
        }

        /// These metadata with each missing field taken from `older` (upstream keeps what a
        /// reconnect leaves out when it refreshes or replaces a request).
        public func filling(from older: Metadata) -> Metadata {
            Metadata(displayName: displayName ?? older.displayName, platform: platform ?? older.platform,
                     version: version ?? older.version, deviceFamily: deviceFamily ?? older.deviceFamily,
                     modelIdentifier: modelIdentifier ?? older.modelIdentifier, caps: caps, remoteIp: remoteIp ?? older.remoteIp)
        }
    }

    /// A node pairing request waiting for an operator (`node.pair.list` `pending[]`).
    public struct PendingRequest: Sendable, Hashable {
        /// The request id.
        public var requestId: String
        /// The node id.
        public var nodeId: String
        /// The node's metadata at the connect that opened the request.
        public var metadata: Metadata
        /// The surface to approve: the declared ∩ allowlisted commands.
        public var commands: [String]
        /// `true`: the node already has an approved surface (a surface update).
        public var isRepair: Bool
        /// When the request was opened (ms since the epoch).
        public var ts: Int64
    }

    /// A node's approved surface (`node.pair.list` `paired[]`).
    public struct PairedNode: Sendable, Hashable {
        /// The node id.
        public var nodeId: String
        /// The approved commands.
        public var commands: [String]
        /// When the node was first approved.
        public var createdAtMs: Int64
        /// When its current surface was approved.
        public var approvedAtMs: Int64
    }

    /// The outcome of a connect's reconciliation.
    public struct Reconciliation: Sendable, Hashable {
        /// The declared commands, trimmed, de-duplicated and cut to the allowlist.
        public var declared: [String]
        /// The commands in effect: the declared ones, or the approved ∩ allowlisted ones while
        /// a wider surface waits.
        public var effective: [String]
        /// Declared commands not in effect (waiting for approval).
        public var withheld: [String]
        /// The request waiting for the widened surface, `nil` when nothing waits.
        public var pending: PendingRequest?
        /// Whether this connect opened ``pending`` (announce it with `node.pair.requested`).
        public var created: Bool
        /// Requests of this node this connect dropped: superseded by a different widened
        /// surface, or cleared by a surface within the approved one (announce each with
        /// `node.pair.resolved` `rejected`, before any `node.pair.requested`).
        public var superseded: [PendingRequest] = []
        /// Whether this connect wrote a request (opened one, or refreshed one's metadata): what
        /// the per-node reapproval limit counts.
        public var wroteRequest = false
    }

    /// Approved surfaces by node id.
    public private(set) var paired: [String: PairedNode] = [:]
    /// Pending requests by request id.
    public private(set) var pendingById: [String: PendingRequest] = [:]
    /// The latest reconciliation of each node (its declared, effective and withheld commands).
    public private(set) var latest: [String: Reconciliation] = [:]

    /// No node known.
    public init() {}

    /// Trimmed, non-empty, first occurrence kept, and on `allowlist`.
    public static func normalize(_ commands: [String], allowlist: Set<String>) -> [String] {
        var seen = Set<String>()
        var result: [String] = []
        for raw in commands {
            let command = raw.trimmingWhitespacesAndNewlines()
            guard !command.isEmpty, allowlist.contains(command), seen.insert(command).inserted else { continue }
            result.append(command)
        }
        return result
    }

    /// Drops the requests older than ``pendingTimeToLiveMs``.
    public mutating func prune(nowMs: Int64) {
        pendingById = pendingById.filter { nowMs - $0.value.ts <= Self.pendingTimeToLiveMs }
    }

    /// Reconciles the surface `nodeId` declares at connect with its approved one (see the type's
    /// documentation). `newRequestId` is called only when a request is opened. `mayWriteRequest`
    /// is asked only when a request would be written, that is opened or refreshed with changed
    /// metadata (not when a waiting one is kept as it is): upstream's per-node reapproval rate
    /// limit. When it says no, the node is admitted with its approved commands in effect and the
    /// requests already waiting stay as they are (nothing refreshed, superseded or announced).
    /// ``Reconciliation/wroteRequest`` says whether a write counted.
    public mutating func reconcile(nodeId: String, declared rawDeclared: [String], allowlist: Set<String>,
                                   metadata: Metadata, nowMs: Int64, mayWriteRequest: () -> Bool = { true },
                                   newRequestId: () -> String) -> Reconciliation {
        let result = decide(nodeId: nodeId, declared: rawDeclared, allowlist: allowlist, metadata: metadata, nowMs: nowMs,
                            mayWriteRequest: mayWriteRequest, newRequestId: newRequestId)
        latest[nodeId] = result
        return result
    }

    private mutating func decide(nodeId: String, declared rawDeclared: [String], allowlist: Set<String>,
                                 metadata: Metadata, nowMs: Int64, mayWriteRequest: () -> Bool,
                                 newRequestId: () -> String) -> Reconciliation {
        prune(nowMs: nowMs)
        let declared = Self.normalize(rawDeclared, allowlist: allowlist)
        guard let node = paired[nodeId] else {
            paired[nodeId] = PairedNode(nodeId: nodeId, commands: declared, createdAtMs: nowMs, approvedAtMs: nowMs)
            return Reconciliation(declared: declared, effective: declared, withheld: [], pending: nil, created: false)
        }
        let approved = Self.normalize(node.commands, allowlist: allowlist)
        let waiting = pendingById.values.filter { $0.nodeId == nodeId }
            .sorted { $0.ts != $1.ts ? $0.ts > $1.ts : $0.requestId < $1.requestId }
        guard declared.contains(where: { !approved.contains($0) }) else {
            // Nothing widened: whatever waited for this node is stale (upstream's cleanup claim).
            for request in waiting { pendingById.removeValue(forKey: request.requestId) }
            return Reconciliation(declared: declared, effective: declared, withheld: [], pending: nil, created: false,
                                  superseded: waiting)
        }
        let withheld = declared.filter { !approved.contains($0) }
        if waiting.count == 1, var existing = waiting.first, Self.sameSurface(existing, commands: declared, caps: metadata.caps) {
            let refreshed = metadata.filling(from: existing.metadata)
            var wrote = false
            if existing.metadata != refreshed, mayWriteRequest() {
                // A metadata-only change refreshes the one request: same id, new metadata and ts.
                existing.metadata = refreshed
                existing.ts = nowMs
                pendingById[existing.requestId] = existing
                wrote = true
            }
            return Reconciliation(declared: declared, effective: approved, withheld: withheld, pending: existing, created: false,
                                  wroteRequest: wrote)
        }
        guard mayWriteRequest() else {
            return Reconciliation(declared: declared, effective: approved, withheld: withheld, pending: nil, created: false)
        }
        for request in waiting { pendingById.removeValue(forKey: request.requestId) }
        let request = PendingRequest(requestId: newRequestId(), nodeId: nodeId,
                                     metadata: waiting.first.map { metadata.filling(from: $0.metadata) } ?? metadata, commands: declared,
                                     isRepair: true, ts: nowMs)
        pendingById[request.requestId] = request
        return Reconciliation(declared: declared, effective: approved, withheld: withheld, pending: request, created: true,
                              superseded: waiting, wroteRequest: true)
    }

    /// Whether `request` asks for the same approval surface: the same set of commands and of caps
    /// (order and repeats aside; upstream's `samePendingApprovalSurface`).
    static func sameSurface(_ request: PendingRequest, commands: [String], caps: [String]) -> Bool {
        Set(request.commands) == Set(commands) && Self.capSet(request.metadata.caps) == Self.capSet(caps)
    }

    private static func capSet(_ caps: [String]) -> Set<String> {
        Set(caps.map { $0.trimmingWhitespacesAndNewlines() }.filter { !$0.isEmpty })
    }

    /// Pending requests newest first.
    public func pendingRequests(nowMs: Int64) -> [PendingRequest] {
        pendingById.values.filter { nowMs - $0.ts <= Self.pendingTimeToLiveMs }
            .sorted { $0.ts != $1.ts ? $0.ts > $1.ts : $0.requestId < $1.requestId }
    }

    /// Approved surfaces, most recently approved first.
    public var pairedNodes: [PairedNode] {
        paired.values.sorted { $0.approvedAtMs != $1.approvedAtMs ? $0.approvedAtMs > $1.approvedAtMs : $0.nodeId < $1.nodeId }
    }

    /// The request `requestId` if it is still pending.
    public func pending(_ requestId: String, nowMs: Int64) -> PendingRequest? {
        guard let request = pendingById[requestId], nowMs - request.ts <= Self.pendingTimeToLiveMs else { return nil }
        return request
    }

    /// Approves `requestId`: its commands become the node's approved surface. `nil` when no such
    /// request is pending.
    public mutating func approve(_ requestId: String, nowMs: Int64) -> (request: PendingRequest, node: PairedNode)? {
        prune(nowMs: nowMs)
        guard let request = pendingById.removeValue(forKey: requestId) else { return nil }
        let node = PairedNode(nodeId: request.nodeId, commands: request.commands,
                              createdAtMs: paired[request.nodeId]?.createdAtMs ?? nowMs, approvedAtMs: nowMs)
        paired[request.nodeId] = node
        return (request, node)
    }

    /// Replaces the approved surface of `nodeId` with `commands` (trimmed, de-duplicated), as an
    /// operator's earlier approval would have left it; the requests waiting for the node stay.
    public mutating func setApproved(nodeId: String, commands: [String], nowMs: Int64) -> PairedNode {
        var seen = Set<String>()
        let cleaned = commands.map { $0.trimmingWhitespacesAndNewlines() }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
        let node = PairedNode(nodeId: nodeId, commands: cleaned, createdAtMs: paired[nodeId]?.createdAtMs ?? nowMs,
                              approvedAtMs: nowMs)
        paired[nodeId] = node
        return node
    }

    /// Rejects `requestId`: the request is dropped, the approved surface stays. `nil` when no
    /// such request is pending.
    public mutating func reject(_ requestId: String, nowMs: Int64) -> PendingRequest? {
        prune(nowMs: nowMs)
        return pendingById.removeValue(forKey: requestId)
    }

    /// The approved commands of `nodeId` cut to `allowlist` (the effective surface when the node
    /// declares more), `nil` for a node never seen.
    public func approvedCommands(nodeId: String, allowlist: Set<String>) -> [String]? {
        paired[nodeId].map { Self.normalize($0.commands, allowlist: allowlist) }
    }
}
