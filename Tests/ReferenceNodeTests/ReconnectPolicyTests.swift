import GatewayProtocol
import Testing
@testable import ReferenceNode

struct ReconnectPolicyTests {
    private func delay(_ decision: ReconnectDecision) -> Int64? {
        switch decision {
        case .retry(let ms), .pairingWait(let ms, _): ms
        default: nil
        }
    }

    @Test func backoffStartsAtHalfASecondDoublesAndCapsAtThirtySeconds() {
        var policy = ReconnectPolicy(seed: 7, mutants: [])
        let nominal: [Int64] = [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]
        for expected in nominal {
            let value = policy.nextBackoffMs()
            #expect(value >= expected && value <= expected + expected / 4, "\(value) outside \(expected)...+25%")
        }
    }

    @Test func aSessionResetsTheBackoff() {
        var policy = ReconnectPolicy(seed: 1, mutants: [])
        for _ in 0..<5 { _ = policy.nextBackoffMs() }
        policy.sessionEstablished()
        #expect(policy.nextBackoffMs() <= 625)
    }

    @Test func jitterIsReproducibleForASeed() {
        var first = ReconnectPolicy(seed: 42, mutants: [])
        var second = ReconnectPolicy(seed: 42, mutants: [])
        #expect((0..<6).map { _ in first.nextBackoffMs() } == (0..<6).map { _ in second.nextBackoffMs() })
    }

    @Test func transportFailuresRetryWithBackoff() {
        var policy = ReconnectPolicy(seed: 0, mutants: [])
        let (decision, effects) = policy.decide(.transportFailure("refused"), context: TestSupport.noCredentials)
        #expect(delay(decision).map { $0 >= 500 } == true)
        #expect(effects.isEmpty)
    }

    @Test func protocolMismatchPausesAndTheMutantKeepsReconnecting() {
        var correct = ReconnectPolicy(seed: 0, mutants: [])
        let end = TestSupport.rejection("PROTOCOL_MISMATCH")
        #expect(correct.decide(end, context: TestSupport.noCredentials).0 == .pause(reason: "protocol mismatch"))
        #expect(correct.decide(.ended(closeCode: 1002, reason: "protocol mismatch"), context: TestSupport.noCredentials).0
            == .pause(reason: "protocol mismatch"))
        var mutant = ReconnectPolicy(seed: 0, mutants: [.reconnectAfterProtocolMismatch])
        #expect(delay(mutant.decide(end, context: TestSupport.noCredentials).0) != nil)
    }

    @Test(arguments: ["AUTH_TOKEN_MISSING", "AUTH_BOOTSTRAP_TOKEN_INVALID", "AUTH_RATE_LIMITED", "DEVICE_IDENTITY_REQUIRED",
                      "AUTH_SCOPE_MISMATCH", "CLIENT_VERSION_MISMATCH"])
    func nonRecoverableCodesPause(code: String) {
        var policy = ReconnectPolicy(seed: 0, mutants: [])
        #expect(policy.decide(TestSupport.rejection(code), context: TestSupport.noCredentials).0 == .pause(reason: code))
    }

    @Test(arguments: ["DEVICE_AUTH_SIGNATURE_INVALID", "DEVICE_AUTH_NONCE_MISMATCH", "DEVICE_AUTH_SIGNATURE_EXPIRED"])
    func deviceAuthFailuresKeepRetrying(code: String) {
        var policy = ReconnectPolicy(seed: 0, mutants: [])
        #expect(delay(policy.decide(TestSupport.rejection(code), context: TestSupport.noCredentials).0) != nil)
    }

    @Test func unavailableWaitsAtLeastRetryAfterAndTheMutantDoesNot() {
        let end = ConnectionEnd.rejected(ErrorShape(code: "UNAVAILABLE", message: "gateway starting; retry shortly",
                                                    details: ["reason": "startup-sidecars"], retryable: true, retryAfterMs: 5_000))
        var correct = ReconnectPolicy(seed: 0, mutants: [])
        #expect(delay(correct.decide(end, context: TestSupport.noCredentials).0).map { $0 >= 5_000 } == true)
        var mutant = ReconnectPolicy(seed: 0, mutants: [.ignoreRetryAfter])
        // Its own first backoff step (0.5 s plus jitter), as if there were no hint.
        #expect(delay(mutant.decide(end, context: TestSupport.noCredentials).0).map { $0 < 5_000 } == true)
    }

    @Test func pairingRequiredWaitsNoFasterThanTwicePerSecondAndAtMostAboutEightSeconds() {
        var policy = ReconnectPolicy(seed: 3, mutants: [])
        var delays: [Int64] = []
        for _ in 0..<12 {
            let (decision, effects) = policy.decide(TestSupport.pairingRequired("r1"), context: TestSupport.noCredentials)
            guard case .pairingWait(let ms, let requestId) = decision else { Issue.record("not a pairing wait: \(decision)"); return }
            #expect(requestId == "r1")
            #expect(effects.isEmpty)
            delays.append(ms)
        }
        #expect(delays.allSatisfy { $0 >= 500 })
        #expect(delays.allSatisfy { $0 <= 8_800 })
        #expect(delays.last.map { $0 >= 8_000 } == true)
        #expect(policy.pairingRequestId == "r1")
    }

    @Test func aSupersededRequestIsFollowedAndTheMutantStops() {
        var correct = ReconnectPolicy(seed: 0, mutants: [])
        _ = correct.decide(TestSupport.pairingRequired("r1"), context: TestSupport.noCredentials)
        let (decision, _) = correct.decide(TestSupport.pairingRequired("r2"), context: TestSupport.noCredentials)
        if case .pairingWait(_, let id) = decision { #expect(id == "r2") } else { Issue.record("expected a pairing wait") }
        var mutant = ReconnectPolicy(seed: 0, mutants: [.followSupersededRequest])
        _ = mutant.decide(TestSupport.pairingRequired("r1"), context: TestSupport.noCredentials)
        if case .pause = mutant.decide(TestSupport.pairingRequired("r2"), context: TestSupport.noCredentials).0 {} else {
            Issue.record("the mutant should stop following")
        }
    }

    @Test func waitThenRetryKeepsTheNormalBackoff() {
        var policy = ReconnectPolicy(seed: 0, mutants: [])
        let end = TestSupport.rejection("PAIRING_REQUIRED", code: "NOT_PAIRED",
                                        details: ["requestId": "r1", "pauseReconnect": false, "recommendedNextStep": "wait_then_retry"])
        if case .retry = policy.decide(end, context: TestSupport.noCredentials).0 {} else { Issue.record("expected a plain retry") }
    }

    @Test func pairingMutantsDeviate() {
        var noRetry = ReconnectPolicy(seed: 0, mutants: [.noPairingRetry])
        #expect(noRetry.decide(TestSupport.pairingRequired("r1"), context: TestSupport.noCredentials).0 == .pause(reason: "pairing required"))
        var churn = ReconnectPolicy(seed: 0, mutants: [.pairingChurn])
        #expect(churn.decide(TestSupport.pairingRequired("r1"), context: TestSupport.noCredentials).1 == [.regenerateIdentity])
        var tight = ReconnectPolicy(seed: 0, mutants: [.tightReconnectLoop])
        #expect(delay(tight.decide(TestSupport.pairingRequired("r1"), context: TestSupport.noCredentials).0) == 100)
        #expect(delay(tight.decide(.transportFailure("x"), context: TestSupport.noCredentials).0) == 100)
    }

    @Test func aRefusedDeviceTokenIsClearedUnlessTheMutantKeepsIt() {
        let stored = AttemptContext(authSource: .storedDeviceToken, hadStoredToken: true, usedDeviceTokenRetry: false)
        var correct = ReconnectPolicy(seed: 0, mutants: [])
        #expect(correct.decide(TestSupport.rejection("AUTH_DEVICE_TOKEN_MISMATCH"), context: stored).1 == [.clearStoredToken])
        #expect(correct.decide(TestSupport.rejection("AUTH_TOKEN_MISMATCH"), context: stored).1 == [.clearStoredToken])
        var mutant = ReconnectPolicy(seed: 0, mutants: [.keepRevokedToken])
        #expect(mutant.decide(TestSupport.rejection("AUTH_DEVICE_TOKEN_MISMATCH"), context: stored).1.isEmpty)
    }

    @Test func aSharedTokenMismatchRetriesOnceWithTheDeviceTokenThenPauses() {
        var policy = ReconnectPolicy(seed: 0, mutants: [])
        let first = AttemptContext(authSource: .sharedToken, hadStoredToken: true, usedDeviceTokenRetry: false)
        let (decision, effects) = policy.decide(TestSupport.rejection("AUTH_TOKEN_MISMATCH"), context: first)
        #expect(decision == .retry(afterMs: 250))
        #expect(effects == [.useDeviceTokenRetry])
        let second = AttemptContext(authSource: .sharedToken, hadStoredToken: true, usedDeviceTokenRetry: true)
        #expect(policy.decide(TestSupport.rejection("AUTH_TOKEN_MISMATCH"), context: second).0 == .pause(reason: "AUTH_TOKEN_MISMATCH"))
    }

    @Test func theDeviceTokenRetryNeedsATrustedEndpointAndIsSkippedByTheMutant() {
        let untrusted = AttemptContext(authSource: .sharedToken, hadStoredToken: true, usedDeviceTokenRetry: false,
                                       trustedEndpoint: false)
        var policy = ReconnectPolicy(seed: 0, mutants: [])
        #expect(policy.decide(TestSupport.rejection("AUTH_TOKEN_MISMATCH"), context: untrusted)
            == (.pause(reason: "AUTH_TOKEN_MISMATCH"), []))
        let trusted = AttemptContext(authSource: .sharedToken, hadStoredToken: true, usedDeviceTokenRetry: false)
        var mutant = ReconnectPolicy(seed: 0, mutants: [.noDeviceTokenRetry])
        #expect(mutant.decide(TestSupport.rejection("AUTH_TOKEN_MISMATCH"), context: trusted)
            == (.pause(reason: "AUTH_TOKEN_MISMATCH"), []))
        #expect(ConnectBuilder.isTrustedDeviceRetryEndpoint("ws://127.0.0.1:18789"))
        #expect(ConnectBuilder.isTrustedDeviceRetryEndpoint("ws://[::1]:18789"))
        #expect(!ConnectBuilder.isTrustedDeviceRetryEndpoint("ws://192.168.1.20:18789"))
        #expect(!ConnectBuilder.isTrustedDeviceRetryEndpoint("wss://gateway.example:443"))
        #expect(ConnectBuilder.isTrustedDeviceRetryEndpoint("wss://gateway.example:443", pinnedFingerprint: "AB:CD"))
    }

    @Test func closeFourThousandOneReconnectsUnlessTheMutantStops() {
        var correct = ReconnectPolicy(seed: 0, mutants: [])
        #expect(delay(correct.decide(.ended(closeCode: 4001, reason: "gateway auth changed"), context: TestSupport.noCredentials).0) != nil)
        var mutant = ReconnectPolicy(seed: 0, mutants: [.stopAfterAuthChanged])
        #expect(mutant.decide(.ended(closeCode: 4001, reason: "gateway auth changed"), context: TestSupport.noCredentials).0
            == .pause(reason: "gateway auth changed"))
    }

    @Test func restartAndPolicyClosesReconnectUnlessAMutantStops() {
        var correct = ReconnectPolicy(seed: 0, mutants: [])
        #expect(delay(correct.decide(.ended(closeCode: 1012, reason: "service restart"), context: TestSupport.noCredentials).0) != nil)
        #expect(delay(correct.decide(.ended(closeCode: 1008, reason: "device removed"), context: TestSupport.noCredentials).0) != nil)
        var restart = ReconnectPolicy(seed: 0, mutants: [.noReconnectAfterRestart])
        #expect(restart.decide(.ended(closeCode: 1012, reason: ""), context: TestSupport.noCredentials).0 == .pause(reason: "gateway restarted"))
        var policyClose = ReconnectPolicy(seed: 0, mutants: [.stopOnPolicyClose])
        #expect(policyClose.decide(.ended(closeCode: 1008, reason: ""), context: TestSupport.noCredentials).0 == .pause(reason: "closed by policy"))
    }

    @Test func aClientStopIsIdle() {
        var policy = ReconnectPolicy(seed: 0, mutants: [])
        #expect(policy.decide(.stoppedByClient, context: TestSupport.noCredentials).0 == .idle)
    }
}
