import Foundation
import GatewayProtocol

/// The connect handshake up to (not including) pairing, as a pure value: the first frame of a
/// connection goes in, a decision comes out (gateway-protocol.md §3.4, §3.5, §3.7, §5.3).
///
/// Rules run in the real Gateway's order, and the first failing rule decides:
/// 1. the first frame is a `req` `connect` with schema-valid params (else `INVALID_REQUEST`, 1008);
/// 2. protocol negotiation (else `PROTOCOL_MISMATCH`, 1002);
/// 3. the Gateway is not starting (else `UNAVAILABLE`, 1013);
/// 4. the role is known (else `invalid role`, 1008);
/// 5. shared secret, then bootstrap token, then device token (else `AUTH_*`, 1008);
/// 6. a node has a device block (else `NOT_PAIRED` / `DEVICE_IDENTITY_REQUIRED`, 1008);
/// 7. the device proof verifies (else `DEVICE_AUTH_*`, 1008).
///
/// No sockets, no clock, no stores: the owner passes `nowMs`, and plugs its token stores in
/// through `ConnectCredentialVerifier`.
public struct ConnectAdmission: Sendable {
    private enum State: Sendable, Hashable {
        case awaitingConnect
        case decided(Decision)
    }

    /// This connection's `connect.challenge` nonce.
    public let nonce: String
    /// The settings in force for this connection.
    public var configuration: Configuration
    private var state: State = .awaitingConnect

    /// Creates the admission of one connection.
    /// - Parameters:
    ///   - nonce: the nonce sent in this connection's `connect.challenge`.
    ///   - configuration: the Gateway settings.
    public init(nonce: String, configuration: Configuration) {
        self.nonce = nonce
        self.configuration = configuration
    }

    /// The decision, once the first frame was received.
    public var decision: Decision? {
        if case .decided(let decision) = state { decision } else { nil }
    }

    /// Decides on the first message of the connection.
    /// - Parameters:
    ///   - message: the WebSocket message payload (text or binary: both carry JSON).
    ///   - nowMs: the Gateway clock.
    ///   - credentials: the bootstrap- and device-token stores.
    /// - Returns: the decision, or `nil` when one was already taken (later frames belong to the
    ///   session, or to nobody after a rejection).
    public mutating func receive<Credentials: ConnectCredentialVerifier>(
        _ message: Data, nowMs: Int, credentials: inout Credentials
    ) -> Decision? {
        guard case .awaitingConnect = state else { return nil }
        let decision = Self.evaluate(message: message, nonce: nonce, nowMs: nowMs, configuration: configuration, credentials: &credentials)
        state = .decided(decision)
        return decision
    }

    /// Decides on the first message of the connection without token stores (every bootstrap
    /// and device token is refused).
    public mutating func receive(_ message: Data, nowMs: Int) -> Decision? {
        var credentials = NoConnectCredentials()
        return receive(message, nowMs: nowMs, credentials: &credentials)
    }

    // MARK: - Pure evaluation

    /// Decides on a first message given as bytes: checks the pre-auth size limit, then parses.
    public static func evaluate<Credentials: ConnectCredentialVerifier>(
        message: Data, nonce: String, nowMs: Int, configuration: Configuration, credentials: inout Credentials
    ) -> Decision {
        guard message.count <= configuration.maxPreauthPayloadBytes else {
            return .rejected(Rejection(
                stage: .frameSize, requestID: nil,
                error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "preauth payload too large"),
                closeCode: .messageTooBig, closeReason: "preauth payload too large"))
        }
        guard let json = try? JSONValue(parsing: message) else {
            // No response, a close with a reason. Upstream's monolithic handler closes without a
            // status code when `JSON.parse` throws before the handshake (message-handler.ts,
            // stored version id 54493347725), which a client sees as 1005 with no reason; the
            // fake says why (docs/fidelity.md).
            let facts = RawFrameInspection(message)
            let why = facts.isComplete && facts.maxDepth > 512 ? "JSON nested deeper than 512 levels"
                : facts.byteCount == 0 ? "empty message" : "not valid JSON"
            return .rejected(Rejection(
                stage: .firstFrame, requestID: nil,
                error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid request frame: \(why)"),
                closeCode: .policyViolation, closeReason: "invalid request frame: \(why)"))
        }
        return evaluate(json: json, nonce: nonce, nowMs: nowMs, configuration: configuration, credentials: &credentials)
    }

    /// Decides on a first message given as parsed JSON.
    public static func evaluate<Credentials: ConnectCredentialVerifier>(
        json: JSONValue, nonce: String, nowMs: Int, configuration: Configuration, credentials: inout Credentials
    ) -> Decision {
        guard let frame = try? Frame(json: json) else {
            // Not a valid frame. Echo whatever id it carried (numeric ids from non-conforming
            // clients included: ⚠️ unconfirmed upstream; echoing verbatim is the tolerant choice).
            return .rejected(invalidHandshake(requestID: echoableID(json["id"])))
        }
        return evaluate(frame: frame, nonce: nonce, nowMs: nowMs, configuration: configuration, credentials: &credentials)
    }

    /// Decides on a first message given as a decoded frame.
    public static func evaluate<Credentials: ConnectCredentialVerifier>(
        frame: Frame, nonce: String, nowMs: Int, configuration: Configuration, credentials: inout Credentials
    ) -> Decision {
        // 1. The first frame must be a connect request with schema-valid params.
        let request: RequestFrame
        switch frame {
        case .request(let first) where first.method == GatewayMethod.connect.rawValue:
            request = first
        case .request(let other):
            return .rejected(invalidHandshake(requestID: .string(other.id)))
        case .response(let response):
            return .rejected(invalidHandshake(requestID: .string(response.id)))
        case .cancel(let cancel):
            return .rejected(invalidHandshake(requestID: .string(cancel.id)))
        case .event:
            return .rejected(invalidHandshake(requestID: nil))
        }
        let requestID = JSONValue.string(request.id)
        let params: ConnectParams
        switch ConnectParams.validate(request.params) {
        case .success(let valid): params = valid
        case .failure(let violation):
            return .rejected(Rejection(
                stage: .firstFrame, requestID: requestID,
                error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: violation.message),
                closeCode: .policyViolation, closeReason: violation.message))
        }

        // 2. Protocol negotiation.
        let negotiated: Int
        switch negotiateProtocol(params, profile: configuration.profile) {
        case .success(let version): negotiated = version
        case .failure(let rejection): return .rejected(rejection.with(requestID: requestID))
        }

        // 3. Starting up.
        if configuration.isStartingUp { return .rejected(startingUp.with(requestID: requestID)) }

        // 4. Role.
        let role = params.resolvedRole
        guard GatewayRole.known.contains(role) else { return .rejected(invalidRole.with(requestID: requestID)) }

        // A connect without a device identity: who may omit it, and whether its scopes stand
        // (ConnectAdmission+MissingDevice.swift). The closed worker protocol is not affected.
        var keepsUnboundScopes = true
        if params.device == nil, role == .operator || role == .node {
            switch missingDevice(params, role: role, mode: configuration.auth, facts: configuration.connection) {
            case .allow(let keepsScopes): keepsUnboundScopes = keepsScopes
            case .rejectControlUI: return .rejected(controlUIDeviceRequired.with(requestID: requestID))
            case .rejectDeviceRequired: return .rejected(deviceRequired.with(requestID: requestID))
            case .rejectUnauthorized: break  // authentication below answers with the auth failure
            }
        }

        // 5. Shared secret, bootstrap token, device token.
        let authMethod: AuthMethod
        switch authenticate(params, role: role, mode: configuration.auth, credentials: &credentials) {
        case .success(let method): authMethod = method
        case .failure(let rejection): return .rejected(rejection.with(requestID: requestID))
        }

        // 6./7. Device identity and proof.
        var device: VerifiedDevice?
        if params.device != nil || role == .node {
            switch configuration.deviceProof.verify(params, expectedNonce: nonce, nowMs: nowMs) {
            case .verified(let verified): device = verified
            case .rejected(let failure):
                return .rejected(Rejection(
                    stage: failure == .identityRequired ? .deviceIdentity : .deviceProof, requestID: requestID,
                    error: failure.errorShape, closeCode: .policyViolation, closeReason: failure.message))
            }
        }

        return .admitted(Admitted(
            requestID: request.id, params: params, role: role, negotiatedProtocol: negotiated,
            isLegacyProtocol: negotiated < configuration.profile.protocolVersion, authMethod: authMethod, device: device,
            keepsUnboundScopes: device != nil || keepsUnboundScopes))
    }

    /// Decides on a first message, with the token stores given as closures (called at most once
    /// each, synchronously, so they may mutate the caller's state).
    public static func evaluate(
        message: Data, nonce: String, nowMs: Int, configuration: Configuration,
        verifyBootstrapToken: (String, ConnectCredentialRequest) -> ConnectCredentialVerdict,
        verifyDeviceToken: (DeviceTokenCandidate, ConnectCredentialRequest) -> ConnectCredentialVerdict
    ) -> Decision {
        withoutActuallyEscaping(verifyBootstrapToken) { bootstrap in
            withoutActuallyEscaping(verifyDeviceToken) { deviceToken in
                var credentials = ClosureCredentials(bootstrap: bootstrap, deviceToken: deviceToken)
                return evaluate(message: message, nonce: nonce, nowMs: nowMs, configuration: configuration, credentials: &credentials)
            }
        }
    }

    /// The answer to a `connect` sent after the handshake; the socket stays open.
    public static let connectAfterHandshakeError = ErrorShape(
        code: ErrorCode.invalidRequest.rawValue, message: "connect is only valid as the first request")
}

// MARK: - Rules

extension ConnectAdmission {
    static let invalidHandshakeMessage = "invalid handshake: first request must be connect"

    static func invalidHandshake(requestID: JSONValue?) -> Rejection {
        Rejection(
            stage: .firstFrame, requestID: requestID,
            error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: invalidHandshakeMessage),
            closeCode: .policyViolation, closeReason: invalidHandshakeMessage)
    }

    /// An id worth echoing: a string or a number (`null`, objects and arrays are not ids).
    static func echoableID(_ value: JSONValue?) -> JSONValue? {
        switch value {
        case .string?, .int?, .double?: value
        default: nil
        }
    }

    /// §3.4: the highest version both sides offer. Ordinary clients get the profile's window
    /// `minimumClientProtocol...protocolVersion`; a node (role and mode `node`) or a probe (mode
    /// `probe`) also gets the legacy N-1 window down to `minimumNodeProtocol`.
    static func negotiateProtocol(_ params: ConnectParams, profile: GatewayProfile) -> Result<Int, Rejection> {
        let isLegacyEligible = (params.resolvedRole == .node && params.client.mode == .node) || params.client.mode == .probe
        let floor = isLegacyEligible ? min(profile.minimumClientProtocol, profile.minimumNodeProtocol) : profile.minimumClientProtocol
        let lowest = max(params.minProtocol, floor)
        let highest = min(params.maxProtocol, profile.protocolVersion)
        guard lowest <= highest else {
            return .failure(Rejection(
                stage: .protocolNegotiation, requestID: nil,
                error: ErrorShape(
                    code: ErrorCode.invalidRequest.rawValue, message: "protocol mismatch",
                    details: [
                        "code": .string(ConnectErrorDetailCode.protocolMismatch.rawValue),
                        "clientMinProtocol": .int(Int64(params.minProtocol)),
                        "clientMaxProtocol": .int(Int64(params.maxProtocol)),
                        "expectedProtocol": .int(Int64(profile.protocolVersion)),
                        "minimumProbeProtocol": .int(Int64(profile.minimumNodeProtocol)),
                    ]),
                closeCode: .protocolError, closeReason: "protocol mismatch"))
        }
        return .success(highest)
    }

    /// §3.5 step 3.
    static let startingUp = Rejection(
        stage: .startup, requestID: nil,
        error: ErrorShape(
            code: ErrorCode.unavailable.rawValue, message: "gateway starting; retry shortly",
            details: ["reason": "startup-sidecars"], retryable: true, retryAfterMs: 500),
        closeCode: .tryAgainLater, closeReason: "gateway starting")

    /// §3.5 step 4.
    static let invalidRole = Rejection(
        stage: .role, requestID: nil, error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid role"),
        closeCode: .policyViolation, closeReason: "invalid role")
}

extension ConnectAdmission.Rejection {
    /// The same rejection answering `requestID`.
    func with(requestID: JSONValue) -> ConnectAdmission.Rejection {
        var copy = self
        copy.requestID = requestID
        return copy
    }
}
