import GatewayProtocol
@testable import MockGateway
import Testing

@Suite("Bootstrap tokens from setup codes (docs/protocol.md §5.3, §5.13)")
struct BootstrapTokenTests {
    typealias F = PairingFixtures

    static func bootstrapStore() -> BootstrapTokenStore { BootstrapTokenStore(random: SeededRandom(seed: 99)) }

    @Test func theDefaultProfileIsFullAccess() {
        let issued = { var store = Self.bootstrapStore(); return store.issue(nowMs: F.t0) }()
        #expect(issued.profile == .full)
        #expect(issued.profile.roles == ["node", "operator"])
        #expect(issued.profile.scopes == ["operator.admin", "operator.approvals", "operator.read", "operator.talk.secrets", "operator.write"])
        #expect(issued.profile.access == .full)
        #expect(issued.expiresAtMs == F.t0 + 10 * F.minute)
        #expect(issued.token.count == 43)
        #expect(!issued.setupId.isEmpty)
    }

    /// docs/cli/qr.md @06b1341d and the voice-node bundle: what each setup profile hands off.
    @Test func theSetupProfilesAsUpstream() {
        #expect(BootstrapProfile.limited.scopes == ["operator.approvals", "operator.read", "operator.talk.secrets", "operator.write"])
        #expect(BootstrapProfile.limited.access == .limited)
        #expect(BootstrapProfile.voiceNode.roles == ["node", "operator"])
        #expect(BootstrapProfile.voiceNode.scopes == ["operator.read", "operator.talk"])
        #expect(BootstrapProfile.voiceNode.access == .limited)
        #expect(BootstrapProfile.nodeOnly.roles == ["node"])
        #expect(BootstrapProfile.nodeOnly.access == .node)
        for profile in [BootstrapProfile.full, .limited, .voiceNode, .nodeOnly] {
            #expect(!profile.scopes.contains("operator.pairing"), "no profile hands off operator.pairing")
        }
        #expect(BootstrapProfile.full.isMobileSetupProfile && BootstrapProfile.limited.isMobileSetupProfile)
        #expect(!BootstrapProfile.voiceNode.isMobileSetupProfile && !BootstrapProfile.nodeOnly.isMobileSetupProfile)
        #expect(BootstrapProfile.names.compactMap(BootstrapProfile.named) == [.full, .limited, .voiceNode, .nodeOnly])
        #expect(BootstrapProfile.named("admin") == nil)
    }

    @Test func rejectingARequestRevokesTheTokensBoundToThatDevice() throws {
        var store = Self.bootstrapStore()
        let bound = store.issue(nowMs: F.t0)
        let other = store.issue(nowMs: F.t0)
        _ = try store.verify(bound.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0).get()
        #expect(store.revokeAll(deviceId: F.deviceId, publicKey: F.publicKey) == 1)
        #expect(store.verify(bound.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0) == .failure(.unknown))
        #expect((try? store.verify(other.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0).get()) != nil)
    }

    @Test func aSetupOutcomeIsRecordedUnderItsSetupId() throws {
        var store = Self.bootstrapStore()
        let issued = store.issue(profile: .nodeOnly, nowMs: F.t0)
        #expect(store.outcome(setupId: issued.setupId) == nil)
        let recorded = store.recordOutcome(issued.token, deviceId: F.deviceId, deviceName: "Watch", delivery: .completed, nowMs: F.t0 + 5)
        let outcome = try #require(recorded)
        #expect(outcome.payload == ["setupId": .string(issued.setupId), "deviceId": .string(F.deviceId), "deviceName": "Watch",
                                    "access": "node", "ts": .int(F.t0 + 5)])
        #expect(outcome.eventName == .devicePairSetupCompleted)
        #expect(store.outcome(setupId: issued.setupId) == outcome)
        let uncertain = store.recordOutcome(issued.token, deviceId: F.deviceId, deviceName: nil, delivery: .deliveryUncertain, nowMs: F.t0 + 6)
        #expect(uncertain?.eventName == .devicePairSetupDeliveryUncertain)
    }

    @Test func theFirstDeviceToPresentTheTokenOwnsIt() throws {
        var store = Self.bootstrapStore()
        let issued = store.issue(nowMs: F.t0)
        let grant = try store.verify(issued.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0 + 1).get()
        #expect(grant.deviceId == F.deviceId)
        #expect(grant.profile == .full)
        #expect(store.verify(issued.token, deviceId: F.secondDeviceId, publicKey: F.secondKey, role: "node", scopes: [], nowMs: F.t0 + 2)
            == .failure(.boundToAnotherDevice))
        #expect(store.verify(issued.token, deviceId: F.deviceId, publicKey: F.otherKey, role: "node", scopes: [], nowMs: F.t0 + 2)
            == .failure(.boundToAnotherDevice))
        // Before any hello-ok, the bound device may present it again.
        #expect((try? store.verify(issued.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0 + 3).get()) != nil)
    }

    @Test func theFirstSuccessfulConnectUsesTheTokenUpEvenForTheSameDevice() {
        var store = Self.bootstrapStore()
        let issued = store.issue(nowMs: F.t0)
        _ = store.verify(issued.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0 + 1)
        let consumed = store.consume(issued.token, nowMs: F.t0 + 2)
        let consumedTwice = store.consume(issued.token, nowMs: F.t0 + 3)
        #expect(consumed)
        #expect(consumedTwice == false)
        let again = store.verify(issued.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "operator", scopes: [], nowMs: F.t0 + 4)
        #expect(again == .failure(.consumed))
        #expect(BootstrapTokenFailure.consumed.authFailureReason == "bootstrap_token_invalid")
        #expect(BootstrapTokenFailure.consumed.detailCode == "AUTH_BOOTSTRAP_TOKEN_INVALID")
        #expect(store.outstanding(nowMs: F.t0 + 4).isEmpty)
    }

    @Test func aTokenExpiresTenMinutesAfterIssue() {
        var store = Self.bootstrapStore()
        let first = store.issue(nowMs: F.t0)
        let second = store.issue(nowMs: F.t0)
        #expect((try? store.verify(first.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0 + 10 * F.minute).get()) != nil)
        #expect(store.verify(second.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0 + 10 * F.minute + 1)
            == .failure(.expired))
    }

    @Test func anAskOutsideTheProfileIsRefusedWithoutBindingTheToken() throws {
        var store = Self.bootstrapStore()
        let issued = store.issue(profile: .limited, nowMs: F.t0)
        #expect(store.verify(issued.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "operator", scopes: ["operator.admin"], nowMs: F.t0)
            == .failure(.outsideProfile))
        #expect(store.verify(issued.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "worker", scopes: [], nowMs: F.t0)
            == .failure(.outsideProfile))
        _ = try store.verify(issued.token, deviceId: F.secondDeviceId, publicKey: F.secondKey, role: "operator",
                             scopes: ["operator.read", "operator.write"], nowMs: F.t0).get()
    }

    @Test func unknownRevokedAndBlankTokensAreInvalid() {
        var store = Self.bootstrapStore()
        let issued = store.issue(nowMs: F.t0)
        #expect(store.verify("nope", deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0) == .failure(.unknown))
        #expect(store.verify("  ", deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0) == .failure(.unknown))
        let revoked = store.revoke(issued.token)
        #expect(revoked)
        #expect(store.verify(issued.token, deviceId: F.deviceId, publicKey: F.publicKey, role: "node", scopes: [], nowMs: F.t0) == .failure(.unknown))
    }

    @Test func aBootstrapNodeConnectIsApprovedSilentlyAndHandsOffTheOperatorToken() throws {
        var bootstrap = Self.bootstrapStore()
        var pairing = F.store()
        let issued = bootstrap.issue(nowMs: F.t0)
        let attempt = F.iosNode()
        let grant = try bootstrap.verify(issued.token, deviceId: attempt.deviceId, publicKey: attempt.publicKey,
                                         role: attempt.role, scopes: attempt.scopes, nowMs: F.t0 + 1).get()
        // Under the manual policy too: the token itself is the approval.
        guard case .admitted(let admitted, let effects) = pairing.admit(attempt, policy: .manual, bootstrap: grant, nowMs: F.t0 + 1) else {
            Issue.record("expected admission")
            return
        }
        #expect(admitted.silentlyApprovedVia == .bootstrap)
        #expect(admitted.bootstrapHandOff == .full)
        #expect(admitted.device.approvedVia == .bootstrap)
        #expect(admitted.device.roles == ["node", "operator"])
        #expect(admitted.device.scopes == BootstrapProfile.full.scopes)
        let wire = F.wireEffects(effects)
        #expect(wire.count == 1)
        guard case .resolved(let resolution) = wire.first else {
            Issue.record("expected device.pair.resolved")
            return
        }
        #expect(resolution.decision == .approved)

        let hello = pairing.grantHelloAuth(deviceId: attempt.deviceId, role: "node", scopes: [], handOff: admitted.bootstrapHandOff, nowMs: F.t0 + 1)
        let nodeToken = try #require(hello.deviceToken)
        let operatorToken = try #require(hello.handOffTokens.first)
        #expect(hello.handOffTokens.count == 1)
        #expect(operatorToken.role == "operator")
        #expect(operatorToken.scopes == BootstrapProfile.full.scopes)
        #expect(try JSONValue(encoding: hello.helloAuth) == [
            "role": "node", "scopes": [], "deviceToken": .string(nodeToken.token), "issuedAtMs": .int(F.t0 + 1),
            "deviceTokens": [[
                "deviceToken": .string(operatorToken.token), "role": "operator",
                "scopes": ["operator.admin", "operator.approvals", "operator.read", "operator.talk.secrets", "operator.write"],
                "issuedAtMs": .int(F.t0 + 1),
            ]],
        ])
        let consumed = bootstrap.consume(grant.token, nowMs: F.t0 + 1)
        #expect(consumed)
        // The app then opens its operator connection with the handed-off token.
        #expect((try? pairing.verifyDeviceToken(operatorToken.token, deviceId: attempt.deviceId, role: "operator",
                                                scopes: ["operator.read"], nowMs: F.t0 + 2).get()) != nil)
    }

    /// mobile-bootstrap-pairing.ts @2a14eb22: only an official mobile app whose metadata match
    /// its client id, with a mobile setup profile, is approved silently; any other client stays
    /// pending and is told to keep retrying.
    @Test(arguments: [
        ("node-host", "linux", nil as String?, BootstrapProfile.full),
        ("openclaw-ios", "Android 14", "Android", BootstrapProfile.full),
        ("openclaw-ios", "iOS 18.4.0", "Mac", BootstrapProfile.full),
        ("openclaw-android", "iOS 18.4.0", "iPhone", BootstrapProfile.full),
        ("openclaw-ios", "iOS 18.4.0", "iPhone", BootstrapProfile.nodeOnly),
        ("openclaw-ios", "iOS 18.4.0", "iPhone", BootstrapProfile.voiceNode),
    ])
    func anyOtherBootstrapNodeStaysPendingAndIsToldToWaitThenRetry(clientId: String, platform: String, family: String?,
                                                                   profile: BootstrapProfile) throws {
        var bootstrap = Self.bootstrapStore()
        var pairing = F.store()
        let issued = bootstrap.issue(profile: profile, nowMs: F.t0)
        var attempt = F.iosNode()
        attempt.client = PairingClientInfo(clientId: ClientID(rawValue: clientId), clientMode: .node, platform: platform, deviceFamily: family)
        let grant = try bootstrap.verify(issued.token, deviceId: attempt.deviceId, publicKey: attempt.publicKey,
                                         role: attempt.role, scopes: attempt.scopes, nowMs: F.t0).get()
        guard case .rejected(let rejection, let request, let effects) = pairing.admit(attempt, policy: .manual, bootstrap: grant, nowMs: F.t0) else {
            Issue.record("expected the request to stay pending")
            return
        }
        #expect(rejection.waitForDetachedApproval)
        let details = rejection.errorShape().details
        #expect(details?["recommendedNextStep"] == "wait_then_retry")
        #expect(details?["retryable"] == true)
        #expect(details?["pauseReconnect"] == false)
        #expect(request.roles == ["node"])
        #expect(F.wireEffects(effects).contains { if case .requested = $0 { true } else { false } })
    }

    @Test(arguments: [("openclaw-ios", "iPadOS 18.4", "iPad"), ("openclaw-ios", "ios", "ios"), ("openclaw-android", "Android 14", "Android")])
    func theOfficialMobileAppsWithMatchingMetadataAreApprovedSilently(clientId: String, platform: String, family: String) throws {
        var bootstrap = Self.bootstrapStore()
        var pairing = F.store()
        let issued = bootstrap.issue(profile: .limited, nowMs: F.t0)
        var attempt = F.iosNode()
        attempt.client = PairingClientInfo(clientId: ClientID(rawValue: clientId), clientMode: .node, platform: platform, deviceFamily: family)
        let grant = try bootstrap.verify(issued.token, deviceId: attempt.deviceId, publicKey: attempt.publicKey,
                                         role: attempt.role, scopes: attempt.scopes, nowMs: F.t0).get()
        guard case .admitted(let admitted, _) = pairing.admit(attempt, policy: .manual, bootstrap: grant, nowMs: F.t0) else {
            Issue.record("expected silent approval")
            return
        }
        #expect(admitted.silentlyApprovedVia == .bootstrap)
        #expect(admitted.bootstrapHandOff == .limited)
    }

    @Test func theLegacyRuleApprovesAnyFreshScopelessNode() throws {
        var bootstrap = Self.bootstrapStore()
        var pairing = PairingStore(random: SeededRandom(seed: 7), setupCodeApprovalRequiresMobileClient: false)
        let issued = bootstrap.issue(profile: .nodeOnly, nowMs: F.t0)
        let attempt = F.nodeHost()
        let grant = try bootstrap.verify(issued.token, deviceId: attempt.deviceId, publicKey: attempt.publicKey,
                                         role: attempt.role, scopes: attempt.scopes, nowMs: F.t0).get()
        guard case .admitted(let admitted, _) = pairing.admit(attempt, bootstrap: grant, nowMs: F.t0) else {
            Issue.record("expected silent approval")
            return
        }
        #expect(admitted.silentlyApprovedVia == .bootstrap)
    }

    @Test func aBootstrapOperatorConnectStillNeedsApproval() throws {
        var bootstrap = Self.bootstrapStore()
        var pairing = F.store()
        let issued = bootstrap.issue(nowMs: F.t0)
        let attempt = F.iosOperator(scopes: [PairingScope.read])
        let grant = try bootstrap.verify(issued.token, deviceId: attempt.deviceId, publicKey: attempt.publicKey,
                                         role: attempt.role, scopes: attempt.scopes, nowMs: F.t0).get()
        guard case .rejected(let rejection, _, _) = pairing.admit(attempt, bootstrap: grant, nowMs: F.t0) else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.requirement == .notPaired)
        #expect(rejection.waitForDetachedApproval == false)
    }
}
