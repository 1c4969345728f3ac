import GatewayProtocol

/// What a pairing request and a paired record both say about the device: the optional members
/// their public forms share.
protocol PairingDeviceDescription {
    var displayName: String? { get }
    var platform: String? { get }
    var deviceFamily: String? { get }
    var clientId: ClientID? { get }
    var clientMode: ClientMode? { get }
    var remoteIp: String? { get }
}

extension PairingDeviceDescription {
    /// Sets the members that are present.
    func addDeviceDescription(to object: inout [String: JSONValue]) {
        object["displayName"] = displayName.map(JSONValue.string)
        object["platform"] = platform.map(JSONValue.string)
        object["deviceFamily"] = deviceFamily.map(JSONValue.string)
        object["clientId"] = clientId.map { .string($0.rawValue) }
        object["clientMode"] = clientMode.map { .string($0.rawValue) }
        object["remoteIp"] = remoteIp.map(JSONValue.string)
    }
}

extension PairingRequest: PairingDeviceDescription {}
extension PairedDevice: PairingDeviceDescription {}

extension PairingRequest {
    /// The public form of the request: the `device.pair.requested` payload and a
    /// `device.pair.list` pending entry. `refreshedAtMs` stays internal, as on the real Gateway.
    public var eventPayload: JSONValue {
        var object: [String: JSONValue] = [
            "requestId": .string(requestId), "deviceId": .string(deviceId), "publicKey": .string(publicKey),
            "role": .string(role.rawValue), "roles": .array(roles.map { .string($0.rawValue) }),
            "scopes": .array(scopes.map(JSONValue.string)), "isRepair": .bool(isRepair), "ts": .int(ts),
        ]
        addDeviceDescription(to: &object)
        object["browserOrigin"] = browserOrigin.map(JSONValue.string)
        if silent { object["silent"] = true }
        return .object(object)
    }
}

extension PairedDevice {
    /// The listing form of the record (`device.pair.list`, `device.pair.approve`): tokens are
    /// summarised by role and lifecycle, never returned raw.
    /// - Parameters:
    ///   - tokens: the device's tokens (from `PairingStore.tokens`).
    ///   - connected: whether the device has a live session, when the owner knows it.
    public func listingJSON(tokens: [DeviceToken], connected: Bool? = nil) -> JSONValue {
        var object: [String: JSONValue] = [
            "deviceId": .string(deviceId), "publicKey": .string(publicKey),
            "roles": .array(roles.map { .string($0.rawValue) }), "scopes": .array(scopes.map(JSONValue.string)),
            "createdAtMs": .int(createdAtMs), "approvedAtMs": .int(approvedAtMs), "approvedVia": .string(approvedVia.rawValue),
            "tokens": .array(tokens.map(\.summaryJSON)),
        ]
        // `role` is the older single-role field; the first approved role keeps older readers working.
        object["role"] = roles.first.map { .string($0.rawValue) }
        addDeviceDescription(to: &object)
        object["lastSeenAtMs"] = lastSeenAtMs.map(JSONValue.int)
        object["lastSeenReason"] = lastSeenReason.map(JSONValue.string)
        object["label"] = label.map(JSONValue.string)
        object["connected"] = connected.map(JSONValue.bool)
        return .object(object)
    }
}

extension PairingStore {
    /// The `device.pair.list` result: `{pending: [...], paired: [...]}`, pending newest first,
    /// paired most recently approved first; expired requests never appear.
    /// - Parameter connectedDeviceIds: the devices with a live session; `nil` omits `connected`.
    public func listPayload(nowMs: Int64, connectedDeviceIds: Set<String>? = nil) -> JSONValue {
        [
            "pending": .array(pendingRequests(nowMs: nowMs).map(\.eventPayload)),
            "paired": .array(pairedDevices.map { device in
                device.listingJSON(tokens: tokens.tokens(deviceId: device.deviceId),
                                   connected: connectedDeviceIds.map { $0.contains(device.deviceId) })
            }),
        ]
    }

    /// The `device.pair.approve` result: `{requestId, device}`.
    public func approvalPayload(_ approval: PairingApproval) -> JSONValue {
        ["requestId": .string(approval.requestId),
         "device": approval.device.listingJSON(tokens: tokens.tokens(deviceId: approval.device.deviceId))]
    }
}

extension DeviceTokenChange {
    /// The `device.token.rotate` result `{deviceId, role, token?, scopes, rotatedAtMs}`; the new
    /// bearer is echoed only to a same-device caller that authenticated with that device's token.
    public func rotationPayload(includeToken: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "deviceId": .string(deviceId), "role": .string(token.role.rawValue),
            "scopes": .array(token.scopes.map(JSONValue.string)), "rotatedAtMs": .int(token.issuedAtMs),
        ]
        if includeToken { object["token"] = .string(token.token) }
        return .object(object)
    }

    /// The `device.token.revoke` result `{deviceId, role, revokedAtMs}`.
    public var revocationPayload: JSONValue {
        ["deviceId": .string(deviceId), "role": .string(token.role.rawValue), "revokedAtMs": .int(token.revokedAtMs ?? token.issuedAtMs)]
    }
}
