import Foundation

/// `connect.challenge` payload: sent first on every socket, without `seq` (docs/protocol.md §3.2).
public struct ConnectChallenge: Sendable, Hashable, Codable {
    /// A fresh UUID per connection; the client echoes it in `device.nonce` and signs it.
    public var nonce: String
    /// The Gateway clock in milliseconds; newest Swift uses it as `device.signedAt`.
    public var ts: Int

    /// Creates a challenge.
    public init(nonce: String, ts: Int) {
        self.nonce = nonce
        self.ts = ts
    }

    private enum CodingKeys: String, CodingKey { case nonce, ts }

    /// Decodes tolerantly: `ts` may be an integral floating-point number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nonce = try container.decode(String.self, forKey: .nonce)
        ts = try container.decodeLenientInt(forKey: .ts)
    }

    /// The event frame carrying this challenge (no `seq`).
    public var eventFrame: EventFrame {
        EventFrame(event: GatewayEventName.connectChallenge.rawValue, payload: json)
    }
}

/// `tick` payload (docs/protocol.md §11.1).
public struct TickEvent: Sendable, Hashable, Codable {
    /// The Gateway clock in milliseconds.
    public var ts: Int

    /// Creates a tick.
    public init(ts: Int) { self.ts = ts }
}

/// `shutdown` payload, sent before a planned stop; close 1012 follows (docs/protocol.md §11.4).
public struct ShutdownEvent: Sendable, Hashable, Codable {
    /// The default reason.
    public static let defaultReason = "gateway stopping"

    /// Why the Gateway stops.
    public var reason: String
    /// When a restart is expected, in milliseconds from now; `null` when unknown.
    public var restartExpectedMs: Int?

    /// Creates a shutdown event.
    public init(reason: String = ShutdownEvent.defaultReason, restartExpectedMs: Int? = nil) {
        self.reason = reason
        self.restartExpectedMs = restartExpectedMs
    }

    private enum CodingKeys: String, CodingKey { case reason, restartExpectedMs }

    /// Decodes tolerantly: a missing reason is the default one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reason = try container.decodeIfPresent(String.self, forKey: .reason) ?? Self.defaultReason
        restartExpectedMs = try container.decodeLenientIntIfPresent(forKey: .restartExpectedMs)
    }

    /// Encodes `restartExpectedMs` as `null` when unknown, as the real Gateway does
    /// (`number|null`), rather than omitting it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reason, forKey: .reason)
        if let restartExpectedMs {
            try container.encode(restartExpectedMs, forKey: .restartExpectedMs)
        } else {
            try container.encodeNil(forKey: .restartExpectedMs)
        }
    }
}

/// `presence` payload (docs/protocol.md §2.6); the frame also carries `stateVersion`.
public struct PresenceEvent: Sendable, Hashable, Codable {
    /// The full presence list.
    public var presence: [PresenceEntry]

    /// Creates a presence event.
    public init(presence: [PresenceEntry]) { self.presence = presence }
}

/// `voicewake.changed` payload (docs/protocol.md §2.6).
public struct VoiceWakeChangedEvent: Sendable, Hashable, Codable {
    /// Wake words.
    public var triggers: [String]

    /// Creates the event.
    public init(triggers: [String] = []) { self.triggers = triggers }
}

/// `node.invoke.request` payload: a command for one node (docs/protocol.md §6.3).
public struct NodeInvokeRequest: Sendable, Hashable, Codable {
    /// The default timeout the Gateway sets when the caller gave none.
    public static let defaultTimeoutMs = 30_000

    /// A fresh UUID; the node answers with the same `id`.
    public var id: String
    /// The target node.
    public var nodeId: String
    /// The command, e.g. `location.get`.
    public var command: String
    /// The operator's params serialised to a JSON string; absent when there are none.
    public var paramsJSON: String?
    /// Deadline in milliseconds; 0 means unbounded.
    public var timeoutMs: Int?
    /// The caller's idempotency key.
    public var idempotencyKey: String?

    /// Creates a request.
    public init(id: String, nodeId: String, command: String, paramsJSON: String? = nil, timeoutMs: Int? = NodeInvokeRequest.defaultTimeoutMs, idempotencyKey: String? = nil) {
        self.id = id
        self.nodeId = nodeId
        self.command = command
        self.paramsJSON = paramsJSON
        self.timeoutMs = timeoutMs
        self.idempotencyKey = idempotencyKey
    }

    private enum CodingKeys: String, CodingKey { case id, nodeId, command, paramsJSON, timeoutMs, idempotencyKey }

    /// Decodes tolerantly: `timeoutMs` may be an integral floating-point number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        nodeId = try container.decode(String.self, forKey: .nodeId)
        command = try container.decode(String.self, forKey: .command)
        paramsJSON = try container.decodeIfPresent(String.self, forKey: .paramsJSON)
        timeoutMs = try container.decodeLenientIntIfPresent(forKey: .timeoutMs)
        idempotencyKey = try container.decodeIfPresent(String.self, forKey: .idempotencyKey)
    }
}

/// The error of a failed `node.invoke.result`; both members are free-form and optional.
public struct NodeInvokeError: Sendable, Hashable, Codable {
    /// A node error code, e.g. `NODE_BACKGROUND_UNAVAILABLE`.
    public var code: String?
    /// Human-readable text.
    public var message: String?

    /// Creates an error.
    public init(code: String? = nil, message: String? = nil) {
        self.code = code
        self.message = message
    }
}

/// `node.invoke.result` params: a node's terminal answer (docs/protocol.md §6.4).
///
/// Decoding applies the Gateway's normalisation: `payloadJSON:null` and `error:null` count as
/// absent, and a non-string `payloadJSON` is moved to `payload`.
public struct NodeInvokeResult: Sendable, Hashable, Codable {
    /// The invoke id from the request.
    public var id: String
    /// The answering node; must equal the caller's node id.
    public var nodeId: String
    /// Success flag.
    public var ok: Bool
    /// Result as JSON (Android, third-party nodes).
    public var payload: JSONValue?
    /// Result as a JSON string (Swift, node host).
    public var payloadJSON: String?
    /// Failure details.
    public var error: NodeInvokeError?

    /// Creates a result.
    public init(id: String, nodeId: String, ok: Bool, payload: JSONValue? = nil, payloadJSON: String? = nil, error: NodeInvokeError? = nil) {
        self.id = id
        self.nodeId = nodeId
        self.ok = ok
        self.payload = payload
        self.payloadJSON = payloadJSON
        self.error = error
    }

    private enum CodingKeys: String, CodingKey { case id, nodeId, ok, payload, payloadJSON, error }

    /// Decodes with the Gateway's normalisation (see the type's discussion).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        nodeId = try container.decode(String.self, forKey: .nodeId)
        ok = try container.decode(Bool.self, forKey: .ok)
        payload = try container.decodeIfPresent(JSONValue.self, forKey: .payload)
        switch try container.decodeIfPresent(JSONValue.self, forKey: .payloadJSON) {
        case let value? where value.stringValue != nil:
            payloadJSON = value.stringValue
        case nil, .null?:
            payloadJSON = nil
        case let other?:
            payloadJSON = nil
            if payload == nil { payload = other }
        }
        error = try container.decodeIfPresent(NodeInvokeError.self, forKey: .error)
    }

    /// The result as a JSON string: `payloadJSON` if present, else `payload` serialised.
    public var resolvedPayloadJSON: String? { payloadJSON ?? payload.map(\.jsonString) }
}

/// `node.event` params (docs/protocol.md §6.5).
///
/// Upstream the schema allows `payloadJSON` only as a string; `null` is accepted here and counts
/// as absent, because Swift's fire-and-forget `sendEvent(payloadJSON: nil)` sends it.
public struct NodeEventParams: Sendable, Hashable, Codable {
    /// The event name, e.g. `node.presence.alive`.
    public var event: String
    /// Payload as JSON.
    public var payload: JSONValue?
    /// Payload as a JSON string; wins over `payload`.
    public var payloadJSON: String?

    /// Creates params.
    public init(event: String, payload: JSONValue? = nil, payloadJSON: String? = nil) {
        self.event = event
        self.payload = payload
        self.payloadJSON = payloadJSON
    }

    /// The payload as the Gateway sees it: `payloadJSON` if it is a string, else `payload`
    /// serialised, else `nil`.
    public var resolvedPayloadJSON: String? { payloadJSON ?? payload.map(\.jsonString) }
}

/// The result of `node.event` (docs/protocol.md §6.5): bare `{ok:true}` (protocol 3 era, or an
/// unhandled event) or structured `{ok, event, handled, reason?}` (newest).
public struct NodeEventResult: Sendable, Hashable, Codable {
    /// Always `true` for an accepted request.
    public var ok: Bool
    /// The event name (structured form).
    public var event: String?
    /// Whether the handler durably handled the event (structured form).
    public var handled: Bool?
    /// Why, e.g. `persisted`, `throttled`, `pairing_changed` (structured form).
    public var reason: String?

    /// Creates a result.
    public init(ok: Bool = true, event: String? = nil, handled: Bool? = nil, reason: String? = nil) {
        self.ok = ok
        self.event = event
        self.handled = handled
        self.reason = reason
    }

    /// The bare `{ok:true}` answer.
    public static let bare = NodeEventResult()

    /// The structured answer `{ok:true, event, handled, reason?}`.
    public static func structured(event: String, handled: Bool, reason: String? = nil) -> NodeEventResult {
        NodeEventResult(ok: true, event: event, handled: handled, reason: reason)
    }

    /// Whether a client may count the event as durably recorded: only `handled:true` counts.
    public var isDurable: Bool { handled == true }
}
