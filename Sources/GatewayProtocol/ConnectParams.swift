import Foundation

/// The `params` of the `connect` request (gateway-protocol.md §3.3).
///
/// Decoding ignores unknown members, accepts unknown `client.id` and `client.mode` values and
/// accepts integral floating-point numbers (`1767225600000.0`) where integers are expected.
/// Encoding omits `nil` members. For the Gateway's schema check with JSON-pointer messages, use
/// `ConnectParams.validate(_:)`.
public struct ConnectParams: Sendable, Hashable, Codable {
    /// Lowest protocol version the client speaks.
    public var minProtocol: Int
    /// Highest protocol version the client speaks.
    public var maxProtocol: Int
    /// Who is connecting.
    public var client: ClientInfo
    /// `operator` (the default when absent), `node` or `worker`.
    public var role: GatewayRole?
    /// Requested operator scopes; nodes send `[]`. Signed comma-joined, in this order.
    public var scopes: [String]?
    /// Node capability categories.
    public var caps: [String]?
    /// Node command names.
    public var commands: [String]?
    /// Granular permission toggles.
    public var permissions: [String: Bool]?
    /// `PATH` of the node host.
    public var pathEnv: String?
    /// Credentials.
    public var auth: ConnectAuth?
    /// Device identity and its proof; always present for nodes.
    public var device: DeviceProof?
    /// Locale, for example `en-US`.
    public var locale: String?
    /// User agent; Swift sends the OS version string.
    public var userAgent: String?

    /// Creates connect params.
    public init(
        minProtocol: Int = ProtocolVersion.current, maxProtocol: Int = ProtocolVersion.current, client: ClientInfo,
        role: GatewayRole? = nil, scopes: [String]? = nil, caps: [String]? = nil, commands: [String]? = nil,
        permissions: [String: Bool]? = nil, pathEnv: String? = nil, auth: ConnectAuth? = nil,
        device: DeviceProof? = nil, locale: String? = nil, userAgent: String? = nil
    ) {
        self.minProtocol = minProtocol
        self.maxProtocol = maxProtocol
        self.client = client
        self.role = role
        self.scopes = scopes
        self.caps = caps
        self.commands = commands
        self.permissions = permissions
        self.pathEnv = pathEnv
        self.auth = auth
        self.device = device
        self.locale = locale
        self.userAgent = userAgent
    }

    /// The effective role: `role`, or `operator` when absent.
    public var resolvedRole: GatewayRole { role ?? .operator }

    /// The token that goes into the signed payload (§4.3): the first non-empty of `auth.token`,
    /// `auth.deviceToken`, `auth.bootstrapToken`, else the empty string.
    public var signatureToken: String { auth?.signatureToken ?? "" }

    private enum CodingKeys: String, CodingKey {
        case minProtocol, maxProtocol, client, role, scopes, caps, commands, permissions, pathEnv, auth, device,
            locale, userAgent
    }

    /// Decodes tolerantly (see the type's discussion).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        minProtocol = try container.decodeLenientInt(forKey: .minProtocol)
        maxProtocol = try container.decodeLenientInt(forKey: .maxProtocol)
        client = try container.decode(ClientInfo.self, forKey: .client)
        role = try container.decodeIfPresent(GatewayRole.self, forKey: .role)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes)
        caps = try container.decodeIfPresent([String].self, forKey: .caps)
        commands = try container.decodeIfPresent([String].self, forKey: .commands)
        permissions = try container.decodeIfPresent([String: Bool].self, forKey: .permissions)
        pathEnv = try container.decodeIfPresent(String.self, forKey: .pathEnv)
        auth = try container.decodeIfPresent(ConnectAuth.self, forKey: .auth)
        device = try container.decodeIfPresent(DeviceProof.self, forKey: .device)
        locale = try container.decodeIfPresent(String.self, forKey: .locale)
        userAgent = try container.decodeIfPresent(String.self, forKey: .userAgent)
    }
}

/// `connect.params.client` (gateway-protocol.md §3.3).
public struct ClientInfo: Sendable, Hashable, Codable {
    /// Client id, for example `openclaw-ios`; unknown values are kept as sent.
    public var id: ClientID
    /// Name shown in pairing UIs.
    public var displayName: String?
    /// App version.
    public var version: String
    /// Build id (newest clients).
    public var buildId: String?
    /// Platform, for example `iOS 18.4.0` or `darwin`; signed in v3 (normalised).
    public var platform: String
    /// Device family, for example `iPhone`; signed in v3 (normalised).
    public var deviceFamily: String?
    /// Hardware model, for example `iPhone17,1`.
    public var modelIdentifier: String?
    /// IANA time zone (newest clients).
    public var timeZone: String?
    /// Client mode, for example `node` or `ui`; unknown values are kept as sent.
    public var mode: ClientMode
    /// Stable per-install id.
    public var instanceId: String?

    /// Creates client information.
    public init(
        id: ClientID, displayName: String? = nil, version: String, buildId: String? = nil, platform: String,
        deviceFamily: String? = nil, modelIdentifier: String? = nil, timeZone: String? = nil, mode: ClientMode,
        instanceId: String? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.version = version
        self.buildId = buildId
        self.platform = platform
        self.deviceFamily = deviceFamily
        self.modelIdentifier = modelIdentifier
        self.timeZone = timeZone
        self.mode = mode
        self.instanceId = instanceId
    }
}

/// `connect.params.auth` (gateway-protocol.md §3.3, §5.2).
public struct ConnectAuth: Sendable, Hashable, Codable {
    /// The shared Gateway token, or a stored device token on normal Swift reconnects.
    public var token: String?
    /// A setup-code (bootstrap) token.
    public var bootstrapToken: String?
    /// An explicit device token (Swift's one-shot retry sends it next to `token`).
    public var deviceToken: String?
    /// The shared Gateway password; never part of the signed payload.
    public var password: String?

    /// Creates credentials.
    public init(token: String? = nil, bootstrapToken: String? = nil, deviceToken: String? = nil, password: String? = nil) {
        self.token = token
        self.bootstrapToken = bootstrapToken
        self.deviceToken = deviceToken
        self.password = password
    }

    /// The token that goes into the signed payload (§4.3).
    public var signatureToken: String {
        DeviceAuthPayload.signatureToken(token: token, deviceToken: deviceToken, bootstrapToken: bootstrapToken)
    }
}

/// `connect.params.device`: the device identity and its signature (gateway-protocol.md §4).
public struct DeviceProof: Sendable, Hashable, Codable {
    /// Lower-case hex SHA-256 of the raw public key.
    public var id: String
    /// Unpadded base64url of the raw 32-byte Ed25519 key (PEM/SPKI also accepted by the Gateway).
    public var publicKey: String
    /// Unpadded base64url of the 64-byte signature.
    public var signature: String
    /// Signing time in milliseconds (newest Swift uses the challenge `ts`).
    public var signedAt: Int
    /// The challenge nonce, echoed; required by current Gateways.
    public var nonce: String?

    /// Creates a device proof.
    public init(id: String, publicKey: String, signature: String, signedAt: Int, nonce: String?) {
        self.id = id
        self.publicKey = publicKey
        self.signature = signature
        self.signedAt = signedAt
        self.nonce = nonce
    }

    private enum CodingKeys: String, CodingKey { case id, publicKey, signature, signedAt, nonce }

    /// Decodes tolerantly: `signedAt` may be an integral floating-point number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        publicKey = try container.decode(String.self, forKey: .publicKey)
        signature = try container.decode(String.self, forKey: .signature)
        signedAt = try container.decodeLenientInt(forKey: .signedAt)
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
    }
}

extension KeyedDecodingContainer {
    /// An integer that may have been written as an integral floating-point number.
    func decodeLenientInt(forKey key: Key) throws -> Int {
        if let value = try? decode(Int.self, forKey: key) { return value }
        let double = try decode(Double.self, forKey: key)
        guard double.isFinite, double.rounded() == double, let value = Int(exactly: double) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an integer")
        }
        return value
    }

    /// An optional integer that may have been written as an integral floating-point number.
    func decodeLenientIntIfPresent(forKey key: Key) throws -> Int? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeLenientInt(forKey: key)
    }
}

// MARK: - Schema validation

/// Why `connect` params failed the Gateway's schema check.
public struct ConnectParamsValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// JSON pointer of the offending value (`""` for the params object itself), e.g. `/client/id`.
    public var pointer: String
    /// What is wrong, in the validator's words, e.g. `must be string`.
    public var problem: String

    /// Creates an error.
    public init(pointer: String, problem: String) {
        self.pointer = pointer
        self.problem = problem
    }

    /// The `error.message` the Gateway sends: `invalid connect params: at /client/id: must be string`.
    public var message: String {
        let location = pointer.isEmpty ? "at root" : "at \(pointer)"
        return "invalid connect params: \(location): \(problem)"
    }

    /// Same as `message`.
    public var description: String { message }
}

extension ConnectParams {
    /// The longest bootstrap or device token the schema allows (§3.3).
    public static let maxCredentialTokenLength = 256

    /// Checks `params` against the `connect` schema and decodes it.
    ///
    /// Types and required members follow the upstream schema. Deliberately tolerant (the most
    /// tolerant behaviour the real clients can live with, gateway-protocol.md "How to use" rule 4):
    /// unknown members are ignored, `client.id` and `client.mode` are open strings, `null` counts as
    /// absent for optional members, and integral floating-point numbers count as integers.
    /// - Parameter params: the `params` member of the connect request (`nil` when absent).
    /// - Returns: the decoded params, or the first schema violation with its JSON pointer.
    public static func validate(_ params: JSONValue?) -> Result<ConnectParams, ConnectParamsValidationError> {
        do {
            return .success(try SchemaReader(root: params).connectParams())
        } catch {
            return .failure(error)
        }
    }
}

/// Reads connect params member by member, failing on the first violation (as Ajv does without
/// `allErrors`).
private struct SchemaReader {
    let root: JSONValue?

    func connectParams() throws(ConnectParamsValidationError) -> ConnectParams {
        let object = try requireObject(root, at: "")
        let minProtocol = try integer(object, "minProtocol", at: "", minimum: 1)
        let maxProtocol = try integer(object, "maxProtocol", at: "", minimum: 1)
        guard let clientValue = present(object["client"]) else { throw missing("client", at: "") }
        let client = try clientInfo(clientValue)
        let role = try optionalString(object, "role", at: "")
        let scopes = try stringArray(object, "scopes", at: "")
        let caps = try stringArray(object, "caps", at: "")
        let commands = try stringArray(object, "commands", at: "")
        let permissions = try booleanMap(object, "permissions", at: "")
        let pathEnv = try optionalString(object, "pathEnv", at: "")
        let auth = try connectAuth(object["auth"])
        let device = try deviceProof(object["device"])
        let locale = try optionalString(object, "locale", at: "")
        let userAgent = try optionalString(object, "userAgent", at: "")
        return ConnectParams(
            minProtocol: minProtocol, maxProtocol: maxProtocol, client: client, role: role.map(GatewayRole.init(rawValue:)),
            scopes: scopes, caps: caps, commands: commands, permissions: permissions, pathEnv: pathEnv, auth: auth,
            device: device, locale: locale, userAgent: userAgent)
    }

    private func clientInfo(_ value: JSONValue) throws(ConnectParamsValidationError) -> ClientInfo {
        let path = "/client"
        let object = try requireObject(value, at: path)
        let id = try requiredString(object, "id", at: path)
        let displayName = try optionalString(object, "displayName", at: path)
        let version = try requiredString(object, "version", at: path)
        let buildId = try optionalString(object, "buildId", at: path)
        let platform = try requiredString(object, "platform", at: path)
        let deviceFamily = try optionalString(object, "deviceFamily", at: path)
        let modelIdentifier = try optionalString(object, "modelIdentifier", at: path)
        let timeZone = try optionalString(object, "timeZone", at: path)
        let mode = try requiredString(object, "mode", at: path)
        let instanceId = try optionalString(object, "instanceId", at: path)
        return ClientInfo(
            id: ClientID(rawValue: id), displayName: displayName, version: version, buildId: buildId, platform: platform,
            deviceFamily: deviceFamily, modelIdentifier: modelIdentifier, timeZone: timeZone,
            mode: ClientMode(rawValue: mode), instanceId: instanceId)
    }

    private func connectAuth(_ value: JSONValue?) throws(ConnectParamsValidationError) -> ConnectAuth? {
        guard let value = present(value) else { return nil }
        let path = "/auth"
        let object = try requireObject(value, at: path)
        let token = try optionalString(object, "token", at: path)
        let bootstrapToken = try credentialToken(object, "bootstrapToken", at: path)
        let deviceToken = try credentialToken(object, "deviceToken", at: path)
        let password = try optionalString(object, "password", at: path)
        return ConnectAuth(token: token, bootstrapToken: bootstrapToken, deviceToken: deviceToken, password: password)
    }

    private func deviceProof(_ value: JSONValue?) throws(ConnectParamsValidationError) -> DeviceProof? {
        guard let value = present(value) else { return nil }
        let path = "/device"
        let object = try requireObject(value, at: path)
        let id = try requiredString(object, "id", at: path)
        let publicKey = try requiredString(object, "publicKey", at: path)
        let signature = try requiredString(object, "signature", at: path)
        let signedAt = try integer(object, "signedAt", at: path, minimum: 0)
        // The nonce is optional in the schema: its absence is the device-proof failure
        // DEVICE_AUTH_NONCE_REQUIRED, not a schema error.
        let nonce = try optionalString(object, "nonce", at: path)
        return DeviceProof(id: id, publicKey: publicKey, signature: signature, signedAt: signedAt, nonce: nonce)
    }

    // MARK: Primitives

    private func present(_ value: JSONValue?) -> JSONValue? {
        guard let value, !value.isNull else { return nil }
        return value
    }

    private func missing(_ key: String, at path: String) -> ConnectParamsValidationError {
        ConnectParamsValidationError(pointer: path, problem: "must have required property '\(key)'")
    }

    private func requireObject(_ value: JSONValue?, at path: String) throws(ConnectParamsValidationError) -> [String: JSONValue] {
        guard let object = value?.objectValue else {
            throw ConnectParamsValidationError(pointer: path, problem: "must be object")
        }
        return object
    }

    private func integer(_ object: [String: JSONValue], _ key: String, at path: String, minimum: Int) throws(ConnectParamsValidationError) -> Int {
        guard let value = present(object[key]) else { throw missing(key, at: path) }
        guard let number = value.int64Value, let integer = Int(exactly: number) else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be integer")
        }
        guard integer >= minimum else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be >= \(minimum)")
        }
        return integer
    }

    private func requiredString(_ object: [String: JSONValue], _ key: String, at path: String) throws(ConnectParamsValidationError) -> String {
        guard let value = present(object[key]) else { throw missing(key, at: path) }
        guard let text = value.stringValue else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be string")
        }
        guard !text.isEmpty else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must NOT have fewer than 1 characters")
        }
        return text
    }

    private func optionalString(_ object: [String: JSONValue], _ key: String, at path: String) throws(ConnectParamsValidationError) -> String? {
        guard let value = present(object[key]) else { return nil }
        guard let text = value.stringValue else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be string")
        }
        return text
    }

    private func credentialToken(_ object: [String: JSONValue], _ key: String, at path: String) throws(ConnectParamsValidationError) -> String? {
        guard let text = try optionalString(object, key, at: path) else { return nil }
        let pointer = "\(path)/\(key)"
        guard text.count <= ConnectParams.maxCredentialTokenLength else {
            throw ConnectParamsValidationError(
                pointer: pointer, problem: "must NOT have more than \(ConnectParams.maxCredentialTokenLength) characters")
        }
        guard text.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else {
            throw ConnectParamsValidationError(pointer: pointer, problem: "must contain only printable ASCII characters")
        }
        return text
    }

    private func stringArray(_ object: [String: JSONValue], _ key: String, at path: String) throws(ConnectParamsValidationError) -> [String]? {
        guard let value = present(object[key]) else { return nil }
        guard let items = value.arrayValue else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be array")
        }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else {
                throw ConnectParamsValidationError(pointer: "\(path)/\(key)/\(index)", problem: "must be string")
            }
            strings.append(text)
        }
        return strings
    }

    private func booleanMap(_ object: [String: JSONValue], _ key: String, at path: String) throws(ConnectParamsValidationError) -> [String: Bool]? {
        guard let value = present(object[key]) else { return nil }
        guard let members = value.objectValue else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be object")
        }
        var result: [String: Bool] = [:]
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            guard let flag = member.boolValue else {
                throw ConnectParamsValidationError(pointer: "\(path)/\(key)/\(JSONPointer.escape(name))", problem: "must be boolean")
            }
            result[name] = flag
        }
        return result
    }
}

/// JSON Pointer (RFC 6901) helpers.
enum JSONPointer {
    /// A reference token with `~` and `/` escaped.
    static func escape(_ token: String) -> String {
        token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
