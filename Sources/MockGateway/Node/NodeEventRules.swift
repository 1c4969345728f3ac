import GatewayProtocol

/// What the Gateway knows when a `node.event` arrives: the facts its reply rules read.
public struct NodeEventFacts: Sendable, Hashable {
    /// How the Gateway generation answers `node.event`.
    public var replyStyle: GatewayProfile.NodeEventReply
    /// The session's device id (`nil`: a node without a device identity).
    public var deviceId: String?
    /// The pairing generation the session was admitted with (`nil`: none, the device was not
    /// paired as a node when it connected).
    public var sessionPairingGeneration: String?
    /// The pairing generation of the device's record now (`nil`: no node pairing any more).
    public var currentPairingGeneration: String?
    /// Whether the event arrived on the node's current routing connection.
    public var isCurrentConnection: Bool
    /// Whether the node declared `permissions.accessibility: true` (active-computer presence).
    public var accessibilityGranted: Bool
    /// When a beacon of this device and pairing generation was last persisted.
    public var lastPresencePersistMs: Int64?
    /// Whether the node has recorded input activity that a clear would remove.
    public var hasActivity: Bool
    /// The Gateway clock.
    public var nowMs: Int64

    /// Creates the facts.
    public init(replyStyle: GatewayProfile.NodeEventReply, deviceId: String?, sessionPairingGeneration: String?,
                currentPairingGeneration: String?, isCurrentConnection: Bool, accessibilityGranted: Bool,
                lastPresencePersistMs: Int64?, hasActivity: Bool, nowMs: Int64) {
        self.replyStyle = replyStyle
        self.deviceId = deviceId
        self.sessionPairingGeneration = sessionPairingGeneration
        self.currentPairingGeneration = currentPairingGeneration
        self.isCurrentConnection = isCurrentConnection
        self.accessibilityGranted = accessibilityGranted
        self.lastPresencePersistMs = lastPresencePersistMs
        self.hasActivity = hasActivity
        self.nowMs = nowMs
    }

    /// The presence throttle key: device id and pairing generation, so that a re-paired device
    /// starts a new window.
    public var presenceThrottleKey: String? {
        guard let deviceId, let sessionPairingGeneration else { return nil }
        return deviceId + "\u{0}" + sessionPairingGeneration
    }
}

/// Something the Gateway does because of a `node.event`, besides answering it.
public enum NodeEventEffect: Sendable, Hashable {
    /// Store the device's last-seen time and reason; the outcome decides the reply (see
    /// ``NodeEventRules/afterPersist(_:facts:event:)``).
    case persistLastSeen(deviceId: String, reason: String)
    /// Start the presence throttle window of `key` at `atMs` (only after a successful persist).
    case stampPresenceThrottle(key: String, atMs: Int64)
    /// Record the node's recent input activity and broadcast `node.presence` to read-scoped
    /// operators (``NodeActivity/updated(_:idleSeconds:saturated:nowMs:)``).
    case recordActivity(idleSeconds: Int, saturated: Bool)
    /// Forget the node's input activity and broadcast the cleared `node.presence`.
    case clearActivity
    /// Store a push registration (`push.apns.register`), for the Gateway's own checks.
    case registerPush(payload: JSONValue)
}

/// A node's latest reported input activity (`node.presence.activity`), on the Gateway clock.
///
/// Upstream `NodeRegistry.updatePresenceActivity` (src/gateway/node-registry.ts; the same rule
/// in every stored version): `lastActiveAtMs = max(0, observed -
/// idleSeconds*1000)`, never moving backwards, and left alone by a saturated report once a value
/// exists; `presenceUpdatedAtMs = observed`. The `node.presence` broadcast carries `{nodeId,
/// lastActiveAtMs, presenceUpdatedAtMs}`, and `{nodeId, lastActiveAtMs:null,
/// presenceUpdatedAtMs:null}` after a clear (src/gateway/server-node-events.ts).
public struct NodeActivity: Sendable, Hashable {
    /// Seconds since the last physical input, as reported.
    public var idleSeconds: Int
    /// Whether the idle counter saturated (the real idle time is longer).
    public var saturated: Bool
    /// When the Gateway received the report (`presenceUpdatedAtMs`).
    public var reportedAtMs: Int64
    /// When the user was last active (`lastActiveAtMs`).
    public var lastActiveAtMs: Int64

    /// A first report: `lastActiveAtMs` is `reportedAtMs - idleSeconds` (never below 0).
    public init(idleSeconds: Int, saturated: Bool, reportedAtMs: Int64) {
        self.init(idleSeconds: idleSeconds, saturated: saturated, reportedAtMs: reportedAtMs,
                  lastActiveAtMs: Self.activeAtMs(idleSeconds: idleSeconds, reportedAtMs: reportedAtMs))
    }

    /// A record with every member given.
    public init(idleSeconds: Int, saturated: Bool, reportedAtMs: Int64, lastActiveAtMs: Int64) {
        self.idleSeconds = idleSeconds
        self.saturated = saturated
        self.reportedAtMs = reportedAtMs
        self.lastActiveAtMs = lastActiveAtMs
    }

    /// The record after a report of `idleSeconds` at `nowMs` on top of `previous`: the last-active
    /// time never moves backwards, and a saturated report keeps the one already known.
    public static func updated(_ previous: NodeActivity?, idleSeconds: Int, saturated: Bool, nowMs: Int64) -> NodeActivity {
        let reported = activeAtMs(idleSeconds: idleSeconds, reportedAtMs: nowMs)
        let lastActive: Int64
        if let previous {
            lastActive = saturated ? previous.lastActiveAtMs : max(previous.lastActiveAtMs, reported)
        } else {
            lastActive = reported
        }
        return NodeActivity(idleSeconds: idleSeconds, saturated: saturated, reportedAtMs: nowMs, lastActiveAtMs: lastActive)
    }

    /// The `node.presence` payload for this record.
    public func presencePayload(nodeId: String) -> JSONValue {
        ["nodeId": .string(nodeId), "lastActiveAtMs": .int(lastActiveAtMs), "presenceUpdatedAtMs": .int(reportedAtMs)]
    }

    /// The `node.presence` payload after a clear.
    public static func clearedPresencePayload(nodeId: String) -> JSONValue {
        ["nodeId": .string(nodeId), "lastActiveAtMs": .null, "presenceUpdatedAtMs": .null]
    }

    private static func activeAtMs(idleSeconds: Int, reportedAtMs: Int64) -> Int64 {
        max(0, reportedAtMs - Int64(idleSeconds) * 1_000)
    }
}

/// The reply to a `node.event` and what to do.
public struct NodeEventDecision: Sendable, Hashable {
    /// The `result` payload.
    public var reply: JSONValue
    /// The handled flag, if the event has a handler.
    public var handledFlag: Bool?
    /// The reason, if the event has a handler.
    public var reason: String?
    /// The effects, in order. A `persistLastSeen` comes last: the reply is final only after
    /// ``NodeEventRules/afterPersist(_:facts:event:)``.
    public var effects: [NodeEventEffect]

    /// Creates a decision.
    public init(reply: JSONValue, handled: Bool?, reason: String?, effects: [NodeEventEffect] = []) {
        self.reply = reply
        self.handledFlag = handled
        self.reason = reason
        self.effects = effects
    }

    /// Whether the reply waits for a persist.
    public var awaitsPersist: Bool {
        effects.contains { if case .persistLastSeen = $0 { true } else { false } }
    }
}

/// The `node.event` reply rules of each Gateway generation, as one pure function of the event
/// and the facts; `GatewayCore` only applies the effects.
///
/// Upstream (src/gateway/server-node-events.ts; the `node.event` handler answers
/// `result ?? {ok:true}`, src/gateway/server-methods/nodes.ts):
/// * every event is first gated by the session's currency: a stale pairing generation answers
///   `pairing_changed`;
/// * `node.presence.alive`: `invalid_payload` → `missing_device_identity` → `pairing_changed`
///   (no generation) → `throttled` (60 s per device and pairing generation) → persist, then
///   `persisted`, or `pairing_changed` when the record vanished, or `persist_failed`; the
///   throttle window is stamped only after a successful persist;
/// * `node.presence.activity` (macOS): payload `{idleSeconds 0...2592000, saturated?}` (closed,
///   packages/gateway-protocol/src/schema/nodes.ts) or `{action:"clear"}`
///   (the handler's `"action" in obj`; the union is not in the stored schema, so exactly that
///   object is accepted): `invalid_payload`; clear → `stale_connection` (not the current
///   connection) / `cleared` / `already_clear`; update → `permission_required` unless the
///   current connection declared `permissions.accessibility: true` (the upstream handler), then
///   `updated`;
/// * `updated` and `cleared` broadcast `node.presence` to operators with `operator.read`
///   (`ctx.broadcast("node.presence", …)`; `docs/gateway/protocol.md` "Presence" of the
///   `openclaw/docs` mirror); `already_clear`, refusals and every `node.presence.alive` outcome
///   broadcast nothing (neither `node.presence` nor the system `presence` event);
/// * other events: no result, so `{ok:true}`.
///
/// Older Gateways (``GatewayProfile/NodeEventReply/bareOK``) have no presence handlers: a bare
/// `{ok:true}` and nothing recorded.
public enum NodeEventRules {
    /// The presence persist interval (60 s, `NODE_PRESENCE_PERSIST_MIN_INTERVAL_MS`).
    public static let presenceThrottleMs: Int64 = 60_000
    /// The largest `idleSeconds` (30 days).
    public static let maximumIdleSeconds = 2_592_000
    /// The presence triggers a client may send; anything else normalises to `background`
    /// (`normalizeNodePresenceAliveReason`, src/shared/node-presence.ts).
    public static let presenceTriggers: Set<String> = [
        "background", "silent_push", "bg_app_refresh", "significant_location", "manual", "connect",
    ]

    /// Decides the reply to `event` with `payload` (parsed `payloadJSON`, `nil` when absent or
    /// not JSON).
    public static func decide(event: String, payload: JSONValue?, facts: NodeEventFacts) -> NodeEventDecision {
        guard facts.replyStyle == .structured else { return bare(event: event, payload: payload) }
        if facts.sessionPairingGeneration != nil, facts.sessionPairingGeneration != facts.currentPairingGeneration {
            return structured(event, handled: false, reason: "pairing_changed")
        }
        switch event {
        case NodeEventName.presenceAlive.rawValue: return alive(payload: payload, facts: facts)
        case NodeEventName.presenceActivity.rawValue: return activity(payload: payload, facts: facts)
        case NodeEventName.pushAPNsRegister.rawValue:
            let effects: [NodeEventEffect] = payload?.objectValue != nil ? [.registerPush(payload: payload ?? .null)] : []
            return NodeEventDecision(reply: ["ok": true], handled: nil, reason: nil, effects: effects)
        default:
            return NodeEventDecision(reply: ["ok": true], handled: nil, reason: nil)
        }
    }

    /// The final reply to a beacon once its persist ran: `stored` is `nil` when the record
    /// vanished, otherwise whether the store succeeded.
    public static func afterPersist(_ stored: Bool?, facts: NodeEventFacts, event: String = NodeEventName.presenceAlive.rawValue)
        -> NodeEventDecision
    {
        switch stored {
        case nil: return structured(event, handled: false, reason: "pairing_changed")
        case false?: return structured(event, handled: false, reason: "persist_failed")
        case true?:
            let effects = facts.presenceThrottleKey.map { [NodeEventEffect.stampPresenceThrottle(key: $0, atMs: facts.nowMs)] } ?? []
            return structured(event, handled: true, reason: "persisted", effects: effects)
        }
    }

    /// The normalised trigger of a beacon payload.
    public static func normalizedTrigger(_ payload: JSONValue?) -> String {
        guard let raw = payload?["trigger"]?.stringValue?.lowercased(), presenceTriggers.contains(raw) else { return "background" }
        return raw
    }

    // MARK: - Handlers

    private static func alive(payload: JSONValue?, facts: NodeEventFacts) -> NodeEventDecision {
        let event = NodeEventName.presenceAlive.rawValue
        guard payload?.objectValue != nil else { return structured(event, handled: false, reason: "invalid_payload") }
        guard let deviceId = facts.deviceId, !deviceId.isEmpty else {
            return structured(event, handled: false, reason: "missing_device_identity")
        }
        guard facts.sessionPairingGeneration != nil else { return structured(event, handled: false, reason: "pairing_changed") }
        if let last = facts.lastPresencePersistMs, facts.nowMs - last < presenceThrottleMs {
            return structured(event, handled: true, reason: "throttled")
        }
        return NodeEventDecision(reply: .null, handled: nil, reason: nil,
                                 effects: [.persistLastSeen(deviceId: deviceId, reason: normalizedTrigger(payload))])
    }

    private static func activity(payload: JSONValue?, facts: NodeEventFacts) -> NodeEventDecision {
        let event = NodeEventName.presenceActivity.rawValue
        guard let object = payload?.objectValue else { return structured(event, handled: false, reason: "invalid_payload") }
        if object.keys.contains("action") {
            guard object.count == 1, object["action"]?.stringValue == "clear" else {
                return structured(event, handled: false, reason: "invalid_payload")
            }
            guard facts.isCurrentConnection else { return structured(event, handled: false, reason: "stale_connection") }
            return facts.hasActivity
                ? structured(event, handled: true, reason: "cleared", effects: [.clearActivity])
                : structured(event, handled: true, reason: "already_clear")
        }
        guard Set(object.keys).isSubset(of: ["idleSeconds", "saturated"]),
              let idle = object["idleSeconds"]?.int64Value, (0...Int64(maximumIdleSeconds)).contains(idle),
              object["saturated"].map({ $0.boolValue != nil }) ?? true
        else {
            return structured(event, handled: false, reason: "invalid_payload")
        }
        guard facts.isCurrentConnection, facts.accessibilityGranted else {
            return structured(event, handled: false, reason: "permission_required")
        }
        return structured(event, handled: true, reason: "updated",
                          effects: [.recordActivity(idleSeconds: Int(idle), saturated: object["saturated"]?.boolValue == true)])
    }

    private static func structured(_ event: String, handled: Bool, reason: String, effects: [NodeEventEffect] = [])
        -> NodeEventDecision
    {
        NodeEventDecision(reply: ["ok": true, "event": .string(event), "handled": .bool(handled), "reason": .string(reason)],
                          handled: handled, reason: reason, effects: effects)
    }

    /// An older Gateway: `{ok:true}`; a beacon is logged as unhandled, nothing is recorded.
    private static func bare(event: String, payload: JSONValue?) -> NodeEventDecision {
        switch event {
        case NodeEventName.presenceAlive.rawValue:
            return NodeEventDecision(reply: ["ok": true], handled: false, reason: "unhandled")
        case NodeEventName.pushAPNsRegister.rawValue:
            let effects: [NodeEventEffect] = payload?.objectValue != nil ? [.registerPush(payload: payload ?? .null)] : []
            return NodeEventDecision(reply: ["ok": true], handled: nil, reason: nil, effects: effects)
        default:
            return NodeEventDecision(reply: ["ok": true], handled: nil, reason: nil)
        }
    }
}
