// The hello and the values of every frame's envelope as JSON values, built member by member
// instead of through `Codable`: the Gateway builds one hello per connect and one envelope per
// frame, and the `Codable` round trip (generic containers, coding keys, boxing) was a
// measurable share of a conformance run. Each is exactly the value `JSONValue(encoding:)` gives
// (`HelloJSONTests` compares them): members that are `nil` are left out, `JSONValue` members
// have their numbers normalised as that encoder does.

extension HelloOK {
    /// The hello as the value `JSONValue(encoding:)` gives, built without `Codable`.
    /// - Throws: `EncodingError.invalidValue` where that encoder throws (a non-finite number in
    ///   one of the opaque `JSONValue` members).
    public func json() throws -> JSONValue {
        var object: [String: JSONValue] = [
            "type": .string(type), "protocol": .int(Int64(self.protocol)), "server": server.json,
            "features": features.json, "snapshot": try snapshot.json(), "auth": auth.json, "policy": policy.json,
        ]
        if let pluginSurfaceUrls { object["pluginSurfaceUrls"] = .object(pluginSurfaceUrls.mapValues(JSONValue.string)) }
        if let canvasHostUrl { object["canvasHostUrl"] = .string(canvasHostUrl) }
        if let controlUiTabs { object["controlUiTabs"] = try JSONValueEncoder.normalized(controlUiTabs, path: { [] }) }
        return .object(object)
    }
}

extension HelloServerInfo {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue { .object(["version": .string(version), "connId": .string(connId)]) }
}

extension HelloFeatures {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "methods": .array(methods.map(JSONValue.string)), "events": .array(events.map(JSONValue.string)),
        ]
        if let capabilities { object["capabilities"] = .array(capabilities.map(JSONValue.string)) }
        return .object(object)
    }
}

extension HelloSnapshot {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    /// - Throws: `EncodingError.invalidValue` for a non-finite number in `health` or
    ///   `updateAvailable`, as that encoder does.
    public func json() throws -> JSONValue {
        var object: [String: JSONValue] = [
            "presence": .array(presence.map(\.json)), "health": try JSONValueEncoder.normalized(health, path: { [] }),
            "stateVersion": stateVersion.json, "uptimeMs": .int(Int64(uptimeMs)),
        ]
        if let configPath { object["configPath"] = .string(configPath) }
        if let stateDir { object["stateDir"] = .string(stateDir) }
        if let sessionDefaults { object["sessionDefaults"] = sessionDefaults.json }
        if let authMode { object["authMode"] = .string(authMode) }
        if let updateAvailable { object["updateAvailable"] = try JSONValueEncoder.normalized(updateAvailable, path: { [] }) }
        if let appliedConfigHash { object["appliedConfigHash"] = .string(appliedConfigHash) }
        return .object(object)
    }
}

extension SessionDefaults {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "defaultAgentId": .string(defaultAgentId), "mainKey": .string(mainKey), "mainSessionKey": .string(mainSessionKey),
        ]
        if let scope { object["scope"] = .string(scope) }
        return .object(object)
    }
}

extension PresenceEntry {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["ts": .int(Int64(ts))]
        func put(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        func put(_ key: String, _ values: [String]?) { if let values { object[key] = .array(values.map(JSONValue.string)) } }
        put("host", host)
        put("ip", ip)
        put("version", version)
        put("platform", platform)
        put("deviceFamily", deviceFamily)
        put("modelIdentifier", modelIdentifier)
        put("mode", mode)
        if let lastInputSeconds { object["lastInputSeconds"] = .int(Int64(lastInputSeconds)) }
        put("reason", reason)
        put("tags", tags)
        put("text", text)
        put("deviceId", deviceId)
        put("roles", roles)
        put("scopes", scopes)
        put("instanceId", instanceId)
        return .object(object)
    }
}

extension HelloAuth {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["role": .string(role.rawValue), "scopes": .array(scopes.map(JSONValue.string))]
        if let deviceToken { object["deviceToken"] = .string(deviceToken) }
        if let issuedAtMs { object["issuedAtMs"] = .int(Int64(issuedAtMs)) }
        if let deviceTokens { object["deviceTokens"] = .array(deviceTokens.map(\.json)) }
        return .object(object)
    }
}

extension IssuedDeviceToken {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "deviceToken": .string(deviceToken), "role": .string(role.rawValue), "scopes": .array(scopes.map(JSONValue.string)),
        ]
        if let issuedAtMs { object["issuedAtMs"] = .int(Int64(issuedAtMs)) }
        return .object(object)
    }
}

extension HelloPolicy {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "maxPayload": .int(Int64(maxPayload)), "maxBufferedBytes": .int(Int64(maxBufferedBytes)),
            "tickIntervalMs": .int(Int64(tickIntervalMs)),
        ]
        if let attachments { object["attachments"] = attachments.json }
        return .object(object)
    }
}

extension AttachmentPolicy {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue { .object(["maxBytes": .int(Int64(maxBytes)), "maxImageBytes": .int(Int64(maxImageBytes))]) }
}

extension StateVersion {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue { .object(["presence": .int(Int64(presence)), "health": .int(Int64(health))]) }
}

extension ErrorShape {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    /// - Throws: `EncodingError.invalidValue` for a non-finite number in `details`, as that
    ///   encoder does.
    public func json() throws -> JSONValue {
        var object: [String: JSONValue] = ["code": .string(code), "message": .string(message)]
        if let details { object["details"] = try JSONValueEncoder.normalized(details, path: { [] }) }
        if let retryable { object["retryable"] = .bool(retryable) }
        if let retryAfterMs { object["retryAfterMs"] = .int(Int64(retryAfterMs)) }
        return .object(object)
    }
}

extension PresenceEvent {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue { .object(["presence": .array(presence.map(\.json))]) }
}

// The connect request's params and the challenge, built the same way: a client builds one
// `connect` per connection and the Gateway one challenge; `HelloJSONTests` compares them with
// `JSONValue(encoding:)` too.

extension ConnectParams {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "minProtocol": .int(Int64(minProtocol)), "maxProtocol": .int(Int64(maxProtocol)), "client": client.json,
        ]
        if let role { object["role"] = .string(role.rawValue) }
        if let scopes { object["scopes"] = .array(scopes.map(JSONValue.string)) }
        if let caps { object["caps"] = .array(caps.map(JSONValue.string)) }
        if let commands { object["commands"] = .array(commands.map(JSONValue.string)) }
        if let permissions { object["permissions"] = .object(permissions.mapValues(JSONValue.bool)) }
        if let pathEnv { object["pathEnv"] = .string(pathEnv) }
        if let auth { object["auth"] = auth.json }
        if let device { object["device"] = device.json }
        if let locale { object["locale"] = .string(locale) }
        if let userAgent { object["userAgent"] = .string(userAgent) }
        return .object(object)
    }
}

extension ClientInfo {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(id.rawValue), "version": .string(version), "platform": .string(platform), "mode": .string(mode.rawValue),
        ]
        if let displayName { object["displayName"] = .string(displayName) }
        if let buildId { object["buildId"] = .string(buildId) }
        if let deviceFamily { object["deviceFamily"] = .string(deviceFamily) }
        if let modelIdentifier { object["modelIdentifier"] = .string(modelIdentifier) }
        if let timeZone { object["timeZone"] = .string(timeZone) }
        if let instanceId { object["instanceId"] = .string(instanceId) }
        return .object(object)
    }
}

extension ConnectAuth {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if let token { object["token"] = .string(token) }
        if let bootstrapToken { object["bootstrapToken"] = .string(bootstrapToken) }
        if let deviceToken { object["deviceToken"] = .string(deviceToken) }
        if let password { object["password"] = .string(password) }
        return .object(object)
    }
}

extension DeviceProof {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(id), "publicKey": .string(publicKey), "signature": .string(signature), "signedAt": .int(Int64(signedAt)),
        ]
        if let nonce { object["nonce"] = .string(nonce) }
        return .object(object)
    }
}

extension ConnectChallenge {
    /// The value `JSONValue(encoding:)` gives, built without `Codable`.
    public var json: JSONValue { .object(["nonce": .string(nonce), "ts": .int(Int64(ts))]) }
}
