import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("PAIRING_REQUIRED error shape and close reason (docs/protocol.md §5.8)")
struct PairingErrorShapeTests {
    typealias F = PairingFixtures
    static let requestId = "0b5f1f8e-2c7a-4d59-9d0e-5e3a3c1f2b77"

    static func notPaired(requestId: String? = requestId) -> PairingRequiredRejection {
        PairingRequiredRejection(
            requirement: .notPaired, requestId: requestId, deviceId: F.deviceId, requestedRole: "node", requestedScopes: [])
    }

    @Test func notPairedMatchesTheSpecificationExample() {
        let expected = ErrorShape(
            code: "NOT_PAIRED", message: "pairing required: device is not approved yet",
            details: [
                "code": "PAIRING_REQUIRED", "reason": "not-paired", "requestId": .string(Self.requestId),
                "remediationHint": "Approve this device from the pending pairing requests.",
                "deviceId": .string(F.deviceId), "requestedRole": "node", "requestedScopes": [],
            ])
        #expect(Self.notPaired().errorShape(style: .current) == expected)
        #expect(Self.notPaired().closeReason(style: .current)
            == "pairing required: device is not approved yet (requestId: \(Self.requestId))")
        #expect(PairingRequiredRejection.closeCode.rawValue == 1008)
    }

    @Test func everyRequirementHasItsMessageAndHint() {
        let expected: [PairingRequirement: (String, String)] = [
            .notPaired: ("device is not approved yet", "Approve this device from the pending pairing requests."),
            .roleUpgrade: ("device is asking for a higher role than currently approved",
                           "Review the requested role upgrade, then approve the pending request."),
            .scopeUpgrade: ("device is asking for more scopes than currently approved",
                            "Review the requested scopes, then approve the pending upgrade."),
            .metadataUpgrade: ("device identity changed and must be re-approved",
                               "Review the refreshed device details, then approve the pending request."),
        ]
        for requirement in PairingRequirement.allCases {
            let rejection = PairingRequiredRejection(
                requirement: requirement, requestId: "r-1", deviceId: "d", requestedRole: "operator", requestedScopes: [])
            let shape = rejection.errorShape()
            #expect(shape.message == "pairing required: \(expected[requirement]?.0 ?? "")")
            #expect(shape.details?["remediationHint"] == .string(expected[requirement]?.1 ?? ""))
            #expect(shape.details?["reason"] == .string(requirement.rawValue))
            #expect(shape.detailCode == "PAIRING_REQUIRED")
        }
    }

    @Test func legacyStyleSendsTheBareMessageWithCodeReasonAndRequestId() {
        let shape = Self.notPaired().errorShape(style: .legacy)
        #expect(shape == ErrorShape(
            code: "NOT_PAIRED", message: "pairing required",
            details: ["code": "PAIRING_REQUIRED", "reason": "not-paired", "requestId": .string(Self.requestId)]))
        #expect(Self.notPaired().closeReason(style: .legacy) == "pairing required")
    }

    @Test func approvedAccessIsReportedOnlyForASameKeyRecord() throws {
        var store = try F.paired([F.iosOperator(scopes: [PairingScope.read])])
        guard case .rejected(let upgrade, _, _) = store.admit(F.iosOperator(scopes: [PairingScope.read, PairingScope.approvals]), nowMs: F.t0)
        else {
            Issue.record("expected a rejection")
            return
        }
        let details = upgrade.errorShape().details
        #expect(details?["reason"] == "scope-upgrade")
        #expect(details?["approvedRoles"] == ["operator"])
        #expect(details?["approvedScopes"] == ["operator.read"])
        #expect(details?["requestedScopes"] == ["operator.read", "operator.approvals"])

        guard case .rejected(let rekey, _, _) = store.admit(F.iosOperator(publicKey: F.otherKey), nowMs: F.t0) else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rekey.requirement == .notPaired)
        #expect(rekey.errorShape().details?["approvedRoles"] == nil)
        #expect(rekey.errorShape().details?["approvedScopes"] == nil)
    }

    @Test func aDetachedApprovalAsksTheClientToKeepRetrying() {
        var rejection = Self.notPaired()
        rejection.waitForDetachedApproval = true
        let details = rejection.errorShape().details
        #expect(details?["recommendedNextStep"] == "wait_then_retry")
        #expect(details?["retryable"] == true)
        #expect(details?["pauseReconnect"] == false)
        #expect(Self.notPaired().errorShape().details?["pauseReconnect"] == nil)
    }

    @Test func aRequestIdThatCannotBeEchoedIsLeftOut() {
        for bad in ["-leading-dash", "has space", "", String(repeating: "a", count: 129), "ünïcode"] {
            let rejection = Self.notPaired(requestId: bad)
            #expect(rejection.errorShape().details?["requestId"] == nil, "\(bad)")
            #expect(rejection.closeReason() == "pairing required: device is not approved yet", "\(bad)")
        }
        #expect(Self.notPaired(requestId: "A.b_c:d-9").echoableRequestId == "A.b_c:d-9")
    }

    @Test func theCloseReasonIsCutTo120Bytes() {
        let longId = String(repeating: "a", count: 128)
        let reason = Self.notPaired(requestId: longId).closeReason()
        #expect(reason.utf8.count == 120)
        #expect(reason.hasPrefix("pairing required: device is not approved yet (requestId: aaaa"))
        #expect(CloseReason.truncate("ééé", maxBytes: 5) == "éé")
    }

    @Test func aPairingErrorAnswersInvalidRequestWithTheRealMessage() {
        #expect(PairingError.unknownRequest("r").errorShape == ErrorShape(code: "INVALID_REQUEST", message: "unknown requestId"))
        #expect(PairingError.missingScope("operator.admin").errorShape.message == "missing scope: operator.admin")
        #expect(PairingError.unknownDevice("d").errorShape.message == "unknown deviceId")
        #expect(PairingError.approvalDenied(role: "node").errorShape.message == "device pairing approval denied")
    }
}
