import Foundation

/// A device proof that passed every check.
public struct VerifiedDevice: Sendable, Hashable {
    /// `device.id` (equal to the SHA-256 of the key).
    public var deviceId: String
    /// The public key in canonical form: unpadded base64url of the raw key.
    public var publicKey: String
    /// The raw 32-byte public key.
    public var rawPublicKey: Data
    /// The payload layout whose signature verified.
    public var payloadVersion: DeviceAuthPayload.Version
    /// `device.signedAt`.
    public var signedAtMs: Int

    /// Creates a verified device.
    public init(deviceId: String, publicKey: String, rawPublicKey: Data, payloadVersion: DeviceAuthPayload.Version, signedAtMs: Int) {
        self.deviceId = deviceId
        self.publicKey = publicKey
        self.rawPublicKey = rawPublicKey
        self.payloadVersion = payloadVersion
        self.signedAtMs = signedAtMs
    }
}

/// A failed device proof, with the exact error the Gateway answers (docs/protocol.md §10.3).
public struct DeviceProofFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The top-level code: `INVALID_REQUEST`, or `NOT_PAIRED` for a missing identity.
    public var errorCode: ErrorCode
    /// `details.code`.
    public var detailCode: ConnectErrorDetailCode
    /// `error.message`, also the close reason.
    public var message: String
    /// `details.reason`, e.g. `device-nonce-mismatch` (absent for a missing identity).
    public var reason: String?

    /// Creates a failure.
    public init(errorCode: ErrorCode, detailCode: ConnectErrorDetailCode, message: String, reason: String?) {
        self.errorCode = errorCode
        self.detailCode = detailCode
        self.message = message
        self.reason = reason
    }

    /// The error object for the `res` frame: `details = {code, reason}`.
    public var errorShape: ErrorShape {
        var details: [String: JSONValue] = ["code": .string(detailCode.rawValue)]
        if let reason { details["reason"] = .string(reason) }
        return ErrorShape(code: errorCode.rawValue, message: message, details: .object(details))
    }

    /// The message.
    public var description: String { "\(message) (\(detailCode))" }

    /// An `INVALID_REQUEST` failure: the top-level code of every failed proof but a missing identity.
    private static func invalid(_ detailCode: ConnectErrorDetailCode, _ message: String, reason: String) -> DeviceProofFailure {
        DeviceProofFailure(errorCode: .invalidRequest, detailCode: detailCode, message: message, reason: reason)
    }

    /// `NOT_PAIRED` "device identity required": a node connected without `device`.
    public static let identityRequired = DeviceProofFailure(
        errorCode: .notPaired, detailCode: .deviceIdentityRequired, message: "device identity required", reason: nil)
    /// `device.id` is not the SHA-256 of the public key.
    public static let deviceIdMismatch = invalid(.deviceAuthDeviceIdMismatch, "device identity mismatch", reason: "device-id-mismatch")
    /// `signedAt` is more than two minutes away from the Gateway clock.
    public static let signatureExpired = invalid(.deviceAuthSignatureExpired, "device signature expired", reason: "device-signature-stale")
    /// `device.nonce` is missing or blank.
    public static let nonceRequired = invalid(.deviceAuthNonceRequired, "device nonce required", reason: "device-nonce-missing")
    /// `device.nonce` differs from the challenge nonce.
    public static let nonceMismatch = invalid(.deviceAuthNonceMismatch, "device nonce mismatch", reason: "device-nonce-mismatch")
    /// Neither the v3 nor the v2 payload verifies.
    public static let signatureInvalid = invalid(.deviceAuthSignatureInvalid, "device signature invalid", reason: "device-signature")
    /// The public key cannot be decoded.
    public static let publicKeyInvalid = invalid(.deviceAuthPublicKeyInvalid, "device public key invalid", reason: "device-public-key")
}

/// The outcome of `DeviceProofVerifier.verify`.
public enum DeviceProofOutcome: Sendable, Hashable {
    /// Every check passed.
    case verified(VerifiedDevice)
    /// A check failed.
    case rejected(DeviceProofFailure)

    /// The verified device, if any.
    public var verifiedDevice: VerifiedDevice? {
        if case .verified(let device) = self { device } else { nil }
    }

    /// The failure, if any.
    public var failure: DeviceProofFailure? {
        if case .rejected(let failure) = self { failure } else { nil }
    }
}

/// Checks the `device` block of a connect, in the real Gateway's order (docs/protocol.md
/// §3.11, §10.3): id/key match → `signedAt` skew → nonce present → nonce equal → signature (v3,
/// then v2) → public-key canonicalisation. Pure: the clock is a parameter.
public struct DeviceProofVerifier: Sendable, Hashable {
    /// `DEVICE_SIGNATURE_SKEW_MS`: the largest accepted `|now − signedAt|`, two minutes.
    public static let signatureSkewMs = 2 * 60 * 1000

    /// Whether a v1 signature (no nonce) is accepted when the nonce is missing. Off by default,
    /// as on the real Gateway; an interoperability switch for clients that still sign v1
    /// (docs/protocol.md §12 item 1).
    public var acceptsLegacyV1: Bool

    /// Creates a verifier.
    public init(acceptsLegacyV1: Bool = false) {
        self.acceptsLegacyV1 = acceptsLegacyV1
    }

    /// Verifies `params.device` against this connection's challenge.
    /// - Parameters:
    ///   - params: the schema-valid connect params.
    ///   - expectedNonce: the nonce of this connection's `connect.challenge`.
    ///   - nowMs: the Gateway clock in milliseconds.
    /// - Returns: the verified device, or the first failed check with its exact error.
    public func verify(_ params: ConnectParams, expectedNonce: String, nowMs: Int) -> DeviceProofOutcome {
        guard let device = params.device else { return .rejected(.identityRequired) }

        // 1. id/key match. A key that cannot be decoded at all has no id to match; it is reported
        // as DEVICE_AUTH_PUBLIC_KEY_INVALID (the real Gateway hashes whatever bytes it decoded
        // and so reports DEVICE_AUTH_DEVICE_ID_MISMATCH; the shared vectors accept both, and the
        // precise code is the more useful diagnosis).
        guard let rawKey = DevicePublicKey.rawKey(from: device.publicKey) else { return .rejected(.publicKeyInvalid) }
        guard DeviceIdentity.deviceId(forRawPublicKey: rawKey) == device.id else { return .rejected(.deviceIdMismatch) }

        // 2. Freshness against the Gateway clock.
        let (skew, overflow) = nowMs.subtractingReportingOverflow(device.signedAt)
        guard !overflow, skew.magnitude <= UInt(Self.signatureSkewMs) else { return .rejected(.signatureExpired) }

        // 3./4. Nonce present, then equal to this connection's challenge.
        let nonce = device.nonce?.trimmingWhitespacesAndNewlines() ?? ""
        var version: DeviceAuthPayload.Version?
        if nonce.isEmpty {
            guard acceptsLegacyV1, verifies(.v1, params, nonce: "", device: device) else { return .rejected(.nonceRequired) }
            version = .v1
        } else {
            guard nonce == expectedNonce else { return .rejected(.nonceMismatch) }
            // 5. Signature: v3 first, then v2; the version is not transmitted.
            version = [DeviceAuthPayload.Version.v3, .v2].first { verifies($0, params, nonce: nonce, device: device) }
        }
        guard let version else { return .rejected(.signatureInvalid) }

        // 6. Canonical key form for storage and comparison.
        guard let canonical = DevicePublicKey.normalizedBase64URL(device.publicKey) else { return .rejected(.publicKeyInvalid) }
        return .verified(VerifiedDevice(
            deviceId: device.id, publicKey: canonical, rawPublicKey: rawKey, payloadVersion: version,
            signedAtMs: device.signedAt))
    }

    private func verifies(_ version: DeviceAuthPayload.Version, _ params: ConnectParams, nonce: String, device: DeviceProof) -> Bool {
        guard let payload = DeviceAuthPayload.build(version, for: params, nonce: nonce) else { return false }
        return DeviceIdentity.verify(signature: device.signature, payload: payload, publicKey: device.publicKey)
    }
}
