import Foundation
import GatewayProtocol

/// The connect handshake up to (not including) pairing, as a pure value: the first frame of a
/// connection goes in, a decision comes out (docs/protocol.md §3.6-3.7, §10.3, §5.3).
///
/// Rules run in the current Gateway's order, and the first failing rule decides (upstream
/// `src/gateway/server/ws-connection/message-handler.ts` for the first frame,
/// `connect-admission.ts` @0186e586da6c81740c4d9b4d05d100ffd3bc1858 for start-up, protocol and
/// role, `connect-auth.ts` @9b6c33a767926c508097bbd5a34b09a3be3465c0 for the rest):
/// 1. the first frame is a request frame (else no response at all, only close 1008), for
///    `connect` (else `INVALID_REQUEST`, 1008) with schema-valid params (else `INVALID_REQUEST
///    "invalid connect params: ..."`, 1008);
/// 2. the Gateway is not starting (else `UNAVAILABLE`, 1013): decided before the protocol;
/// 3. protocol negotiation (else `PROTOCOL_MISMATCH`, 1002);
/// 4. the role is known (else `invalid role`, 1008);
/// 5. the shared-secret pre-check (rate-limited per address);
/// 6. a connect without a device block: an operator whose shared secret verified goes on; one
///    whose shared secret failed gets that `AUTH_*` failure; anyone else `NOT_PAIRED` /
///    `DEVICE_IDENTITY_REQUIRED` (1008);
/// 7. the device proof verifies (else `DEVICE_AUTH_*`, 1008), so a bad proof and a bad token
///    give `DEVICE_AUTH_*`;
/// 8. then the bootstrap token and the device token (rate-limited, else `AUTH_*`, 1008): a
///    bootstrap token is only ever bound to a device whose proof verified.
///
/// No sockets, no clock, no stores: the owner passes `nowMs`, and plugs its token stores and
/// rate limiter in through `ConnectCredentialVerifier`.
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
            // status code when `JSON.parse` throws before the handshake
            // (src/gateway/server/ws-connection/message-handler.ts), which a client sees as 1005 with no reason; the
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
    ///
    /// A first frame that is not a valid request frame (`RequestFrameSchema`: `type:"req"`, a
    /// non-empty string `id` and `method`, optional `params`, no other members) is not answered
    /// at all: upstream logs it and closes 1008 `invalid request frame`
    /// (src/gateway/server/ws-connection/message-handler.ts). The newer request-frame members `traceparent`
    /// (at most 128 characters) and `expectedProfileId` are tolerated.
    public static func evaluate<Credentials: ConnectCredentialVerifier>(
        json: JSONValue, nonce: String, nowMs: Int, configuration: Configuration, credentials: inout Credentials
    ) -> Decision {
        guard let request = requestFrame(json) else { return .rejected(invalidRequestFrame) }
        return evaluate(request: request, nonce: nonce, nowMs: nowMs, configuration: configuration, credentials: &credentials)
    }

    /// Decides on a first message given as a decoded frame. A frame other than a request gets no
    /// response (see ``evaluate(json:nonce:nowMs:configuration:credentials:)``).
    public static func evaluate<Credentials: ConnectCredentialVerifier>(
        frame: Frame, nonce: String, nowMs: Int, configuration: Configuration, credentials: inout Credentials
    ) -> Decision {
        guard case .request(let request) = frame, !request.id.isEmpty, !request.method.isEmpty else {
            return .rejected(invalidRequestFrame)
        }
        return evaluate(request: request, nonce: nonce, nowMs: nowMs, configuration: configuration, credentials: &credentials)
    }

    /// Decides on a first message that is a well-formed request frame.
    static func evaluate<Credentials: ConnectCredentialVerifier>(
        request: RequestFrame, nonce: String, nowMs: Int, configuration: Configuration, credentials: inout Credentials
    ) -> Decision {
        let requestID = JSONValue.string(request.id)
        // 1. A connect request with schema-valid params.
        guard request.method == GatewayMethod.connect.rawValue else {
            return .rejected(invalidHandshake(requestID: requestID))
        }
        let params: ConnectParams
        switch ConnectParams.validate(request.params, rules: configuration.profile.connectSchema) {
        case .success(let valid): params = valid
        case .failure(let violation):
            return .rejected(Rejection(
                stage: .firstFrame, requestID: requestID,
                error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: violation.message),
                closeCode: .policyViolation, closeReason: violation.message))
        }

        // 2. Starting up, before protocol negotiation (connect-admission.ts @0186e586: the
        // `isStartupPending` check comes first).
        if configuration.isStartingUp {
            return .rejected(startingUp(retryAfterMs: configuration.startingUpRetryAfterMs).with(requestID: requestID))
        }

        // 3. Protocol negotiation.
        let negotiated: Int
        switch negotiateProtocol(params, profile: configuration.profile) {
        case .success(let version): negotiated = version
        case .failure(let rejection): return .rejected(rejection.with(requestID: requestID))
        }

        // 4. Role.
        let role = params.resolvedRole
        guard GatewayRole.known.contains(role) else { return .rejected(invalidRole.with(requestID: requestID)) }

        // 5. The shared-secret pre-check.
        var auth = AuthState(sharedSecretCheck(params, mode: configuration.auth, credentials: &credentials))
        // The two ends from here: admitted with the method that passed, or refused for the
        // credentials' first failure.
        func admitted(_ method: AuthMethod, device: VerifiedDevice?, keepsUnboundScopes: Bool = true) -> Decision {
            .admitted(Admitted(
                requestID: request.id, params: params, role: role, negotiatedProtocol: negotiated,
                isLegacyProtocol: negotiated < configuration.profile.protocolVersion, authMethod: method, device: device,
                keepsUnboundScopes: keepsUnboundScopes))
        }
        func refused(_ auth: AuthState, hasDevice: Bool) -> Decision {
            .rejected(authRejection(reason: auth.failure, params: params, mode: configuration.auth,
                                    retryAfterMs: auth.retryAfterMs, hasDevice: hasDevice).with(requestID: requestID))
        }

        // 6. A connect without a device block (connect-policy.ts `evaluateMissingDeviceIdentity`
        // @0c5d67dff7e1e2cdf0e38c6e4b8e25402cae7d69, role-policy.ts `roleCanSkipDeviceIdentity`):
        // who may omit it, and whether its scopes stand (ConnectAdmission+MissingDevice.swift).
        guard params.device != nil else {
            guard role == .operator || role == .node else {
                // Other roles (the closed worker protocol) keep what protocol-3-era Gateways did:
                // no device needed, the shared secret decides. Unconfirmed for the newest
                // Gateway, so the tolerant reading.
                guard let method = auth.method else { return refused(auth, hasDevice: false) }
                return admitted(method, device: nil)
            }
            switch missingDevice(params, role: role, mode: configuration.auth, facts: configuration.connection) {
            case .allow(let keepsScopes):
                guard let method = auth.method else {
                    // The secret matched but its scope is locked out (rate limit).
                    return refused(auth, hasDevice: false)
                }
                return admitted(method, device: nil, keepsUnboundScopes: keepsScopes)
            case .rejectControlUI:
                return .rejected(controlUIDeviceRequired.with(requestID: requestID))
            case .rejectDeviceRequired:
                return .rejected(deviceRequired.with(requestID: requestID))
            case .rejectUnauthorized:
                return refused(auth, hasDevice: false)
            }
        }

        // 7. The device proof.
        let device: VerifiedDevice
        switch configuration.deviceProof.verify(params, expectedNonce: nonce, nowMs: nowMs) {
        case .verified(let verified): device = verified
        case .rejected(let failure):
            return .rejected(Rejection(
                stage: failure == .identityRequired ? .deviceIdentity : .deviceProof, requestID: requestID,
                error: failure.errorShape, closeCode: .policyViolation, closeReason: failure.message))
        }

        // 8. Bootstrap token, then device token, for the verified device.
        decideCredentials(&auth, params: params, role: role, device: device, credentials: &credentials)
        guard let method = auth.method else { return refused(auth, hasDevice: true) }
        return admitted(method, device: device)
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
        code: ErrorCode.invalidRequest.rawValue, message: "\(GatewayMethod.connect) is only valid as the first request")
}

// MARK: - Rules

extension ConnectAdmission {
    static let invalidHandshakeMessage = "invalid handshake: first request must be connect"
    static let invalidRequestFrameMessage = "invalid request frame"

    /// A request frame other than `connect`: answered, then closed 1008.
    static func invalidHandshake(requestID: JSONValue?) -> Rejection {
        Rejection(
            stage: .firstFrame, requestID: requestID,
            error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: invalidHandshakeMessage),
            closeCode: .policyViolation, closeReason: invalidHandshakeMessage)
    }

    /// A first frame that is not a request frame: no response, close 1008.
    static let invalidRequestFrame = Rejection(
        stage: .firstFrame, requestID: nil,
        error: ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: invalidRequestFrameMessage),
        closeCode: .policyViolation, closeReason: invalidRequestFrameMessage)

    /// `json` as a request frame, if it is one by `RequestFrameSchema` (closed; see
    /// ``evaluate(json:nonce:nowMs:configuration:credentials:)``).
    static func requestFrame(_ json: JSONValue) -> RequestFrame? {
        guard let object = json.objectValue, object["type"]?.stringValue == "req",
              let id = object["id"]?.stringValue, !id.isEmpty,
              let method = object["method"]?.stringValue, !method.isEmpty else { return nil }
        let allowed: Set<String> = ["type", "id", "method", "params", "traceparent", "expectedProfileId"]
        guard object.keys.allSatisfy(allowed.contains) else { return nil }
        if let traceparent = object["traceparent"] {
            guard let text = traceparent.stringValue, text.count <= 128 else { return nil }
        }
        if let profile = object["expectedProfileId"], profile.stringValue == nil { return nil }
        return RequestFrame(id: id, method: method, params: object["params"])
    }

    /// docs/protocol.md §3.6: the highest version both sides offer. Ordinary clients get the profile's window
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

    /// The real Gateway's `retryAfterMs` while it starts up (`startup-unavailable.ts`).
    public static let defaultStartingUpRetryAfterMs = 500

    /// Start-up (`startup-unavailable.ts`; checked before the protocol, see `evaluate`).
    static func startingUp(retryAfterMs: Int) -> Rejection {
        Rejection(
            stage: .startup, requestID: nil,
            error: ErrorShape(
                code: ErrorCode.unavailable.rawValue, message: "gateway starting; retry shortly",
                details: ["reason": "startup-sidecars"], retryable: true, retryAfterMs: retryAfterMs),
            closeCode: .tryAgainLater, closeReason: "gateway starting")
    }

    /// docs/protocol.md §3.7 step 5.
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
