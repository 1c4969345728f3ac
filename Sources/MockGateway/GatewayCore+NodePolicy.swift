import Foundation
import GatewayProtocol

/// The Gateway's node-command-policy state: the configured policy, a policy set at run time
/// (the console's `node-commands`, `Gateway.setNodeCommandPolicy(_:)`) and the `talk.event`
/// sequence numbers.
struct NodePolicyState: Sendable {
    /// ``GatewayConfiguration/nodeCommands``.
    var configured: NodeCommandPolicy
    /// Replaces ``configured`` once set.
    var policyOverride: NodeCommandPolicy?
    /// The last `talkEvent.seq` per talk session id.
    var talkEventSeq: [String: Int] = [:]
}

extension NodeState {
    /// The node command policy in force.
    var commandPolicy: NodeCommandPolicy {
        policy.policyOverride ?? policy.configured
    }

    /// What the policy reads about the connected node `nodeId`, `nil` when it is not connected.
    func policyNode(_ nodeId: String) -> NodeCommandPolicy.Node? {
        guard let node = registry.nodes[nodeId] else { return nil }
        return NodeCommandPolicy.Node(nodeId: nodeId, platform: node.platform, deviceFamily: node.deviceFamily,
                                      caps: node.caps, declaredCommands: surfaces.latest[nodeId]?.declared ?? node.commands,
                                      effectiveCommands: node.commands)
    }

    /// The policy's refusal of `command` on the connected node `nodeId` at dispatch, `nil` when
    /// it may be sent (or the node is not connected: that answer is the caller's).
    func commandRefusal(nodeId: String, command: String) -> ErrorShape? {
        guard let node = policyNode(nodeId) else { return nil }
        return commandPolicy.refusal(command: command, node: node)
    }
}

extension GatewayCore {
    /// The refusals `node.invoke` gives before it looks for the node: private controls,
    /// `system.execApprovals.*`, and admin-only commands for a caller without `operator.admin`.
    func nodeInvokePreflight(_ call: MethodCall, command: String) -> ErrorShape? {
        if let refusal = NodeCommandPolicy.preflight(command: command) { return refusal }
        if NodeCommandPolicy.requiresAdmin(command), !Set(wire: call.session.scopes).contains(.admin) {
            return OperatorMethodPolicy.missingScopeError(.admin, requiredScopes: [.admin], style: profile.missingScopeStyle)
        }
        return nil
    }
}

/// The `talk.event` payload mirrored from a `talk.ptt.*` invoke: `{nodeId, command, talkEvent{id,
/// type, sessionId, captureId, seq, timestamp, mode, transport, brain, final, payload{nodeId,
/// command, status?, transcript?}}}` (upstream `emitTalkPttNodeEvent`,
/// src/gateway/server-methods/nodes.invoke-talk-events.ts).
struct TalkPushToTalkEvent: Sendable, Hashable {
    /// Upstream keeps the sequence of at most this many talk sessions.
    static let maxTrackedSessions = 2048

    var nodeId: String
    var command: String
    var type: String
    var captureId: String
    var seq: Int
    var timestampMs: Int64
    var status: String?
    var transcript: String?

    /// `capture.started|stopped|cancelled|once` for a `talk.ptt.*` command, `nil` otherwise.
    static func type(forCommand command: String) -> String? {
        switch NodeCommandName(rawValue: command) {
        case .talkPttStart: "capture.started"
        case .talkPttStop: "capture.stopped"
        case .talkPttCancel: "capture.cancelled"
        case .talkPttOnce: "capture.once"
        default: nil
        }
    }

    /// `node:<nodeId>:talk:<captureId>`.
    static func sessionId(nodeId: String, captureId: String) -> String {
        "node:\(nodeId):talk:\(captureId)"
    }

    var payload: JSONValue {
        let sessionId = Self.sessionId(nodeId: nodeId, captureId: captureId)
        var inner: [String: JSONValue] = ["nodeId": .string(nodeId), "command": .string(command)]
        if let status = status.flatMap({ $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }) {
            inner["status"] = .string(status)
        }
        if let transcript = transcript.flatMap({ $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }) {
            inner["transcript"] = .string(transcript)
        }
        let talkEvent: JSONValue = [
            "id": .string("\(sessionId):\(seq)"), "type": .string(type), "sessionId": .string(sessionId),
            "captureId": .string(captureId), "seq": .int(Int64(seq)), "timestamp": .string(Self.isoTimestamp(timestampMs)),
            "mode": "stt-tts", "transport": "managed-room", "brain": "agent-consult",
            "final": .bool(command != NodeCommandName.talkPttStart.rawValue), "payload": .object(inner),
        ]
        return ["nodeId": .string(nodeId), "command": .string(command), "talkEvent": talkEvent]
    }

    /// `Date.toISOString()`: UTC with milliseconds.
    static func isoTimestamp(_ ms: Int64) -> String { ChatStore.isoTimestamp(ms) }
}

extension Gateway {
    /// The node command policy in force (docs/protocol.md §6.7).
    public func nodeCommandPolicy() async -> NodeCommandPolicy {
        await core.nodeState.commandPolicy
    }

    /// Replaces the node command policy (`gateway.nodes.commands.allow` / `deny`) from now on.
    public func setNodeCommandPolicy(_ policy: NodeCommandPolicy) async {
        recordOperatorAction("node command policy: allow [\(policy.allow.joined(separator: ", "))], deny [\(policy.deny.joined(separator: ", "))]")
        await core.setNodeCommandPolicy(policy)
    }

    /// Why the Gateway would refuse to send `command` to `nodeId` (the checks of `node.invoke`
    /// for an administrator), `nil` when it would send it or the node is not connected.
    public func nodeCommandRefusal(nodeId: String, command: String) async -> ErrorShape? {
        await core.consoleNodeCommandRefusal(nodeId: nodeId, command: command)
    }
}

extension GatewayCore {
    func setNodeCommandPolicy(_ policy: NodeCommandPolicy) {
        nodeState.policy.policyOverride = policy
    }

    func consoleNodeCommandRefusal(nodeId: String, command: String) -> ErrorShape? {
        NodeCommandPolicy.preflight(command: command) ?? nodeState.commandRefusal(nodeId: nodeId, command: command)
    }
}
