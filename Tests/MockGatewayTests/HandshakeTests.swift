import Foundation
import GatewayProtocol
import TestSupport
import Testing

@testable import MockGateway

// MARK: - Fixtures

/// Builders for first frames and token stores.
private enum HandshakeFixture {
    static let nonce = "3f0c6c1e-8f0e-4a8b-9d57-1c2b7e9a4d11"
    static let now = 1_767_225_600_000

    static let identity: DeviceIdentity? = try? DeviceIdentity(seed: Data((0..<32).map { UInt8($0) }))

    static func configuration(
        auth: GatewayAuthMode = .none, profile: GatewayProfile = .current, startingUp: Bool = false
    ) -> ConnectAdmission.Configuration {
        ConnectAdmission.Configuration(auth: auth, profile: profile, isStartingUp: startingUp)
    }

    /// Connect params; with `signed`, a v3 device block signed over the final params.
    static func params(
        clientID: ClientID = .iOS, mode: ClientMode = .node, role: GatewayRole? = .node, scopes: [String]? = [],
        minProtocol: Int = 4, maxProtocol: Int = 4, auth: ConnectAuth? = nil, signed: Bool = true,
        signedAt: Int = HandshakeFixture.now, nonce: String = HandshakeFixture.nonce
    ) throws -> ConnectParams {
        var params = ConnectParams(
            minProtocol: minProtocol, maxProtocol: maxProtocol,
            client: ClientInfo(id: clientID, version: "2026.8.1", platform: "iOS 18.4.0", deviceFamily: "iPhone", mode: mode),
            role: role, scopes: scopes, auth: auth)
        if signed {
            let identity = try #require(identity)
            params.device = DeviceProof(id: identity.deviceId, publicKey: identity.publicKeyBase64URL, signature: "", signedAt: signedAt, nonce: nonce)
            let payload = DeviceAuthPayload.build(.v3, for: params) ?? ""
            params.device?.signature = identity.sign(payload)
        }
        return params
    }

    static func message(_ params: ConnectParams, id: String = "req-1") throws -> Data {
        Frame.request(RequestFrame(id: id, method: "connect", params: try JSONValue(encoding: params))).encoded()
    }

    static func message(json: JSONValue) -> Data { json.encoded() }

    static func evaluate(
        _ message: Data, configuration: ConnectAdmission.Configuration = HandshakeFixture.configuration(),
        nowMs: Int = HandshakeFixture.now, credentials: RecordingCredentials = RecordingCredentials()
    ) -> (ConnectAdmission.Decision, RecordingCredentials) {
        var credentials = credentials
        let decision = ConnectAdmission.evaluate(
            message: message, nonce: nonce, nowMs: nowMs, configuration: configuration, credentials: &credentials)
        return (decision, credentials)
    }
}

/// Token stores and a rate limiter with fixed answers that record what they were asked.
private struct RecordingCredentials: ConnectCredentialVerifier {
    var validBootstrapTokens: Set<String> = []
    var validDeviceTokens: Set<String> = []
    var scopeMismatchTokens: Set<String> = []
    /// Scopes locked out, with the lockout left.
    var lockedOut: [AuthRateLimitScope: Int] = [:]
    var bootstrapChecks: [String] = []
    var deviceTokenChecks: [DeviceTokenCandidate] = []
    var failures: [AuthRateLimitScope] = []
    var resets: [AuthRateLimitScope] = []

    mutating func verifyBootstrapToken(_ token: String, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        bootstrapChecks.append(token)
        return validBootstrapTokens.contains(token) ? .valid : .invalid()
    }

    mutating func verifyDeviceToken(_ candidate: DeviceTokenCandidate, for request: ConnectCredentialRequest) -> ConnectCredentialVerdict {
        deviceTokenChecks.append(candidate)
        if scopeMismatchTokens.contains(candidate.value) { return .invalid(.scopeMismatch) }
        return validDeviceTokens.contains(candidate.value) ? .valid : .invalid()
    }

    mutating func rateLimitRetryAfterMs(_ scope: AuthRateLimitScope) -> Int? { lockedOut[scope] }
    mutating func recordAuthFailure(_ scope: AuthRateLimitScope) { failures.append(scope) }
    mutating func resetAuthFailures(_ scope: AuthRateLimitScope) { resets.append(scope) }
}

private func rejection(_ decision: ConnectAdmission.Decision, sourceLocation: SourceLocation = #_sourceLocation) throws -> ConnectAdmission.Rejection {
    try #require(decision.rejection, "expected a rejection, got \(decision)", sourceLocation: sourceLocation)
}

private func admitted(_ decision: ConnectAdmission.Decision, sourceLocation: SourceLocation = #_sourceLocation) throws -> ConnectAdmission.Admitted {
    try #require(decision.admitted, "expected admission, got \(String(describing: decision.rejection))", sourceLocation: sourceLocation)
}

// MARK: - First frame

@Suite("Handshake: first frame")
struct HandshakeFirstFrameTests {
    @Test func signedNodeConnectIsAdmittedWithItsVerifiedDevice() throws {
        let (decision, _) = HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params()))
        let result = try admitted(decision)
        #expect(result.requestID == "req-1")
        #expect(result.role == .node)
        #expect(result.negotiatedProtocol == 4)
        #expect(!result.isLegacyProtocol)
        #expect(result.authMethod == .none)
        #expect(result.device?.deviceId == HandshakeFixture.identity?.deviceId)
        #expect(result.device?.payloadVersion == .v3)
    }

    @Test func oversizedFirstFrameClosesWith1009AndNoResponse() throws {
        let message = Data(repeating: 0x20, count: 64 * 1024 + 1)
        let result = try rejection(HandshakeFixture.evaluate(message).0)
        #expect(result.stage == .frameSize)
        #expect(result.closeCode == .messageTooBig)
        #expect(result.closeReason == "preauth payload too large")
        #expect(result.response == nil)
    }

    @Test func firstFrameOfExactlyTheLimitIsParsed() throws {
        var message = try HandshakeFixture.message(HandshakeFixture.params())
        message.append(Data(repeating: 0x20, count: 64 * 1024 - message.count))
        #expect(HandshakeFixture.evaluate(message).0.admitted != nil)
    }

    @Test func invalidJSONIsClosedWithAReasonAndNoResponse() throws {
        let result = try rejection(HandshakeFixture.evaluate(Data(#"{"type":"req","id":"c1","method":"connect","par"#.utf8)).0)
        #expect(result.stage == .firstFrame)
        #expect(result.error == ErrorShape(code: "INVALID_REQUEST", message: "invalid request frame: not valid JSON"))
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == "invalid request frame: not valid JSON")
        #expect(result.response == nil)
    }

    @Test func overDeepJSONIsClosedWithAReasonThatSaysSo() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let result = try rejection(HandshakeFixture.evaluate(Data(#"{"type":"req","id":"c1","method":"connect","params":\#(deep)}"#.utf8)).0)
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == "invalid request frame: JSON nested deeper than 512 levels")
        #expect(result.response == nil)
    }

    @Test func anotherMethodFirstIsRejectedWithItsIdEchoed() throws {
        let message = Frame.request(RequestFrame(id: "n1", method: "node.event", params: ["event": "x"])).encoded()
        let result = try rejection(HandshakeFixture.evaluate(message).0)
        #expect(result.error.message == "invalid handshake: first request must be connect")
        #expect(result.responseFrame == .failure(id: "n1", error: result.error))
        #expect(result.response == [
            "type": "res", "id": "n1", "ok": false,
            "error": ["code": "INVALID_REQUEST", "message": "invalid handshake: first request must be connect"],
        ])
        #expect(result.closeCode == .policyViolation)
    }

    /// A first frame that is not a request frame is not answered at all: only close 1008
    /// "invalid request frame" (upstream message-handler.ts).
    @Test(arguments: [
        Frame.event(EventFrame(event: "tick")).json,
        Frame.cancel(CancelFrame(id: "c")).json,
        Frame.response(.success(id: "r", payload: nil)).json,
        ["id": 1, "method": "connect", "params": ["protocolVersion": 3, "token": "x"]],
        ["type": "req", "id": 1, "method": "connect", "params": [:]],
        ["type": "req", "id": "", "method": "connect"],
        ["type": "req", "id": "r", "method": "connect", "params": [:], "extra": true],
        ["type": "req", "id": "r", "method": "connect", "traceparent": .string(String(repeating: "0", count: 129))],
        [1, 2, 3],
    ] as [JSONValue])
    func aFirstFrameThatIsNotARequestFrameGetsNoResponse(_ frame: JSONValue) throws {
        let result = try rejection(HandshakeFixture.evaluate(HandshakeFixture.message(json: frame)).0)
        #expect(result.stage == .firstFrame)
        #expect(result.requestID == nil)
        #expect(result.response == nil)
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == "invalid request frame")
    }

    @Test func theNewerRequestFrameMembersAreTolerated() throws {
        var frame = try #require(Frame.request(RequestFrame(id: "r", method: "connect",
                                                            params: try JSONValue(encoding: HandshakeFixture.params()))).json.objectValue)
        frame["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        frame["expectedProfileId"] = "profile-1"
        #expect(HandshakeFixture.evaluate(HandshakeFixture.message(json: .object(frame))).0.admitted != nil)
    }

    @Test func missingParamsNameTheRoot() throws {
        let message = Frame.request(RequestFrame(id: "r", method: "connect")).encoded()
        let result = try rejection(HandshakeFixture.evaluate(message).0)
        #expect(result.error == ErrorShape(code: "INVALID_REQUEST", message: "invalid connect params: at root: must be object"))
        #expect(result.closeReason == "invalid connect params: at root: must be object")
        #expect(result.requestID == "r")
    }

    @Test func schemaErrorsCarryTheirJSONPointer() throws {
        var json = try JSONValue(encoding: HandshakeFixture.params()).objectValue ?? [:]
        json["client"] = ["id": 42, "version": "1", "platform": "iOS", "mode": "node"]
        let message = Frame.request(RequestFrame(id: "r", method: "connect", params: .object(json))).encoded()
        let result = try rejection(HandshakeFixture.evaluate(message).0)
        #expect(result.stage == .firstFrame)
        #expect(result.error.message == "invalid connect params: at /client/id: must be string")
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == result.error.message)
    }

    @Test func unknownClientIdAndModeAreRefused() throws {
        let id = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(clientID: "moltbot-ios"))).0)
        #expect(id.error == ErrorShape(code: "INVALID_REQUEST",
                                       message: "invalid connect params: at /client/id: must be equal to one of the allowed values"))
        #expect(id.requestID == "req-1")
        let mode = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(mode: "operator"))).0)
        #expect(mode.error.message == "invalid connect params: at /client/mode: must be equal to one of the allowed values")
    }

    @Test func anUnknownMemberIsRefusedNamingIt() throws {
        var json = try JSONValue(encoding: HandshakeFixture.params()).objectValue ?? [:]
        if case .object(var device)? = json["device"] {
            device["extra"] = 1
            json["device"] = .object(device)
        }
        let message = Frame.request(RequestFrame(id: "r", method: "connect", params: .object(json))).encoded()
        let result = try rejection(HandshakeFixture.evaluate(message).0)
        #expect(result.error.message == "invalid connect params: at /device: unexpected property 'extra'")
        #expect(result.closeCode == .policyViolation)
        #expect(result.response?["id"] == "r")
    }

    @Test func aMissingNonceIsASchemaErrorButABlankNonceIsNonceRequired() throws {
        var json = try JSONValue(encoding: HandshakeFixture.params()).objectValue ?? [:]
        if case .object(var device)? = json["device"] {
            device["nonce"] = nil
            json["device"] = .object(device)
        }
        let missing = Frame.request(RequestFrame(id: "r", method: "connect", params: .object(json))).encoded()
        let result = try rejection(HandshakeFixture.evaluate(missing).0)
        #expect(result.stage == .firstFrame)
        #expect(result.error == ErrorShape(code: "INVALID_REQUEST",
                                           message: "invalid connect params: at /device: must have required property 'nonce'"))
        #expect(result.detailCode == nil)
        // Protocol-3-era Gateways let it through to the proof check.
        let legacy = try rejection(HandshakeFixture.evaluate(missing, configuration: HandshakeFixture.configuration(profile: .legacy)).0)
        #expect(legacy.detailCode == "DEVICE_AUTH_NONCE_REQUIRED")
        let blank = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(nonce: "  "))).0)
        #expect(blank.stage == .deviceProof)
        #expect(blank.detailCode == "DEVICE_AUTH_NONCE_REQUIRED")
    }

    @Test func longCloseReasonsAreCutTo120Bytes() throws {
        var json = try JSONValue(encoding: HandshakeFixture.params()).objectValue ?? [:]
        json["permissions"] = .object([String(repeating: "é", count: 150): "yes"])
        let message = Frame.request(RequestFrame(id: "r", method: "connect", params: .object(json))).encoded()
        let result = try rejection(HandshakeFixture.evaluate(message).0)
        #expect(result.error.message.utf8.count > 120)
        #expect(result.closeReason.utf8.count <= 120)
        #expect(result.error.message.hasPrefix(result.closeReason))
    }

    @Test func theStateMachineDecidesOnceAndIgnoresLaterFrames() throws {
        var admission = ConnectAdmission(nonce: HandshakeFixture.nonce, configuration: HandshakeFixture.configuration())
        #expect(admission.decision == nil)
        let message = try HandshakeFixture.message(HandshakeFixture.params())
        let first = admission.receive(message, nowMs: HandshakeFixture.now)
        #expect(first?.admitted != nil)
        #expect(admission.decision == first)
        let second = admission.receive(message, nowMs: HandshakeFixture.now)
        #expect(second == nil)
    }

    @Test func connectAfterTheHandshakeHasItsOwnError() {
        #expect(ConnectAdmission.connectAfterHandshakeError == ErrorShape(code: "INVALID_REQUEST", message: "connect is only valid as the first request"))
    }
}

// MARK: - Protocol, startup, role

@Suite("Handshake: protocol negotiation, startup and role")
struct HandshakeNegotiationTests {
    @Test func aRangeContainingTheCurrentVersionNegotiatesIt() throws {
        let params = try HandshakeFixture.params(minProtocol: 3, maxProtocol: 5)
        #expect(try admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(params)).0).negotiatedProtocol == 4)
    }

    @Test func aNodeOfferingOnlyThreeGetsTheLegacyWindow() throws {
        let params = try HandshakeFixture.params(minProtocol: 3, maxProtocol: 3)
        let result = try admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(params)).0)
        #expect(result.negotiatedProtocol == 3)
        #expect(result.isLegacyProtocol)
    }

    @Test func aProbeOfferingOnlyThreeGetsTheLegacyWindow() throws {
        // A probe has no device identity: it authenticates with the shared token.
        let params = try HandshakeFixture.params(clientID: .probe, mode: .probe, role: nil, scopes: nil, minProtocol: 3, maxProtocol: 3,
                                                 auth: ConnectAuth(token: "probe-secret"), signed: false)
        let result = try admitted(HandshakeFixture.evaluate(
            try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("probe-secret"))).0)
        #expect(result.negotiatedProtocol == 3)
        #expect(result.role == .operator)
        #expect(result.device == nil)
    }

    @Test func anOperatorOfferingOnlyThreeGetsProtocolMismatch() throws {
        let params = try HandshakeFixture.params(mode: .ui, role: .operator, minProtocol: 3, maxProtocol: 3)
        let result = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params, id: "9E2C")).0)
        #expect(result.stage == .protocolNegotiation)
        #expect(result.error == ErrorShape(
            code: "INVALID_REQUEST", message: "protocol mismatch",
            details: ["code": "PROTOCOL_MISMATCH", "clientMinProtocol": 3, "clientMaxProtocol": 3, "expectedProtocol": 4, "minimumProbeProtocol": 3]))
        #expect(result.closeCode == .protocolError)
        #expect(result.closeCode.rawValue == 1002)
        #expect(result.closeReason == "protocol mismatch")
        #expect(result.requestID == "9E2C")
    }

    @Test func aNodeRoleWithAnotherModeGetsNoLegacyWindow() throws {
        let params = try HandshakeFixture.params(mode: .ui, role: .node, minProtocol: 3, maxProtocol: 3)
        #expect(try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params)).0).detailCode == "PROTOCOL_MISMATCH")
    }

    @Test func aNodeBelowTheLegacyWindowGetsProtocolMismatch() throws {
        let params = try HandshakeFixture.params(minProtocol: 2, maxProtocol: 2)
        let result = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params)).0)
        #expect(result.error.details?["clientMinProtocol"] == 2)
        #expect(result.error.details?["clientMaxProtocol"] == 2)
    }

    @Test func aClientAheadOfTheGatewayGetsProtocolMismatch() throws {
        let params = try HandshakeFixture.params(minProtocol: 5, maxProtocol: 6)
        #expect(try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params)).0).stage == .protocolNegotiation)
    }

    @Test func theLegacyProfileAcceptsAThreeOnlyOperator() throws {
        let params = try HandshakeFixture.params(mode: .ui, role: .operator, minProtocol: 3, maxProtocol: 3)
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(profile: .legacy)).0
        #expect(try admitted(decision).negotiatedProtocol == 3)
    }

    @Test func startingUpAnswersUnavailableAndCloses1013() throws {
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params()), configuration: HandshakeFixture.configuration(startingUp: true)).0
        let result = try rejection(decision)
        #expect(result.stage == .startup)
        #expect(result.error == ErrorShape(
            code: "UNAVAILABLE", message: "gateway starting; retry shortly", details: ["reason": "startup-sidecars"],
            retryable: true, retryAfterMs: 500))
        #expect(result.closeCode.rawValue == 1013)
        #expect(result.closeReason == "gateway starting")
        #expect(result.requestID == "req-1")
    }

    /// connect-admission.ts @0186e586: `isStartupPending` is checked before the protocol.
    @Test func startingUpIsReportedBeforeAProtocolMismatch() throws {
        let params = try HandshakeFixture.params(minProtocol: 1, maxProtocol: 1)
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(startingUp: true)).0
        #expect(try rejection(decision).stage == .startup)
    }

    @Test func startingUpIsReportedBeforeAnUnknownRole() throws {
        let params = try HandshakeFixture.params(role: "admin")
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(startingUp: true)).0
        #expect(try rejection(decision).stage == .startup)
    }

    @Test func anUnknownRoleIsRejectedWith1008() throws {
        let result = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(role: "admin"))).0)
        #expect(result.stage == .role)
        #expect(result.error == ErrorShape(code: "INVALID_REQUEST", message: "invalid role"))
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == "invalid role")
    }

    @Test func anAbsentRoleIsOperatorAndAWorkerIsKnown() throws {
        let operatorParams = try HandshakeFixture.params(mode: .cli, role: nil, scopes: nil, auth: ConnectAuth(token: "cli-secret"), signed: false)
        let configuration = HandshakeFixture.configuration(auth: .token("cli-secret"))
        #expect(try admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(operatorParams), configuration: configuration).0).role == .operator)
        let workerParams = try HandshakeFixture.params(mode: .worker, role: .worker, signed: false)
        #expect(try admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(workerParams)).0).role == .worker)
    }
}

// MARK: - Authentication

@Suite("Handshake: authentication")
struct HandshakeAuthenticationTests {
    private func authRejection(
        _ params: ConnectParams, mode: GatewayAuthMode, credentials: RecordingCredentials = RecordingCredentials()
    ) throws -> ConnectAdmission.Rejection {
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: mode), credentials: credentials).0
        let result = try rejection(decision)
        #expect(result.stage == .authentication)
        #expect(result.error.code == "INVALID_REQUEST")
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == result.error.message)
        return result
    }

    @Test func theRightSharedTokenAuthenticates() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "s3cret"))
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret"))).0
        #expect(try admitted(decision).authMethod == .sharedToken)
    }

    @Test func aMissingSharedTokenIsAuthTokenMissing() throws {
        let result = try authRejection(HandshakeFixture.params(), mode: .token("s3cret"))
        #expect(result.error.message == "unauthorized: gateway token missing (provide gateway auth token)")
        // handshake-auth-helpers.ts @66072549: a missing credential is a configuration problem.
        #expect(result.error.details == [
            "code": "AUTH_TOKEN_MISSING", "authReason": "token_missing", "canRetryWithDeviceToken": false,
            "recommendedNextStep": "update_auth_configuration",
        ])
    }

    @Test func aWrongSharedTokenFromADeviceMayRetryWithItsDeviceToken() throws {
        let result = try authRejection(HandshakeFixture.params(auth: ConnectAuth(token: "wrong")), mode: .token("s3cret"))
        #expect(result.error.message == "unauthorized: gateway token mismatch (provide gateway auth token)")
        #expect(result.error.details == [
            "code": "AUTH_TOKEN_MISMATCH", "authReason": "token_mismatch", "canRetryWithDeviceToken": true,
            "recommendedNextStep": "retry_with_device_token",
        ])
    }

    @Test func aWrongSharedTokenWithoutDeviceOrAfterTheRetryCannotRetry() throws {
        let deviceless = try HandshakeFixture.params(mode: .cli, role: .operator, auth: ConnectAuth(token: "wrong"), signed: false)
        let first = try authRejection(deviceless, mode: .token("s3cret"))
        #expect(first.error.details?["canRetryWithDeviceToken"] == false)
        #expect(first.error.details?["recommendedNextStep"] == "update_auth_credentials")
        #expect(first.error.message == "unauthorized: gateway token mismatch (set gateway.remote.token to match gateway.auth.token)")
        // The explicit device token sent as the retry is refused: that is a device-token mismatch.
        let retried = try authRejection(HandshakeFixture.params(auth: ConnectAuth(token: "wrong", deviceToken: "stale")), mode: .token("s3cret"))
        #expect(retried.detailCode == "AUTH_DEVICE_TOKEN_MISMATCH")
        #expect(retried.error.details?["canRetryWithDeviceToken"] == false)
    }

    @Test func anUnconfiguredSharedTokenIsAuthTokenNotConfigured() throws {
        let result = try authRejection(HandshakeFixture.params(auth: ConnectAuth(token: "x")), mode: .token(""))
        #expect(result.detailCode == "AUTH_TOKEN_NOT_CONFIGURED")
        #expect(result.error.details?["recommendedNextStep"] == "update_auth_configuration")
        #expect(result.error.message == "unauthorized: gateway token not configured on gateway (set gateway.auth.token)")
    }

    @Test func passwordModeChecksAuthPassword() throws {
        let missing = try authRejection(HandshakeFixture.params(auth: ConnectAuth(token: "pw")), mode: .password("pw"))
        #expect(missing.detailCode == "AUTH_PASSWORD_MISSING")
        #expect(missing.error.details?["authReason"] == "password_missing")
        let wrong = try authRejection(HandshakeFixture.params(auth: ConnectAuth(password: "nope")), mode: .password("pw"))
        #expect(wrong.detailCode == "AUTH_PASSWORD_MISMATCH")
        #expect(wrong.error.message == "unauthorized: gateway password mismatch (provide gateway auth password)")
        let unconfigured = try authRejection(HandshakeFixture.params(auth: ConnectAuth(password: "pw")), mode: .password(""))
        #expect(unconfigured.detailCode == "AUTH_PASSWORD_NOT_CONFIGURED")
        let decision = HandshakeFixture.evaluate(
            try HandshakeFixture.message(HandshakeFixture.params(auth: ConnectAuth(password: "pw"))),
            configuration: HandshakeFixture.configuration(auth: .password("pw"))).0
        #expect(try admitted(decision).authMethod == .password)
    }

    @Test func aStoredDeviceTokenSentAsTokenAuthenticatesAsDeviceToken() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "device-tok"))
        var credentials = RecordingCredentials()
        credentials.validDeviceTokens = ["device-tok"]
        let (decision, seen) = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret")), credentials: credentials)
        #expect(try admitted(decision).authMethod == .deviceToken(DeviceTokenCandidate(value: "device-tok", source: .tokenField)))
        #expect(seen.deviceTokenChecks == [DeviceTokenCandidate(value: "device-tok", source: .tokenField)])
    }

    @Test func anExplicitDeviceTokenIsTheCandidateOverToken() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "wrong-shared", deviceToken: "device-tok"))
        var credentials = RecordingCredentials()
        credentials.validDeviceTokens = ["device-tok"]
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret")), credentials: credentials).0
        #expect(try admitted(decision).authMethod == .deviceToken(DeviceTokenCandidate(value: "device-tok", source: .deviceTokenField)))
    }

    @Test func anUnknownTokenInAuthTokenLeavesTheSharedMismatchStanding() throws {
        let result = try authRejection(HandshakeFixture.params(auth: ConnectAuth(token: "revoked")), mode: .token("s3cret"))
        #expect(result.detailCode == "AUTH_TOKEN_MISMATCH")
    }

    @Test func anUnknownExplicitDeviceTokenIsAuthDeviceTokenMismatch() throws {
        let result = try authRejection(HandshakeFixture.params(auth: ConnectAuth(deviceToken: "revoked")), mode: .token("s3cret"))
        #expect(result.error.details == [
            "code": "AUTH_DEVICE_TOKEN_MISMATCH", "authReason": "device_token_mismatch", "canRetryWithDeviceToken": false,
            "recommendedNextStep": "update_auth_credentials",
        ])
        #expect(result.error.message == "unauthorized: device token mismatch (rotate/reissue device token)")
    }

    @Test func aValidBootstrapTokenAuthenticatesWithoutTheSharedToken() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(bootstrapToken: "bt-1"))
        var credentials = RecordingCredentials()
        credentials.validBootstrapTokens = ["bt-1"]
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret")), credentials: credentials).0
        #expect(try admitted(decision).authMethod == .bootstrapToken("bt-1"))
    }

    @Test func aValidBootstrapTokenWinsOverAPassingSharedSecret() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "s3cret", bootstrapToken: "bt-1"))
        var credentials = RecordingCredentials()
        credentials.validBootstrapTokens = ["bt-1"]
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret")), credentials: credentials).0
        #expect(try admitted(decision).authMethod == .bootstrapToken("bt-1"))
        let none = HandshakeFixture.evaluate(try HandshakeFixture.message(params), credentials: credentials).0
        #expect(try admitted(none).authMethod == .bootstrapToken("bt-1"))
    }

    @Test func anInvalidBootstrapTokenIsAuthBootstrapTokenInvalid() throws {
        let result = try authRejection(HandshakeFixture.params(auth: ConnectAuth(bootstrapToken: "expired")), mode: .token("s3cret"))
        #expect(result.detailCode == "AUTH_BOOTSTRAP_TOKEN_INVALID")
        #expect(result.error.details?["authReason"] == "bootstrap_token_invalid")
        #expect(result.error.message == "unauthorized: bootstrap token invalid or expired (scan a fresh setup code)")
    }

    @Test func anInvalidBootstrapTokenDoesNotMatterWhenTheSharedSecretPassed() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "s3cret", bootstrapToken: "expired"))
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret"))).0
        #expect(try admitted(decision).authMethod == .sharedToken)
    }

    @Test func modeNoneNeverLooksAtDeviceTokens() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "stale", deviceToken: "stale"))
        let (decision, seen) = HandshakeFixture.evaluate(try HandshakeFixture.message(params))
        #expect(try admitted(decision).authMethod == .none)
        #expect(seen.deviceTokenChecks.isEmpty)
    }

    @Test func tokensOfAConnectWithoutDeviceAreNeverLookedUp() throws {
        let params = try HandshakeFixture.params(mode: .cli, role: .operator, auth: ConnectAuth(token: "t", bootstrapToken: "b", deviceToken: "d"), signed: false)
        var credentials = RecordingCredentials()
        credentials.validBootstrapTokens = ["b"]
        credentials.validDeviceTokens = ["d"]
        let (decision, seen) = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret")), credentials: credentials)
        #expect(try rejection(decision).detailCode == "AUTH_TOKEN_MISMATCH")
        #expect(seen.bootstrapChecks.isEmpty)
        #expect(seen.deviceTokenChecks.isEmpty)
    }

    @Test func aLockedOutAddressIsRefusedWithRetryableAndRetryAfterMs() throws {
        var credentials = RecordingCredentials()
        credentials.lockedOut[.sharedSecret] = 30_000
        // Even the right secret: the limiter is asked before any comparison (auth.ts @00893f86).
        let result = try authRejection(HandshakeFixture.params(auth: ConnectAuth(token: "s3cret")), mode: .token("s3cret"),
                                       credentials: credentials)
        #expect(result.detailCode == "AUTH_RATE_LIMITED")
        #expect(result.error.retryable == true)
        #expect(result.error.retryAfterMs == 30_000)
        #expect(result.error.details?["recommendedNextStep"] == "wait_then_retry")
        #expect(result.error.message == "unauthorized: too many failed authentication attempts (retry later)")
    }

    @Test func aWrongSecretIsCountedAMissingOneIsNotAndARightOneResets() throws {
        let wrong = HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(auth: ConnectAuth(token: "guess"))),
                                              configuration: HandshakeFixture.configuration(auth: .token("s3cret"))).1
        #expect(wrong.failures.contains(.sharedSecret))
        let missing = HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params()),
                                                configuration: HandshakeFixture.configuration(auth: .token("s3cret"))).1
        #expect(missing.failures.isEmpty)
        let right = HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(auth: ConnectAuth(token: " s3cret "))),
                                              configuration: HandshakeFixture.configuration(auth: .token("s3cret")))
        #expect(try admitted(right.0).authMethod == .sharedToken)
        #expect(right.1.resets == [.sharedSecret])
    }

    @Test func aLockedOutDeviceTokenScopeRefusesTheDeviceToken() throws {
        var credentials = RecordingCredentials()
        credentials.validDeviceTokens = ["device-tok"]
        credentials.lockedOut[.deviceToken] = 5_000
        let result = try authRejection(HandshakeFixture.params(auth: ConnectAuth(token: "device-tok")), mode: .token("s3cret"),
                                       credentials: credentials)
        #expect(result.detailCode == "AUTH_RATE_LIMITED")
        #expect(result.error.retryAfterMs == 5_000)
    }

    @Test func aRecognisedTokenThatDoesNotCoverTheScopesIsAScopeMismatchInEitherField() throws {
        var credentials = RecordingCredentials()
        credentials.scopeMismatchTokens = ["device-tok"]
        for auth in [ConnectAuth(token: "device-tok"), ConnectAuth(deviceToken: "device-tok")] {
            let result = try authRejection(HandshakeFixture.params(auth: auth), mode: .token("s3cret"), credentials: credentials)
            #expect(result.detailCode == "AUTH_SCOPE_MISMATCH")
            #expect(result.error.details?["recommendedNextStep"] == "review_auth_configuration")
        }
    }

    /// connect-auth.ts @9b6c33a7: the device proof is verified before the bootstrap / device
    /// token decision, so a bad proof with a bad token is a device-auth failure.
    @Test func aBadProofWithABadTokenIsADeviceAuthFailure() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "wrong"), nonce: "not-the-challenge")
        let (decision, seen) = HandshakeFixture.evaluate(try HandshakeFixture.message(params),
                                                         configuration: HandshakeFixture.configuration(auth: .token("s3cret")))
        let result = try rejection(decision)
        #expect(result.stage == .deviceProof)
        #expect(result.detailCode == "DEVICE_AUTH_NONCE_MISMATCH")
        #expect(seen.deviceTokenChecks.isEmpty)
    }

    @Test func aBootstrapTokenIsNeverVerifiedForADeviceWhoseProofFailed() throws {
        let stale = try HandshakeFixture.params(auth: ConnectAuth(bootstrapToken: "bt-1"), signedAt: HandshakeFixture.now - 10 * 60_000)
        var credentials = RecordingCredentials()
        credentials.validBootstrapTokens = ["bt-1"]
        let (decision, seen) = HandshakeFixture.evaluate(try HandshakeFixture.message(stale),
                                                         configuration: HandshakeFixture.configuration(auth: .token("s3cret")),
                                                         credentials: credentials)
        #expect(try rejection(decision).detailCode == "DEVICE_AUTH_SIGNATURE_EXPIRED")
        #expect(seen.bootstrapChecks.isEmpty)
    }

    @Test func aFailedBootstrapTokenIsCountedOnlyWhenTheConnectFails() throws {
        let failed = HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(auth: ConnectAuth(bootstrapToken: "bad"))),
                                               configuration: HandshakeFixture.configuration(auth: .token("s3cret"))).1
        #expect(failed.failures == [.bootstrapToken])
        var credentials = RecordingCredentials()
        credentials.validDeviceTokens = ["device-tok"]
        let rescued = HandshakeFixture.evaluate(
            try HandshakeFixture.message(HandshakeFixture.params(auth: ConnectAuth(bootstrapToken: "bad", deviceToken: "device-tok"))),
            configuration: HandshakeFixture.configuration(auth: .token("s3cret")), credentials: credentials)
        #expect(try admitted(rescued.0).authMethod == .deviceToken(DeviceTokenCandidate(value: "device-tok", source: .deviceTokenField)))
        #expect(rescued.1.failures.isEmpty)
    }

    @Test func authenticationFailsBeforeTheMissingDeviceIsNoticed() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(token: "wrong"), signed: false)
        let result = try authRejection(params, mode: .token("s3cret"))
        #expect(result.detailCode == "AUTH_TOKEN_MISMATCH")
        #expect(result.error.details?["canRetryWithDeviceToken"] == false)
    }

    @Test func closureStoresAreCalledAndMayMutateCallerState() throws {
        let params = try HandshakeFixture.params(auth: ConnectAuth(bootstrapToken: "bt-1"))
        var bound: [String] = []
        let decision = ConnectAdmission.evaluate(
            message: try HandshakeFixture.message(params), nonce: HandshakeFixture.nonce, nowMs: HandshakeFixture.now,
            configuration: HandshakeFixture.configuration(auth: .token("s3cret")),
            verifyBootstrapToken: { token, request in
                bound.append("\(token)@\(request.deviceId)")
                return .valid
            },
            verifyDeviceToken: { _, _ in .invalid() })
        #expect(try admitted(decision).authMethod == .bootstrapToken("bt-1"))
        #expect(bound == ["bt-1@\(HandshakeFixture.identity?.deviceId ?? "")"])
    }
}

// MARK: - Device identity and proof

@Suite("Handshake: device identity and proof")
struct HandshakeDeviceTests {
    @Test func aNodeWithoutDeviceIsNotPaired() throws {
        let result = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(HandshakeFixture.params(signed: false))).0)
        #expect(result.stage == .deviceIdentity)
        #expect(result.error == ErrorShape(code: "NOT_PAIRED", message: "device identity required", details: ["code": "DEVICE_IDENTITY_REQUIRED"]))
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == "device identity required")
    }

    @Test func anOperatorWithoutDeviceOnAuthNoneIsNotPaired() throws {
        // Upstream (connect-policy.ts@9b6c33a7): auth mode none proves nothing, so only a local
        // backend may leave out the device; this one is refused even through loopback.
        let params = try HandshakeFixture.params(mode: .ui, role: .operator, scopes: ["operator.admin"], signed: false)
        var configuration = HandshakeFixture.configuration()
        configuration.connection = ConnectAdmission.ConnectionFacts(isLoopback: true, host: "127.0.0.1:18789")
        let result = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0)
        #expect(result.stage == .deviceIdentity)
        #expect(result.error == ErrorShape(code: "NOT_PAIRED", message: "device identity required", details: ["code": "DEVICE_IDENTITY_REQUIRED"]))
        #expect(result.requestID == "req-1")
        #expect(result.closeCode == .policyViolation)
    }

    @Test func anOperatorWithoutDeviceIsAdmittedByTheSharedTokenWithoutItsScopes() throws {
        let params = try HandshakeFixture.params(clientID: .macOS, mode: .ui, role: .operator, scopes: ["operator.admin"],
                                                 auth: ConnectAuth(token: "s3cret"), signed: false)
        let result = try admitted(HandshakeFixture.evaluate(
            try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret"))).0)
        #expect(result.device == nil)
        #expect(result.authMethod == .sharedToken)
        #expect(!result.keepsUnboundScopes, "self-declared scopes without a device are cleared")
    }

    @Test func theLocalCLIKeepsItsScopesWithTheSharedToken() throws {
        let params = try HandshakeFixture.params(clientID: .cli, mode: .cli, role: .operator, scopes: ["operator.admin"],
                                                 auth: ConnectAuth(token: "s3cret"), signed: false)
        var configuration = HandshakeFixture.configuration(auth: .token("s3cret"))
        configuration.connection = ConnectAdmission.ConnectionFacts(isLoopback: true, host: "localhost:18789")
        #expect(try admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0).keepsUnboundScopes)
        // The same CLI from another machine loses them; through a proxy it is not local either.
        configuration.connection = ConnectAdmission.ConnectionFacts(isLoopback: false, host: "gateway.lan:18789")
        #expect(try !admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0).keepsUnboundScopes)
        configuration.connection = ConnectAdmission.ConnectionFacts(isLoopback: true, host: "localhost", hasProxyHeaders: true)
        #expect(try !admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0).keepsUnboundScopes)
    }

    @Test func aLocalBackendMayOmitTheDeviceOnAuthNoneAndKeepsItsScopes() throws {
        let params = try HandshakeFixture.params(clientID: .gatewayClient, mode: .backend, role: .operator, scopes: ["operator.admin"],
                                                 signed: false)
        var configuration = HandshakeFixture.configuration()
        configuration.connection = ConnectAdmission.ConnectionFacts(isLoopback: true, host: "127.0.0.1:18789")
        let local = try admitted(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0)
        #expect(local.keepsUnboundScopes)
        #expect(local.authMethod == .none)
        // Not local: a LAN peer, a loopback peer with a LAN Host header, or a browser.
        for facts in [ConnectAdmission.ConnectionFacts(isLoopback: false, host: "127.0.0.1"),
                      ConnectAdmission.ConnectionFacts(isLoopback: true, host: "192.168.1.20:18789"),
                      ConnectAdmission.ConnectionFacts(isLoopback: true, host: "localhost", hasBrowserOrigin: true)] {
            configuration.connection = facts
            #expect(try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0).detailCode
                    == "DEVICE_IDENTITY_REQUIRED", "\(facts)")
        }
    }

    @Test func theControlUIWithoutDeviceIsRefusedEvenWithTheToken() throws {
        let params = try HandshakeFixture.params(clientID: .controlUI, mode: .webchat, role: .operator, scopes: ["operator.admin"],
                                                 auth: ConnectAuth(token: "s3cret"), signed: false)
        var configuration = HandshakeFixture.configuration(auth: .token("s3cret"))
        configuration.connection = ConnectAdmission.ConnectionFacts(isLoopback: true, host: "localhost")
        let result = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0)
        #expect(result.error == ErrorShape(
            code: "INVALID_REQUEST", message: "control ui requires device identity (use HTTPS or localhost secure context)",
            details: ["code": "CONTROL_UI_DEVICE_IDENTITY_REQUIRED"]))
        #expect(result.closeCode == .policyViolation)
    }

    @Test func aDeviceLessNodeWithoutASharedSecretIsNotPairedEvenWhenTheTokenIsMissing() throws {
        // Upstream decides the missing device before the missing token: nothing was sent that
        // could fail, so the answer is "device identity required".
        let params = try HandshakeFixture.params(signed: false)
        let configuration = HandshakeFixture.configuration(auth: .token("s3cret"))
        #expect(try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: configuration).0).detailCode
                == "DEVICE_IDENTITY_REQUIRED")
        // A wrong token is the auth failure.
        let wrong = try HandshakeFixture.params(auth: ConnectAuth(token: "wrong"), signed: false)
        #expect(try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(wrong), configuration: configuration).0).detailCode
                == "AUTH_TOKEN_MISMATCH")
        // A right token still leaves a node without its device.
        let right = try HandshakeFixture.params(auth: ConnectAuth(token: "s3cret"), signed: false)
        #expect(try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(right), configuration: configuration).0).detailCode
                == "DEVICE_IDENTITY_REQUIRED")
    }

    /// connect-policy.ts `evaluateMissingDeviceIdentity`: only an operator whose shared secret
    /// verified may go without a device.
    @Test func anOperatorWithoutDeviceNeedsAVerifiedSharedSecret() throws {
        let params = try HandshakeFixture.params(mode: .ui, role: .operator, scopes: ["operator.read"], auth: ConnectAuth(token: "s3cret"),
                                                 signed: false)
        let shared = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(auth: .token("s3cret")))
        #expect(try admitted(shared.0).device == nil)
        let none = try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params)).0)
        #expect(none.stage == .deviceIdentity)
        #expect(none.detailCode == "DEVICE_IDENTITY_REQUIRED")
    }

    @Test func anOperatorDeviceIsVerifiedToo() throws {
        let params = try HandshakeFixture.params(mode: .ui, role: .operator, scopes: ["operator.read"], nonce: "other")
        #expect(try rejection(HandshakeFixture.evaluate(try HandshakeFixture.message(params)).0).detailCode == "DEVICE_AUTH_NONCE_MISMATCH")
    }

    @Test func aStaleSignatureIsJudgedAgainstTheGivenClock() throws {
        let message = try HandshakeFixture.message(HandshakeFixture.params())
        let result = try rejection(HandshakeFixture.evaluate(message, nowMs: HandshakeFixture.now + 120_001).0)
        #expect(result.stage == .deviceProof)
        #expect(result.error == ErrorShape(
            code: "INVALID_REQUEST", message: "device signature expired",
            details: ["code": "DEVICE_AUTH_SIGNATURE_EXPIRED", "reason": "device-signature-stale"]))
        #expect(result.closeReason == "device signature expired")
        #expect(HandshakeFixture.evaluate(message, nowMs: HandshakeFixture.now + 120_000).0.admitted != nil)
    }

    @Test func aStartingGatewayAnswersBeforeCheckingTheDevice() throws {
        let params = try HandshakeFixture.params(nonce: "wrong")
        let decision = HandshakeFixture.evaluate(try HandshakeFixture.message(params), configuration: HandshakeFixture.configuration(startingUp: true)).0
        #expect(try rejection(decision).stage == .startup)
    }

    @Test func theLegacyV1SwitchAdmitsANoncelessV1SignatureOnTheLegacyProfile() throws {
        let identity = try #require(HandshakeFixture.identity)
        var params = try HandshakeFixture.params(signed: false)
        params.device = DeviceProof(id: identity.deviceId, publicKey: identity.publicKeyBase64URL, signature: "", signedAt: HandshakeFixture.now, nonce: nil)
        let payload = DeviceAuthPayload.build(.v1, for: params) ?? ""
        params.device?.signature = identity.sign(payload)
        let message = try HandshakeFixture.message(params)
        // The current schema requires device.nonce.
        #expect(try rejection(HandshakeFixture.evaluate(message).0).stage == .firstFrame)
        var configuration = HandshakeFixture.configuration(profile: .legacy)
        #expect(try rejection(HandshakeFixture.evaluate(message, configuration: configuration).0).detailCode == "DEVICE_AUTH_NONCE_REQUIRED")
        configuration.deviceProof = DeviceProofVerifier(acceptsLegacyV1: true)
        #expect(try admitted(HandshakeFixture.evaluate(message, configuration: configuration).0).device?.payloadVersion == .v1)
    }

    @Test func theSharedVectorsAreAvailable() {
        #expect(DeviceAuthVector.all.count >= 12)
    }

    @Test(arguments: DeviceAuthVector.all.filter(\.valid))
    func validVectorsAreAdmittedAtTheChallengeTime(_ vector: DeviceAuthVector) throws {
        let message = Frame.request(RequestFrame(id: "v", method: "connect", params: vector.connectParams)).encoded()
        var credentials = NoConnectCredentials()
        let decision = ConnectAdmission.evaluate(
            message: message, nonce: vector.challengeNonce, nowMs: vector.challengeTs, configuration: HandshakeFixture.configuration(), credentials: &credentials)
        let result = try admitted(decision)
        #expect(result.device?.deviceId == vector.connectParams["device"]?["id"]?.stringValue)
        #expect(result.negotiatedProtocol == 4)
    }

    @Test(arguments: DeviceAuthVector.all.filter { !$0.valid })
    func invalidVectorsAreRejectedWithTheirDetailCode(_ vector: DeviceAuthVector) throws {
        let message = Frame.request(RequestFrame(id: "v", method: "connect", params: vector.connectParams)).encoded()
        var admission = ConnectAdmission(nonce: vector.challengeNonce, configuration: HandshakeFixture.configuration())
        let received = admission.receive(message, nowMs: vector.challengeTs)
        let decision = try #require(received)
        let result = try rejection(decision)
        if let schemaError = vector.currentSchemaError {
            // A vector the current schema refuses (no device.nonce): the legacy profile lets it
            // through to the proof check, which answers its detail code.
            #expect(result.stage == .firstFrame)
            #expect(result.error.message == schemaError)
            var legacy = ConnectAdmission(nonce: vector.challengeNonce, configuration: HandshakeFixture.configuration(profile: .legacy))
            let legacyDecision = legacy.receive(message, nowMs: vector.challengeTs)
            let legacyResult = try rejection(try #require(legacyDecision))
            #expect(legacyResult.detailCode == vector.expectDetailsCode)
            return
        }
        #expect(result.stage == .deviceProof)
        #expect(result.detailCode == vector.expectDetailsCode)
        #expect(result.error.code == "INVALID_REQUEST")
        #expect(result.closeCode == .policyViolation)
        #expect(result.closeReason == result.error.message)
        #expect(result.response?["id"] == "v")
    }

    @Test func theSharedTokenVectorIsAdmittedInTokenMode() throws {
        let vector = try #require(DeviceAuthVector.all.first { $0.name == "macos-operator-v2-admin" })
        let message = Frame.request(RequestFrame(id: "v", method: "connect", params: vector.connectParams)).encoded()
        var credentials = NoConnectCredentials()
        let decision = ConnectAdmission.evaluate(
            message: message, nonce: vector.challengeNonce, nowMs: vector.challengeTs, configuration: HandshakeFixture.configuration(auth: .token("shared-secret")),
            credentials: &credentials)
        let result = try admitted(decision)
        #expect(result.authMethod == .sharedToken)
        #expect(result.device?.payloadVersion == .v2)
    }
}
