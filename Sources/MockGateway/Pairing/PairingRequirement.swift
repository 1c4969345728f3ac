import GatewayProtocol

/// Why a connect needs (re-)approval (`details.reason`, docs/protocol.md §5.7-5.8).
public enum PairingRequirement: String, Sendable, Hashable, CaseIterable {
    /// No paired record for this device id with this public key.
    case notPaired = "not-paired"
    /// Paired, but the requested role is not approved.
    case roleUpgrade = "role-upgrade"
    /// Paired with the role, but the requested operator scopes exceed the approved ones.
    case scopeUpgrade = "scope-upgrade"
    /// Paired, but the pinned platform family or device family changed.
    case metadataUpgrade = "metadata-upgrade"

    /// The requirement text of `pairing required: <requirement>`.
    public var requirementText: String {
        switch self {
        case .notPaired: "device is not approved yet"
        case .roleUpgrade: "device is asking for a higher role than currently approved"
        // Upstream also keeps a shorter message per reason ("scope upgrade pending approval");
        // the error message and the close reason are built from this requirement wording
        // (docs/protocol.md §5.8), so it is used for message and close reason alike.
        case .scopeUpgrade: "device is asking for more scopes than currently approved"
        case .metadataUpgrade: "device identity changed and must be re-approved"
        }
    }

    /// The default `details.remediationHint`.
    public var remediationHint: String {
        switch self {
        case .notPaired: "Approve this device from the pending pairing requests."
        case .roleUpgrade: "Review the requested role upgrade, then approve the pending request."
        case .scopeUpgrade: "Review the requested scopes, then approve the pending upgrade."
        case .metadataUpgrade: "Review the refreshed device details, then approve the pending request."
        }
    }
}

/// The outcome of checking a connect against the paired records (docs/protocol.md §5.7).
public enum PairingEvaluation: Sendable, Hashable {
    /// The device is paired with this key, role and scopes: it may proceed to `hello-ok`.
    case paired(PairedDevice)
    /// The device needs approval; `existing` is its current record, if any (possibly for
    /// another public key).
    case required(PairingRequirement, existing: PairedDevice?)
}

/// The `NOT_PAIRED` / `PAIRING_REQUIRED` rejection of a connect: the error response followed by
/// close 1008 (docs/protocol.md §10.3, §5.8).
public struct PairingRequiredRejection: Sendable, Hashable {
    /// The close code that follows the error response: 1008 (policy violation).
    public static let closeCode = GatewayCloseCode.policyViolation

    /// Why approval is needed.
    public var requirement: PairingRequirement
    /// The pending request the device should wait for.
    public var requestId: String?
    /// `device.id`.
    public var deviceId: String
    /// The role the connect asked for.
    public var requestedRole: GatewayRole
    /// The scopes the connect sent.
    public var requestedScopes: [String]
    /// The approved roles, only for an existing record with the same public key.
    public var approvedRoles: [GatewayRole]?
    /// The approved scopes, only for an existing record with the same public key.
    public var approvedScopes: [String]?
    /// Whether a detached approval may still land (a fresh node that used a bootstrap token):
    /// the details then ask the client to keep retrying instead of pausing.
    public var waitForDetachedApproval: Bool

    /// Creates a rejection.
    public init(
        requirement: PairingRequirement, requestId: String?, deviceId: String, requestedRole: GatewayRole,
        requestedScopes: [String], approvedRoles: [GatewayRole]? = nil, approvedScopes: [String]? = nil,
        waitForDetachedApproval: Bool = false
    ) {
        self.requirement = requirement
        self.requestId = requestId
        self.deviceId = deviceId
        self.requestedRole = requestedRole
        self.requestedScopes = requestedScopes
        self.approvedRoles = approvedRoles
        self.approvedScopes = approvedScopes
        self.waitForDetachedApproval = waitForDetachedApproval
    }

    /// The request id as it may be echoed: only ids matching `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`.
    public var echoableRequestId: String? {
        guard let requestId, Self.isEchoable(requestId) else { return nil }
        return requestId
    }

    /// The error object of the failed `connect` response.
    /// - Parameter style: `.current` sends `pairing required: <requirement>` with the full
    ///   details; `.legacy` (protocol-3-era Gateways) sends `pairing required` with
    ///   `details {code, reason, requestId}` only.
    public func errorShape(style: GatewayProfile.PairingMessageStyle = .current) -> ErrorShape {
        var details: [String: JSONValue] = [
            "code": .string(ConnectErrorDetailCode.pairingRequired.rawValue), "reason": .string(requirement.rawValue),
        ]
        if let requestId = echoableRequestId { details["requestId"] = .string(requestId) }
        guard style == .current else {
            return ErrorShape(code: ErrorCode.notPaired.rawValue, message: message(style: style), details: .object(details))
        }
        details["remediationHint"] = .string(requirement.remediationHint)
        details["deviceId"] = .string(deviceId)
        details["requestedRole"] = .string(requestedRole.rawValue)
        details["requestedScopes"] = .array(requestedScopes.map(JSONValue.string))
        if let approvedRoles, !approvedRoles.isEmpty { details["approvedRoles"] = .array(approvedRoles.map { .string($0.rawValue) }) }
        if let approvedScopes, !approvedScopes.isEmpty { details["approvedScopes"] = .array(approvedScopes.map(JSONValue.string)) }
        if waitForDetachedApproval {
            details["recommendedNextStep"] = .string(RecommendedNextStep.waitThenRetry.rawValue)
            details["retryable"] = true
            details["pauseReconnect"] = false
        }
        return ErrorShape(code: ErrorCode.notPaired.rawValue, message: message(style: style), details: .object(details))
    }

    /// `error.message`.
    public func message(style: GatewayProfile.PairingMessageStyle = .current) -> String {
        switch style {
        case .current: "pairing required: \(requirement.requirementText)"
        case .legacy: "pairing required"
        }
    }

    /// The close reason: `pairing required: <requirement> (requestId: <id>)`, at most 120 bytes,
    /// cut on a character boundary. The legacy style closes with the bare message.
    public func closeReason(style: GatewayProfile.PairingMessageStyle = .current) -> String {
        var reason = message(style: style)
        if style == .current, let requestId = echoableRequestId { reason += " (requestId: \(requestId))" }
        return CloseReason.truncate(reason)
    }

    static func isEchoable(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard (1...128).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool {
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
        }
        guard alphanumeric(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { alphanumeric($0) || $0 == 46 || $0 == 95 || $0 == 58 || $0 == 45 }
    }
}
