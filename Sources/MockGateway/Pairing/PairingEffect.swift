import GatewayProtocol

/// The decision announced by `device.pair.resolved`.
public enum PairingDecision: String, Sendable, Hashable {
    /// The request was approved (manually or silently).
    case approved
    /// The request was rejected, or superseded by a newer request of the same device.
    case rejected
}

/// A `device.pair.resolved` announcement.
public struct PairingResolution: Sendable, Hashable {
    /// The resolved request.
    public var requestId: String
    /// Its device.
    public var deviceId: String
    /// Approved or rejected.
    public var decision: PairingDecision
    /// When it was resolved (the Gateway clock).
    public var ts: Int64

    /// Creates a resolution.
    public init(requestId: String, deviceId: String, decision: PairingDecision, ts: Int64) {
        self.requestId = requestId
        self.deviceId = deviceId
        self.decision = decision
        self.ts = ts
    }

    /// The `device.pair.resolved` payload.
    public var eventPayload: JSONValue {
        ["requestId": .string(requestId), "deviceId": .string(deviceId), "decision": .string(decision.rawValue), "ts": .int(ts)]
    }
}

/// Why the owner must close a device's live sessions.
public enum PairingDisconnectReason: String, Sendable, Hashable {
    /// `device.pair.remove`.
    case deviceRemoved = "device-pair-removed"
    /// `device.token.rotate`: the sessions hold the old token and must reconnect.
    case tokenRotated = "device-token-rotated"
    /// `device.token.revoke`.
    case tokenRevoked = "device-token-revoked"
}

/// Something the pairing store decided that its owner (the Gateway actor) must apply or
/// announce. Only `.requested` and `.resolved` are broadcast on the wire; `.disconnect` closes
/// sockets; the others exist for the Gateway's observable event stream and transcript.
public enum PairingEffect: Sendable, Hashable {
    /// Broadcast `device.pair.requested` with `request.eventPayload`.
    case requested(PairingRequest)
    /// An identical retry refreshed `request` in place (same id, original `ts`); nothing is broadcast.
    case refreshed(PairingRequest)
    /// The pending requests `old` were replaced by the merged request `by`. Each old id also
    /// gets its own `.resolved(... .rejected ...)` effect, which is what goes on the wire.
    case superseded(old: [String], by: String)
    /// Broadcast `device.pair.resolved` with `resolution.eventPayload`.
    case resolved(PairingResolution)
    /// The request expired 5 minutes after its last retry. The protocol defines no event for
    /// expiry (the real Gateway prunes silently), so nothing is broadcast; approving it later
    /// fails like any unknown request.
    case expired(PairingRequest)
    /// The request was deleted together with its device (`device.pair.remove`); nothing is broadcast.
    case withdrawn(PairingRequest)
    /// Close the live sessions of `deviceId`: only those of `role`, or all of them when `nil`.
    case disconnect(deviceId: String, role: GatewayRole?, reason: PairingDisconnectReason)
}
