import GatewayProtocol

/// The background alive beacon rules (docs/protocol.md §6.6): a beacon counts as recorded
/// only when the reply says `handled:true`; a recorded beacon is not repeated within 10 minutes;
/// anything else (a bare `{ok:true}`, `handled:false`, no reply) is sent again on the next wake.
public struct PresenceBeaconState: Sendable, Hashable {
    /// The triggers the Gateway schema knows; others normalise to `background`.
    public static let triggers: Set<String> = ["background", "silent_push", "bg_app_refresh", "significant_location", "manual", "connect"]

    /// When the last durable beacon was recorded (client clock).
    public private(set) var lastDurableAtMs: Int64?
    /// The last reply's `reason` (or `ok` for a bare reply).
    public private(set) var lastReason: String?
    /// Beacons sent so far.
    public private(set) var sentCount = 0

    /// Creates an empty state.
    public init() {}

    /// `trigger` if the schema knows it, else `background`.
    public static func normalizedTrigger(_ trigger: String) -> String {
        triggers.contains(trigger) ? trigger : "background"
    }

    /// Whether a wake at `nowMs` should send a beacon.
    func shouldSend(nowMs: Int64, configuration: ReferenceConfiguration) -> Bool {
        guard let last = lastDurableAtMs else { return true }
        if configuration.has(.beaconEveryWake) { return true }
        return nowMs - last >= ClientTimers.beaconMinimumIntervalMs
    }

    /// Whether a `node.event` reply makes the beacon durable: only `handled:true`.
    static func isDurable(reply: JSONValue?, configuration: ReferenceConfiguration) -> Bool {
        switch reply?["handled"]?.boolValue {
        case true?: return true
        case false?: return configuration.has(.handledFalseIsDurable)
        case nil: return configuration.has(.okTrueIsDurable)
        }
    }

    /// Notes a beacon that was sent.
    mutating func noteSent() { sentCount += 1 }

    /// Records the reply to a beacon sent at `nowMs` (`nil` when no reply arrived).
    mutating func record(reply: JSONValue?, nowMs: Int64, configuration: ReferenceConfiguration) {
        lastReason = reply?["reason"]?.stringValue ?? (reply == nil ? nil : "ok")
        if Self.isDurable(reply: reply, configuration: configuration) { lastDurableAtMs = nowMs }
    }

    /// The `payloadJSON` object of a beacon.
    /// Whether an APNs payload is a silent (background) push: `aps.content-available` is 1
    /// (docs/protocol.md §9.3); an alert without it is shown to the user and wakes nothing.
    static func isSilentPush(_ payload: JSONValue) -> Bool {
        payload["aps"]?["content-available"]?.int64Value == 1
    }

    static func payload(trigger: String, nowMs: Int64, persona: ClientPersona, pushTransport: String?) -> JSONValue {
        var object: [String: JSONValue] = [
            "trigger": .string(normalizedTrigger(trigger)), "sentAtMs": .int(nowMs),
            "displayName": .string(persona.displayName), "version": .string(persona.version),
            "platform": .string(persona.platform),
        ]
        if let family = persona.deviceFamily { object["deviceFamily"] = .string(family) }
        if let model = persona.modelIdentifier { object["modelIdentifier"] = .string(model) }
        if let pushTransport { object["pushTransport"] = .string(pushTransport) }
        return .object(object)
    }
}

/// A wish to receive push notifications, kept so that the client registers again with every
/// Gateway it switches to (docs/protocol.md §9.1).
public struct PushWish: Sendable, Hashable {
    /// `relay` or `direct`.
    public var transport: String
    /// `sandbox` or `production`.
    public var environment: String
    /// The `push.apns.register` payload. Relay registrations carry the Gateway's identity from
    /// `gateway.identity.get`; direct ones carry the APNs token.
    func payload(gatewayDeviceId: String?, ownDeviceId: String, configuration: ReferenceConfiguration) -> JSONValue {
        let topic = "ai.openclaw.ios"
        guard transport == "relay" else {
            return ["token": .string(String(repeating: "ab", count: 32)), "topic": .string(topic), "environment": .string(environment)]
        }
        let gatewayId = configuration.has(.pushWrongGatewayId) ? ownDeviceId : (gatewayDeviceId ?? "")
        return [
            "transport": "relay", "relayHandle": .string("relay-\(ownDeviceId.prefix(12))"),
            "sendGrant": .string("grant-\(ownDeviceId.suffix(12))"), "installationId": .string(String(ownDeviceId.prefix(16))),
            "topic": .string(topic), "environment": .string(environment), "distribution": "appstore",
            "tokenDebugSuffix": "abcd", "gatewayDeviceId": .string(gatewayId),
        ]
    }
}
