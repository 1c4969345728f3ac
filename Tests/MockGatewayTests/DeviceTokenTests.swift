import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("Device tokens: issue, reuse, rotate, revoke, verify (docs/protocol.md §5)")
struct DeviceTokenTests {
    typealias F = PairingFixtures

    static func isBase64URLToken(_ token: String) -> Bool {
        token.count == 43 && token.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
        }
    }

    @Test func helloIssuesA43CharacterTokenAndReusesItAcrossReconnects() throws {
        var store = try F.paired([F.iosNode()])
        let first = store.grantHelloAuth(deviceId: F.deviceId, role: GatewayRole.node, scopes: [], nowMs: F.t0)
        let token = try #require(first.deviceToken)
        #expect(Self.isBase64URLToken(token.token))
        #expect(token.scopes.isEmpty)
        #expect(token.issuedAtMs == F.t0)
        let again = store.grantHelloAuth(deviceId: F.deviceId, role: GatewayRole.node, scopes: [], nowMs: F.t0 + F.minute)
        #expect(again.deviceToken == token)
        #expect(try JSONValue(encoding: first.helloAuth) == ["role": "node", "scopes": [], "deviceToken": .string(token.token), "issuedAtMs": .int(F.t0)])
    }

    @Test func tokensArePerRoleAndNodeTokensCarryNoScopes() throws {
        var store = try F.paired([F.iosNode(), F.iosOperator()])
        let node = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "node", scopes: ["operator.admin"], nowMs: F.t0).deviceToken)
        let op = try #require(store.grantHelloAuth(
            deviceId: F.deviceId, role: "operator", scopes: ["operator.read", "node.camera", "operator.read"], nowMs: F.t0).deviceToken)
        #expect(node.token != op.token)
        #expect(node.scopes.isEmpty)
        #expect(op.scopes == ["operator.read"])
    }

    @Test func aConnectWithoutAPairedRoleGetsNoToken() throws {
        var store = F.store()
        let grant = store.grantHelloAuth(deviceId: F.deviceId, role: "operator", scopes: ["operator.read"], nowMs: F.t0)
        #expect(grant.deviceToken == nil)
        #expect(try JSONValue(encoding: grant.helloAuth) == ["role": "operator", "scopes": ["operator.read"]])
    }

    @Test func verificationSucceedsForTheIssuedTokenAndRecordsTheUse() throws {
        var store = try F.paired([F.iosNode()])
        let token = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0).deviceToken)
        let verified = try store.verifyDeviceToken(token.token, deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0 + F.minute).get()
        #expect(verified.lastUsedAtMs == F.t0 + F.minute)
    }

    @Test func verificationFailuresNameTheirReason() throws {
        var store = try F.paired([F.iosOperator(scopes: [PairingScope.read, PairingScope.write])])
        #expect(store.verifyDeviceToken("x", deviceId: "unknown", role: "node", scopes: [], nowMs: F.t0) == .failure(.notPaired))
        #expect(store.verifyDeviceToken("x", deviceId: F.deviceId, role: "operator", scopes: [], nowMs: F.t0) == .failure(.missing))
        let token = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "operator", scopes: ["operator.read"], nowMs: F.t0).deviceToken)
        #expect(store.verifyDeviceToken(token.token + "x", deviceId: F.deviceId, role: "operator", scopes: [], nowMs: F.t0) == .failure(.mismatch))
        #expect(store.verifyDeviceToken(token.token, deviceId: F.deviceId, role: "operator", scopes: ["operator.write"], nowMs: F.t0)
            == .failure(.scopeMismatch))
        _ = try store.revokeToken(deviceId: F.deviceId, role: "operator", nowMs: F.t0)
        #expect(store.verifyDeviceToken(token.token, deviceId: F.deviceId, role: "operator", scopes: [], nowMs: F.t0) == .failure(.revoked))
    }

    @Test func anExplicitDeviceTokenFailureIsDeviceTokenMismatchOtherwiseTheSharedFailureStands() {
        #expect(DeviceTokenCandidate.select(deviceToken: "dev", token: "shared") == DeviceTokenCandidate(value: "dev", source: .deviceTokenField))
        #expect(DeviceTokenCandidate.select(deviceToken: nil, token: "stored") == DeviceTokenCandidate(value: "stored", source: .tokenField))
        #expect(DeviceTokenCandidate.select(deviceToken: "", token: nil) == nil)
        for failure in DeviceTokenFailure.allCases where failure != .scopeMismatch {
            #expect(failure.authFailureReason(for: .deviceTokenField) == "device_token_mismatch")
            #expect(failure.authFailureReason(for: .tokenField) == nil)
        }
        // auth-context.ts `mapDeviceTokenAuthFailureReason`: a scope mismatch is one in either field.
        #expect(DeviceTokenFailure.scopeMismatch.authFailureReason(for: .deviceTokenField) == "scope_mismatch")
        #expect(DeviceTokenFailure.scopeMismatch.authFailureReason(for: .tokenField) == "scope_mismatch")
    }

    @Test func rotationMintsANewValueAndDisconnectsThatRole() throws {
        var store = try F.paired([F.iosNode()])
        let old = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0).deviceToken)
        let change = try store.rotateToken(deviceId: F.deviceId, role: "node", nowMs: F.t0 + F.minute)
        #expect(change.token.token != old.token)
        #expect(change.token.createdAtMs == F.t0)
        #expect(change.token.rotatedAtMs == F.t0 + F.minute)
        #expect(change.effects == [.disconnect(deviceId: F.deviceId, role: "node", reason: .tokenRotated)])
        #expect(store.verifyDeviceToken(old.token, deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0) == .failure(.mismatch))
        #expect((try? store.verifyDeviceToken(change.token.token, deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0).get()) != nil)
        #expect(change.rotationPayload(includeToken: false)
            == ["deviceId": .string(F.deviceId), "role": "node", "scopes": [], "rotatedAtMs": .int(F.t0 + F.minute)])
    }

    @Test func rotationIsDeniedForUnknownDevicesRolesAndUnapprovedScopes() throws {
        var store = try F.paired([F.iosOperator(scopes: [PairingScope.read])])
        #expect(throws: PairingError.tokenRotationDenied("nope")) { _ = try store.rotateToken(deviceId: "nope", role: "node", nowMs: F.t0) }
        #expect(throws: PairingError.tokenRotationDenied(F.deviceId)) { _ = try store.rotateToken(deviceId: F.deviceId, role: "node", nowMs: F.t0) }
        #expect(throws: PairingError.tokenRotationDenied(F.deviceId)) {
            _ = try store.rotateToken(deviceId: F.deviceId, role: "operator", scopes: [PairingScope.admin], nowMs: F.t0)
        }
        let narrowed = try store.rotateToken(deviceId: F.deviceId, role: "operator", scopes: [PairingScope.read], nowMs: F.t0)
        #expect(narrowed.token.scopes == ["operator.read"])
    }

    @Test func revocationDisconnectsAndTheNextHelloIssuesAFreshToken() throws {
        var store = try F.paired([F.iosNode()])
        let old = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0).deviceToken)
        let change = try store.revokeToken(deviceId: F.deviceId, role: "node", nowMs: F.t0 + F.minute)
        #expect(change.token.revokedAtMs == F.t0 + F.minute)
        #expect(change.effects == [.disconnect(deviceId: F.deviceId, role: "node", reason: .tokenRevoked)])
        #expect(change.revocationPayload == ["deviceId": .string(F.deviceId), "role": "node", "revokedAtMs": .int(F.t0 + F.minute)])
        // Still paired: a connect that passes pairing without the token gets a new one.
        let fresh = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0 + 2 * F.minute).deviceToken)
        #expect(fresh.token != old.token)
        #expect(fresh.isRevoked == false)
        #expect(throws: PairingError.tokenRevocationDenied(F.deviceId)) {
            _ = try store.revokeToken(deviceId: F.deviceId, role: "operator", nowMs: F.t0)
        }
    }

    @Test func aWiderApprovedAskReissuesTheOperatorToken() throws {
        var store = try F.paired([F.iosOperator(scopes: [PairingScope.read])])
        let narrow = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "operator", scopes: ["operator.read"], nowMs: F.t0).deviceToken)
        let upgrade = store.requestPairing(for: F.iosOperator(scopes: [PairingScope.read, PairingScope.approvals]), nowMs: F.t0 + 1)
        _ = try store.approve(requestId: upgrade.request.requestId, nowMs: F.t0 + 2)
        let wide = try #require(store.grantHelloAuth(
            deviceId: F.deviceId, role: "operator", scopes: ["operator.read", "operator.approvals"], nowMs: F.t0 + 3).deviceToken)
        #expect(wide.token != narrow.token)
        #expect(wide.scopes == ["operator.read", "operator.approvals"])
        #expect(wide.rotatedAtMs == F.t0 + 3)
    }

    @Test func comparisonIsExactOverLengthAndContent() {
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", "abcd"))
        #expect(!ConstantTime.equals("", "a"))
        #expect(ConstantTime.equals("", ""))
    }

    @Test func aTokenDescriptionNeverShowsTheSecret() throws {
        var store = try F.paired([F.iosNode()])
        let token = try #require(store.grantHelloAuth(deviceId: F.deviceId, role: "node", scopes: [], nowMs: F.t0).deviceToken)
        #expect(!token.description.contains(token.token))
        #expect(!token.summaryJSON.jsonString.contains(token.token))
    }
}
