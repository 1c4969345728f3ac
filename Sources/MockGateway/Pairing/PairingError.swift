import GatewayProtocol

/// A refused pairing or device-token operation, with the error its RPC answers.
///
/// Every case answers `INVALID_REQUEST` with the real Gateway's message
/// (src/gateway/server-methods/devices.ts): for example approving a request that was already
/// approved, rejected, superseded or expired answers `unknown requestId`, which is exactly what
/// the loser of an approval race sees.
public struct PairingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of refusal, for matching without comparing messages.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// A stable identifier.
        public var rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A short name.
        public var description: String { rawValue }

        /// The request does not exist (never did, already resolved, superseded or expired).
        public static let unknownRequest = Code(rawValue: "unknown-request")
        /// No paired record for the device.
        public static let unknownDevice = Code(rawValue: "unknown-device")
        /// A rename with an empty label.
        public static let labelRequired = Code(rawValue: "label-required")
        /// The approver lacks a requested operator scope.
        public static let missingScope = Code(rawValue: "missing-scope")
        /// The approver may not grant the requested role (a non-operator role needs `operator.admin`).
        public static let approvalDenied = Code(rawValue: "approval-denied")
        /// `device.token.rotate` refused (unknown device or role, or scopes beyond the approval).
        public static let tokenRotationDenied = Code(rawValue: "token-rotation-denied")
        /// `device.token.revoke` refused (no token for that device and role).
        public static let tokenRevocationDenied = Code(rawValue: "token-revocation-denied")
    }

    /// The kind of refusal.
    public var code: Code
    /// The wire message.
    public var message: String
    /// The request id, device id or scope the refusal is about.
    public var subject: String

    private init(_ code: Code, _ message: String, subject: String) {
        self.code = code
        self.message = message
        self.subject = subject
    }

    /// `INVALID_REQUEST "unknown requestId"`.
    public static func unknownRequest(_ requestId: String) -> PairingError {
        PairingError(.unknownRequest, "unknown requestId", subject: requestId)
    }

    /// `INVALID_REQUEST "unknown deviceId"`.
    public static func unknownDevice(_ deviceId: String) -> PairingError {
        PairingError(.unknownDevice, "unknown deviceId", subject: deviceId)
    }

    /// `INVALID_REQUEST "label required"`.
    public static func labelRequired(_ deviceId: String) -> PairingError {
        PairingError(.labelRequired, "label required", subject: deviceId)
    }

    /// `INVALID_REQUEST "missing scope: <scope>"`: the approver must hold every requested scope
    /// (docs/protocol.md §7.10).
    public static func missingScope(_ scope: String) -> PairingError {
        PairingError(.missingScope, "missing scope: \(scope)", subject: scope)
    }

    /// `INVALID_REQUEST "device pairing approval denied"`.
    public static func approvalDenied(role: GatewayRole) -> PairingError {
        PairingError(.approvalDenied, "device pairing approval denied", subject: role.rawValue)
    }

    /// `INVALID_REQUEST "device token rotation denied"`.
    public static func tokenRotationDenied(_ deviceId: String) -> PairingError {
        PairingError(.tokenRotationDenied, "device token rotation denied", subject: deviceId)
    }

    /// `INVALID_REQUEST "device token revocation denied"`.
    public static func tokenRevocationDenied(_ deviceId: String) -> PairingError {
        PairingError(.tokenRevocationDenied, "device token revocation denied", subject: deviceId)
    }

    /// The error object of the failed RPC response.
    public var errorShape: ErrorShape { ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: message) }

    /// The message and its subject.
    public var description: String { "\(message) (\(subject))" }
}
