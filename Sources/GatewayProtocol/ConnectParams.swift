import Foundation

/// The `params` of the `connect` request (docs/protocol.md §3.3).
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

    /// The token that goes into the signed payload (docs/protocol.md §3.10): the first non-empty of `auth.token`,
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

/// `connect.params.client` (docs/protocol.md §3.3).
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

/// `connect.params.auth` (docs/protocol.md §3.3, §5.2).
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

    /// The token that goes into the signed payload (docs/protocol.md §3.10).
    public var signatureToken: String {
        DeviceAuthPayload.signatureToken(token: token, deviceToken: deviceToken, bootstrapToken: bootstrapToken)
    }
}

/// `connect.params.device`: the device identity and its signature (docs/protocol.md §3.8).
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
    /// For an unknown member it is the object holding it, and ``unexpectedMember`` names it.
    public var pointer: String
    /// What is wrong, in the validator's words, e.g. `must be string`.
    public var problem: String
    /// The unknown member that was refused, if that was the problem.
    public var unexpectedMember: String?

    /// Creates an error.
    public init(pointer: String, problem: String, unexpectedMember: String? = nil) {
        self.pointer = pointer
        self.problem = problem
        self.unexpectedMember = unexpectedMember
    }

    /// An unknown member `name` in the object at `pointer`.
    public static func unexpected(_ name: String, at pointer: String) -> ConnectParamsValidationError {
        ConnectParamsValidationError(pointer: pointer, problem: "unexpected property '\(name)'", unexpectedMember: name)
    }

    /// The pointer of the offending member itself: `pointer`, or `pointer/name` for an unknown member.
    public var memberPointer: String {
        guard let unexpectedMember else { return pointer }
        return "\(pointer)/\(JSONPointer.escape(unexpectedMember))"
    }

    /// The `error.message` the Gateway sends, in upstream's `formatValidationErrors` wording
    /// (`packages/gateway-protocol/src/index.ts`):
    /// `invalid connect params: at /client/id: must be equal to one of the allowed values`,
    /// `invalid connect params: at /client: unexpected property 'nickname'`,
    /// `invalid connect params: at /device: must have required property 'nonce'`.
    public var message: String {
        let location = pointer.isEmpty ? "at root" : "at \(pointer)"
        return "invalid connect params: \(location): \(problem)"
    }

    /// Same as `message`.
    public var description: String { message }
}

/// The version-dependent part of the `connect` schema.
///
/// The schema is closed at every level in every generation (both stored versions of upstream
/// `packages/gateway-protocol/src/schema/frames.ts`, @9e18229e9ccec911e6df63c4b5ec1c1fbd2836de
/// and @009f87da348579bbaddc01db6b3daf586c2adb08, use `closedObject`); what changed is whether
/// `device.nonce` is required.
public struct ConnectSchemaRules: Sendable, Hashable {
    /// Whether `device.nonce` is a required non-empty string. Current Gateways require it
    /// (frames.ts @9e18229e: `nonce: NonEmptyString`), so a connect without it fails the schema
    /// check; protocol-3-era Gateways let it through to the device-proof check, which answers
    /// `DEVICE_AUTH_NONCE_REQUIRED` (the migration table of the docs, `docs/gateway/protocol.md`
    /// "Device auth migration diagnostics" in openclaw/docs).
    public var requiresDeviceNonce: Bool

    /// Creates rules.
    public init(requiresDeviceNonce: Bool) {
        self.requiresDeviceNonce = requiresDeviceNonce
    }

    /// The current Gateway: `device.nonce` required.
    public static let current = ConnectSchemaRules(requiresDeviceNonce: true)
    /// Protocol-3-era Gateways: `device.nonce` optional (its absence is a device-proof failure).
    public static let legacy = ConnectSchemaRules(requiresDeviceNonce: false)
}

extension ConnectParams {
    /// The longest bootstrap or device token the schema allows (docs/protocol.md §3.3). ⚠️ Unconfirmed: the
    /// bound exists in upstream's `connect-auth-bounds.test.ts` @359570fa but not in the stored
    /// frames.ts versions; kept from the spec.
    public static let maxCredentialTokenLength = 256

    /// Checks `params` against the `connect` schema and decodes it.
    ///
    /// The schema is upstream's `ConnectParamsSchema`
    /// (`packages/gateway-protocol/src/schema/frames.ts` @9e18229e9ccec911e6df63c4b5ec1c1fbd2836de,
    /// `primitives.ts` @f05213f2): closed objects at every level (an unknown member is
    /// `unexpected property '<name>'`), `client.id` and `client.mode` from closed enums
    /// (`ClientID.allKnown`, `ClientMode.allKnown`), non-empty strings where upstream has
    /// `NonEmptyString`, and, with ``ConnectSchemaRules/current``, a required `device.nonce`.
    /// `null` is not "absent": an optional member that is present must have its type. Integral
    /// floating-point numbers count as integers (JSON cannot tell `1` from `1.0` in JavaScript).
    ///
    /// Tolerated although not in the stored frames.ts versions (the most tolerant reading of
    /// unconfirmed points): `client.buildId` (1-96 characters) and `client.timeZone` (1-64),
    /// which `client-info.ts` @0711ee47 declares, and the top-level `computerUse`, `workerRuns`
    /// and `modelCatalog` of a newer `packages/gateway-protocol` build,
    /// whose contents are not checked.
    /// - Parameters:
    ///   - params: the `params` member of the connect request (`nil` when absent).
    ///   - rules: the generation's rules (default: the current Gateway's).
    /// - Returns: the decoded params, or the first schema violation with its JSON pointer.
    public static func validate(_ params: JSONValue?, rules: ConnectSchemaRules = .current)
        -> Result<ConnectParams, ConnectParamsValidationError>
    {
        do {
            return .success(try SchemaReader(rules: rules).connectParams(params))
        } catch {
            return .failure(error)
        }
    }

    /// The top-level members of the schema, in upstream's order.
    public static let schemaMembers: [String] = [
        "minProtocol", "maxProtocol", "client", "caps", "commands", "computerUse", "workerRuns", "permissions",
        "pathEnv", "role", "scopes", "modelCatalog", "device", "auth", "locale", "userAgent",
    ]

    /// The members of `client`.
    public static let clientSchemaMembers: [String] = [
        "id", "displayName", "version", "buildId", "platform", "deviceFamily", "modelIdentifier", "timeZone", "mode",
        "instanceId",
    ]

    /// The members of `device`.
    public static let deviceSchemaMembers: [String] = ["id", "publicKey", "signature", "signedAt", "nonce"]

    /// The members of `auth`.
    public static let authSchemaMembers: [String] = [
        "token", "bootstrapToken", "deviceToken", "password", "approvalRuntimeToken", "agentRuntimeIdentityToken",
    ]
}

/// Reads connect params object by object, failing on the first violation (as Ajv does without
/// `allErrors`): for each object its type, then its required members, then unknown members (Ajv
/// evaluates `required` before `additionalProperties` before `properties`), then each member.
private struct SchemaReader {
    let rules: ConnectSchemaRules

    func connectParams(_ root: JSONValue?) throws(ConnectParamsValidationError) -> ConnectParams {
        let object = try closedObject(root, at: "", required: ["minProtocol", "maxProtocol", "client"],
                                      members: ConnectParams.schemaMembers)
        let minProtocol = try integer(object, "minProtocol", at: "", minimum: 1)
        let maxProtocol = try integer(object, "maxProtocol", at: "", minimum: 1)
        let client = try clientInfo(object["client"])
        let caps = try stringArray(object, "caps", at: "")
        let commands = try stringArray(object, "commands", at: "")
        let permissions = try booleanMap(object, "permissions", at: "")
        let pathEnv = try optionalString(object, "pathEnv", at: "")
        let role = try optionalString(object, "role", at: "", nonEmpty: true)
        let scopes = try stringArray(object, "scopes", at: "")
        if let catalog = object["modelCatalog"], catalog.objectValue == nil {
            throw ConnectParamsValidationError(pointer: "/modelCatalog", problem: "must be object")
        }
        let device = try deviceProof(object["device"])
        let auth = try connectAuth(object["auth"])
        let locale = try optionalString(object, "locale", at: "")
        let userAgent = try optionalString(object, "userAgent", at: "")
        return ConnectParams(
            minProtocol: minProtocol, maxProtocol: maxProtocol, client: client, role: role.map(GatewayRole.init(rawValue:)),
            scopes: scopes, caps: caps, commands: commands, permissions: permissions, pathEnv: pathEnv, auth: auth,
            device: device, locale: locale, userAgent: userAgent)
    }

    private func clientInfo(_ value: JSONValue?) throws(ConnectParamsValidationError) -> ClientInfo {
        let path = "/client"
        let object = try closedObject(value, at: path, required: ["id", "version", "platform", "mode"],
                                      members: ConnectParams.clientSchemaMembers)
        let id = try enumerated(object, "id", at: path, allowed: ClientID.allKnown.map(\.rawValue))
        let displayName = try optionalString(object, "displayName", at: path, nonEmpty: true)
        let version = try requiredString(object, "version", at: path)
        let buildId = try optionalString(object, "buildId", at: path, nonEmpty: true, maxLength: 96)
        let platform = try requiredString(object, "platform", at: path)
        let deviceFamily = try optionalString(object, "deviceFamily", at: path, nonEmpty: true)
        let modelIdentifier = try optionalString(object, "modelIdentifier", at: path, nonEmpty: true)
        let timeZone = try optionalString(object, "timeZone", at: path, nonEmpty: true, maxLength: 64)
        let mode = try enumerated(object, "mode", at: path, allowed: ClientMode.allKnown.map(\.rawValue))
        let instanceId = try optionalString(object, "instanceId", at: path, nonEmpty: true)
        return ClientInfo(
            id: ClientID(rawValue: id), displayName: displayName, version: version, buildId: buildId, platform: platform,
            deviceFamily: deviceFamily, modelIdentifier: modelIdentifier, timeZone: timeZone,
            mode: ClientMode(rawValue: mode), instanceId: instanceId)
    }

    private func connectAuth(_ value: JSONValue?) throws(ConnectParamsValidationError) -> ConnectAuth? {
        guard let value else { return nil }
        let path = "/auth"
        let object = try closedObject(value, at: path, required: [], members: ConnectParams.authSchemaMembers)
        let token = try optionalString(object, "token", at: path)
        let bootstrapToken = try credentialToken(object, "bootstrapToken", at: path)
        let deviceToken = try credentialToken(object, "deviceToken", at: path)
        let password = try optionalString(object, "password", at: path)
        _ = try optionalString(object, "approvalRuntimeToken", at: path)
        _ = try optionalString(object, "agentRuntimeIdentityToken", at: path)
        return ConnectAuth(token: token, bootstrapToken: bootstrapToken, deviceToken: deviceToken, password: password)
    }

    private func deviceProof(_ value: JSONValue?) throws(ConnectParamsValidationError) -> DeviceProof? {
        guard let value else { return nil }
        let path = "/device"
        var required = ["id", "publicKey", "signature", "signedAt"]
        if rules.requiresDeviceNonce { required.append("nonce") }
        let object = try closedObject(value, at: path, required: required, members: ConnectParams.deviceSchemaMembers)
        let id = try requiredString(object, "id", at: path)
        let publicKey = try requiredString(object, "publicKey", at: path)
        let signature = try requiredString(object, "signature", at: path)
        let signedAt = try integer(object, "signedAt", at: path, minimum: 0)
        // Current: a required NonEmptyString, so only a blank nonce ("  ") reaches the proof
        // check's `device nonce required` (connect-device-proof.ts @bdf831476c86c90bae8fca26853341971bf32823
        // trims before that check). Legacy: optional, and "" is as good as absent.
        let nonce = try optionalString(object, "nonce", at: path, nonEmpty: rules.requiresDeviceNonce)
        return DeviceProof(id: id, publicKey: publicKey, signature: signature, signedAt: signedAt, nonce: nonce)
    }

    // MARK: Primitives

    /// An object at `path` that holds every `required` member and no member outside `members`.
    private func closedObject(_ value: JSONValue?, at path: String, required: [String], members: [String])
        throws(ConnectParamsValidationError) -> [String: JSONValue]
    {
        guard let object = value?.objectValue else {
            throw ConnectParamsValidationError(pointer: path, problem: "must be object")
        }
        for key in required where object[key] == nil {
            throw ConnectParamsValidationError(pointer: path, problem: "must have required property '\(key)'")
        }
        // The common case, every member known, without building a set or sorting the keys;
        // the first unknown one in key order otherwise.
        guard object.keys.allSatisfy(members.contains) else {
            let known = Set(members)
            if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                throw .unexpected(unknown, at: path)
            }
            return object
        }
        return object
    }

    private func integer(_ object: [String: JSONValue], _ key: String, at path: String, minimum: Int)
        throws(ConnectParamsValidationError) -> Int
    {
        guard let value = object[key], let number = value.int64Value, let integer = Int(exactly: number) else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be integer")
        }
        guard integer >= minimum else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be >= \(minimum)")
        }
        return integer
    }

    private func requiredString(_ object: [String: JSONValue], _ key: String, at path: String)
        throws(ConnectParamsValidationError) -> String
    {
        guard let text = try optionalString(object, key, at: path, nonEmpty: true) else {
            throw ConnectParamsValidationError(pointer: path, problem: "must have required property '\(key)'")
        }
        return text
    }

    /// An optional string member; present means a string (`null` included), and with
    /// `nonEmpty` at least one character (upstream `NonEmptyString`).
    private func optionalString(_ object: [String: JSONValue], _ key: String, at path: String, nonEmpty: Bool = false,
                                maxLength: Int? = nil) throws(ConnectParamsValidationError) -> String? {
        guard let value = object[key] else { return nil }
        let pointer = "\(path)/\(key)"
        guard let text = value.stringValue else { throw ConnectParamsValidationError(pointer: pointer, problem: "must be string") }
        if nonEmpty, text.isEmpty {
            throw ConnectParamsValidationError(pointer: pointer, problem: "must NOT have fewer than 1 characters")
        }
        if let maxLength, text.count > maxLength {
            throw ConnectParamsValidationError(pointer: pointer, problem: "must NOT have more than \(maxLength) characters")
        }
        return text
    }

    /// A required string from a closed enum (`Type.Enum`).
    private func enumerated(_ object: [String: JSONValue], _ key: String, at path: String, allowed: [String])
        throws(ConnectParamsValidationError) -> String
    {
        let pointer = "\(path)/\(key)"
        guard let text = object[key]?.stringValue else { throw ConnectParamsValidationError(pointer: pointer, problem: "must be string") }
        guard allowed.contains(text) else {
            throw ConnectParamsValidationError(pointer: pointer, problem: "must be equal to one of the allowed values")
        }
        return text
    }

    private func credentialToken(_ object: [String: JSONValue], _ key: String, at path: String)
        throws(ConnectParamsValidationError) -> String?
    {
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

    /// An optional array of non-empty strings (`Type.Array(NonEmptyString)`).
    private func stringArray(_ object: [String: JSONValue], _ key: String, at path: String)
        throws(ConnectParamsValidationError) -> [String]?
    {
        guard let value = object[key] else { return nil }
        guard let items = value.arrayValue else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be array")
        }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let pointer = "\(path)/\(key)/\(index)"
            guard let text = item.stringValue else { throw ConnectParamsValidationError(pointer: pointer, problem: "must be string") }
            guard !text.isEmpty else {
                throw ConnectParamsValidationError(pointer: pointer, problem: "must NOT have fewer than 1 characters")
            }
            strings.append(text)
        }
        return strings
    }

    /// An optional `Type.Record(NonEmptyString, Type.Boolean())`.
    private func booleanMap(_ object: [String: JSONValue], _ key: String, at path: String)
        throws(ConnectParamsValidationError) -> [String: Bool]?
    {
        guard let value = object[key] else { return nil }
        guard let members = value.objectValue else {
            throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "must be object")
        }
        var result: [String: Bool] = [:]
        result.reserveCapacity(members.count)
        // The common case, every member a boolean under a non-empty name, in any order; the
        // first problem in key order otherwise (its pointer built only then).
        for (name, member) in members {
            guard !name.isEmpty, let flag = member.boolValue else { break }
            result[name] = flag
        }
        if result.count == members.count { return result }
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty else {
                throw ConnectParamsValidationError(pointer: "\(path)/\(key)", problem: "property name must be valid")
            }
            guard member.boolValue != nil else {
                throw ConnectParamsValidationError(pointer: "\(path)/\(key)/\(JSONPointer.escape(name))", problem: "must be boolean")
            }
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
