import Foundation
import GatewayProtocol

/// A foreground-only command the Gateway queued because the node refused it in the background;
/// the node pulls it (`node.pending.pull`) and acknowledges it (`node.pending.ack`) once it is in
/// the foreground again.
public struct PendingNodeAction: Sendable, Hashable {
    /// The action id (what `node.pending.ack` names).
    public var id: String
    /// The node it is queued for.
    public var nodeId: String
    /// The command.
    public var command: String
    /// The invoke's params as JSON text, if it had any.
    public var paramsJSON: String?
    /// The invoke's idempotency key: a retry with the same key does not queue a second action.
    public var idempotencyKey: String
    /// When it was queued (Gateway clock).
    public var enqueuedAtMs: Int64

    /// Creates an action.
    public init(id: String, nodeId: String, command: String, paramsJSON: String?, idempotencyKey: String, enqueuedAtMs: Int64) {
        self.id = id
        self.nodeId = nodeId
        self.command = command
        self.paramsJSON = paramsJSON
        self.idempotencyKey = idempotencyKey
        self.enqueuedAtMs = enqueuedAtMs
    }

    /// The `node.pending.pull` item: `{id, command, paramsJSON|null, enqueuedAtMs}`.
    var pullJSON: JSONValue {
        ["id": .string(id), "command": .string(command), "paramsJSON": paramsJSON.map(JSONValue.string) ?? .null,
         "enqueuedAtMs": .int(enqueuedAtMs)]
    }
}

/// The per-node queue of foreground-only actions (the queue of upstream's `node.invoke` handler,
/// `src/gateway/server-methods/nodes.ts@009f87da`, read for facts: `shouldQueueAsPendingForegroundAction`,
/// `enqueuePendingNodeAction`, `prunePendingNodeActions`, `ackPendingNodeActions`, and the
/// `node.pending.pull` / `node.pending.ack` handlers):
///
/// * only an iOS or iPadOS node (`client.platform` starting with `ios`/`ipados`, any case) gets
///   queued actions, only for a foreground-restricted command (`camera.*`, `screen.*`, `talk.*`
///   and plugin foreground commands), and only when the node's error code is
///   `NODE_BACKGROUND_UNAVAILABLE` or its message contains `BACKGROUND_UNAVAILABLE`;
/// * an entry lives 10 minutes, a node holds at most 64 (the oldest go first), and a second
///   refusal with the same idempotency key returns the entry already queued;
/// * a pull lists the live entries whose command the node still declares; an ack removes the
///   given ids and reports them all back (trimmed, unique) with the number left.
///
/// Unconfirmed, so chosen to be tolerant: `canvas.*` counts as foreground-restricted here
/// (upstream's canvas is a plugin whose foreground flag was not found; the reference rules and
/// INV-007 treat it as foreground-only), and an empty or missing `ids` list is accepted by
/// `node.pending.ack` (upstream's handler copes with it; its schema was not found).
struct PendingActionQueue: Sendable {
    /// How long an action stays queued.
    static let ttlMs: Int64 = 10 * 60_000
    /// At most this many actions per node.
    static let maximumPerNode = 64

    private(set) var byNode: [String: [PendingNodeAction]] = [:]

    /// Whether a node's refusal of `command` makes it a queued action.
    static func shouldQueue(platform: String, command: String, errorCode: String?, errorMessage: String?) -> Bool {
        let platform = platform.lowercased()
        guard platform.hasPrefix("ios") || platform.hasPrefix("ipados") else { return false }
        guard isForegroundRestricted(command) else { return false }
        let code = (errorCode ?? "").trimmingCharacters(in: .whitespaces).uppercased()
        let message = (errorMessage ?? "").uppercased()
        return code == "NODE_BACKGROUND_UNAVAILABLE" || message.contains("BACKGROUND_UNAVAILABLE")
    }

    /// The foreground-restricted command families.
    static func isForegroundRestricted(_ command: String) -> Bool {
        ["camera.", "screen.", "talk.", "canvas."].contains { command.hasPrefix($0) }
    }

    /// The live entries of `nodeId` (expired ones are dropped).
    mutating func live(nodeId: String, nowMs: Int64) -> [PendingNodeAction] {
        let live = (byNode[nodeId] ?? []).filter { $0.enqueuedAtMs >= nowMs - Self.ttlMs }
        byNode[nodeId] = live.isEmpty ? nil : live
        return live
    }

    /// Queues an action, or returns the one already queued with the same idempotency key.
    mutating func enqueue(nodeId: String, command: String, paramsJSON: String?, idempotencyKey: String,
                          nowMs: Int64, newId: () -> String) -> PendingNodeAction {
        var queue = live(nodeId: nodeId, nowMs: nowMs)
        if let existing = queue.first(where: { $0.idempotencyKey == idempotencyKey }) { return existing }
        let action = PendingNodeAction(id: newId(), nodeId: nodeId, command: command, paramsJSON: paramsJSON,
                                       idempotencyKey: idempotencyKey, enqueuedAtMs: nowMs)
        queue.append(action)
        if queue.count > Self.maximumPerNode { queue.removeFirst(queue.count - Self.maximumPerNode) }
        byNode[nodeId] = queue
        return action
    }

    /// What `node.pending.pull` lists: the live entries whose command `isAllowed` admits (the node
    /// command policy at pull time: declared by the node and allowed; the others are dropped).
    mutating func pull(nodeId: String, nowMs: Int64, isAllowed: (String) -> Bool) -> [PendingNodeAction] {
        let allowed = live(nodeId: nodeId, nowMs: nowMs).filter { isAllowed($0.command) }
        byNode[nodeId] = allowed.isEmpty ? nil : allowed
        return allowed
    }

    /// `node.pending.ack`: removes `ids`.
    /// - Returns: the ids as acknowledged (trimmed, empty ones dropped, unique, in order) and the
    ///   number of actions left.
    mutating func ack(nodeId: String, ids: [String], nowMs: Int64) -> (ackedIds: [String], remaining: Int) {
        var seen: Set<String> = []
        let acked = ids.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && seen.insert($0).inserted }
        let remaining = live(nodeId: nodeId, nowMs: nowMs).filter { !seen.contains($0.id) }
        byNode[nodeId] = remaining.isEmpty ? nil : remaining
        return (acked, remaining.count)
    }

    /// Forgets a node's actions (its pairing was removed).
    mutating func remove(nodeId: String) { byNode[nodeId] = nil }
}
