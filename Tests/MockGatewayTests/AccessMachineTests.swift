import GatewayProtocol
@testable import MockGateway
import Testing

/// Pairing and tokens as a state machine (``AccessState/handle(_:to:)``): `device.pair.*` and
/// `device.token.*` decisions, admission effects and the clock in, Gateway effects out, no socket.
/// (Breaks tried: answering `device.pair.approve` before its `device.pair.resolved` broadcast
/// fails `approvalAnnouncesThenAnswers`; closing every session of the device on a token rotation
/// fails `rotatingATokenClosesOnlyThatRolesSessions`; dropping the kept binding of a bound
/// token fails `aSessionsTokenIsBoundToTheSharedSecretOnlyWhenItsRuleSaysSo`.)
@Suite struct AccessMachineTests {
    typealias F = PairingFixtures

    static func access(_ pairing: PairingStore = F.store()) -> AccessState {
        AccessState(pairing: pairing, bootstrapTokens: BootstrapTokenStore(random: SeededRandom(seed: 2)), sharedAuth: .none,
                    authRateLimiter: AuthRateLimiter())
    }

    static func reply(_ id: String, _ method: GatewayMethod, on connectionId: String = "c1") -> ReplyAddress {
        ReplyAddress(requestId: id, method: method.rawValue, connectionId: connectionId)
    }

    static let admin = OperatorListener(connectionId: "c1", role: "operator", scopes: ["operator.admin"], deviceId: "admin")
    static let deviceOperator = OperatorListener(connectionId: "c2", role: "operator", scopes: [], deviceId: F.deviceId)
    static let deviceNode = OperatorListener(connectionId: "c3", role: "node", scopes: [], deviceId: F.deviceId)
    static let otherNode = OperatorListener(connectionId: "c4", role: "node", scopes: [], deviceId: F.secondDeviceId)
    static let everyone = [admin, deviceOperator, deviceNode, otherNode]

    @Test func aConnectsPairingRequestIsBroadcastAndLogged() {
        var access = Self.access()
        let outcome = access.pairing.requestPairing(for: F.iosNode(), nowMs: F.t0)
        let effects = access.handle(.admitted(outcome.effects, nowMs: F.t0), to: Self.everyone)
        #expect(effects == [
            .broadcast(event: GatewayEventName.devicePairRequested.rawValue, payload: outcome.request.eventPayload, stateVersion: nil),
            .log(.pairingRequested(PairingRequestInfo(outcome.request))),
        ])
    }

    @Test func approvalAnnouncesThenAnswers() throws {
        var access = Self.access()
        let request = access.pairing.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let reply = Self.reply("r1", .devicePairApprove)
        let effects = access.handle(.approve(requestId: request.requestId, approver: ApproverContext(scopes: ["operator.admin"]),
                                             reply, nowMs: F.t0 + F.second), to: Self.everyone)
        let resolution = PairingResolution(requestId: request.requestId, deviceId: F.deviceId, decision: .approved,
                                           ts: F.t0 + F.second)
        let device = try #require(access.pairing.pairedDevice(F.deviceId))
        #expect(effects == [
            .broadcast(event: GatewayEventName.devicePairResolved.rawValue, payload: resolution.eventPayload, stateVersion: nil),
            .log(.pairingResolved(requestId: request.requestId, deviceId: F.deviceId, decision: .approved)),
            reply.success(["requestId": .string(request.requestId),
                           "device": device.listingJSON(tokens: access.pairing.tokens.tokens(deviceId: F.deviceId))]),
        ])
        // The loser of an approval race gets the store's error as the answer, nothing else.
        let again = access.handle(.approve(requestId: request.requestId, approver: ApproverContext(scopes: ["operator.admin"]),
                                           Self.reply("r2", .devicePairApprove), nowMs: F.t0 + 2 * F.second), to: Self.everyone)
        #expect(again == [Self.reply("r2", .devicePairApprove).failure(PairingError.unknownRequest(request.requestId).errorShape)])
    }

    @Test func rejectionAnswersThenAnnounces() {
        var access = Self.access()
        let request = access.pairing.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let reply = Self.reply("r1", .devicePairReject)
        let effects = access.handle(.reject(requestId: request.requestId, reply, nowMs: F.t0), to: Self.everyone)
        let resolution = PairingResolution(requestId: request.requestId, deviceId: F.deviceId, decision: .rejected, ts: F.t0)
        #expect(effects == [
            reply.success(["requestId": .string(request.requestId), "deviceId": .string(F.deviceId)]),
            .broadcast(event: GatewayEventName.devicePairResolved.rawValue, payload: resolution.eventPayload, stateVersion: nil),
            .log(.pairingResolved(requestId: request.requestId, deviceId: F.deviceId, decision: .rejected)),
        ])
        #expect(access.pairing.pendingRequests(nowMs: F.t0).isEmpty)
    }

    @Test func removingADeviceClosesAllItsSessionsAndForgetsItsNodeSurface() throws {
        var access = Self.access(try F.paired([F.iosNode(), F.nodeHost()]))
        access.nodeSurfaces[F.deviceId] = F.publicKey
        let reply = Self.reply("r1", .devicePairRemove)
        let effects = access.handle(.remove(deviceId: F.deviceId, reply, nowMs: F.t0), to: Self.everyone)
        let reason = PairingDisconnectReason.deviceRemoved.rawValue
        #expect(effects == [
            reply.success(["deviceId": .string(F.deviceId)]),
            .endWatchSession(nodeId: F.deviceId, reason: reason),
            .close("c2", code: 1008, reason: reason),
            .close("c3", code: 1008, reason: reason),
        ])
        #expect(access.nodeSurfaces[F.deviceId] == nil)
        #expect(access.pairing.pairedDevice(F.deviceId) == nil)
        #expect(access.pairing.pairedDevice(F.secondDeviceId) != nil)
    }

    @Test func rotatingATokenClosesOnlyThatRolesSessions() throws {
        var access = Self.access(try F.paired([F.iosNode(), F.iosOperator()]))
        let reply = Self.reply("r1", .deviceTokenRotate)
        let effects = access.handle(.rotateToken(deviceId: F.deviceId, role: .operator, scopes: nil, echoesToken: false, reply,
                                                 nowMs: F.t0 + F.minute), to: Self.everyone)
        let token = try #require(access.pairing.tokens.token(deviceId: F.deviceId, role: .operator))
        #expect(effects == [
            reply.success(DeviceTokenChange(deviceId: F.deviceId, token: token, effects: []).rotationPayload(includeToken: false)),
            .log(.deviceToken(deviceId: F.deviceId, role: .operator, action: .rotated)),
            .close("c2", code: 1008, reason: PairingDisconnectReason.tokenRotated.rawValue),
        ])
        // A node token rotation ends the device's node session and its Watch session.
        let node = access.handle(.rotateToken(deviceId: F.deviceId, role: .node, scopes: nil, echoesToken: true,
                                              Self.reply("r2", .deviceTokenRotate), nowMs: F.t0 + F.minute), to: Self.everyone)
        #expect(node.dropFirst(2) == [
            .endWatchSession(nodeId: F.deviceId, reason: PairingDisconnectReason.tokenRotated.rawValue),
            .close("c3", code: 1008, reason: PairingDisconnectReason.tokenRotated.rawValue),
        ])
        // The same-device caller gets the new bearer back.
        guard case .respond(let response, _, _, _)? = node.first else { Issue.record("no answer first"); return }
        #expect(response.payload?["token"]?.stringValue == access.pairing.tokens.token(deviceId: F.deviceId, role: .node)?.token)
    }

    @Test func revokingAnUnknownTokenIsAnswerOnly() {
        var access = Self.access()
        let reply = Self.reply("r1", .deviceTokenRevoke)
        let effects = access.handle(.revokeToken(deviceId: "nope", role: .node, reply, nowMs: F.t0), to: Self.everyone)
        #expect(effects == [reply.failure(PairingError.tokenRevocationDenied("nope").errorShape)])
    }

    @Test func pendingRequestsExpireOnTheClock() {
        var access = Self.access()
        let request = access.pairing.requestPairing(for: F.iosNode(), nowMs: F.t0).request
        let lifetime = PairingRequest.lifetimeMs
        #expect(access.handle(.clock(nowMs: F.t0 + lifetime), to: Self.everyone).isEmpty)
        #expect(access.handle(.clock(nowMs: F.t0 + lifetime + 1), to: Self.everyone) == [
            .log(.pairingExpired(requestId: request.requestId, deviceId: F.deviceId)),
        ])
        #expect(access.pairing.pendingRequests(nowMs: F.t0 + lifetime + 1).isEmpty)
    }

    @Test func aFinishedSetupUsesUpItsTokenThenSavesAndAnnouncesOnce() throws {
        var access = Self.access()
        let issued = access.bootstrapTokens.issue(nowMs: F.t0)
        let grant = BootstrapGrant(token: issued.token, profile: issued.profile, deviceId: F.deviceId, publicKey: F.publicKey)
        let effects = access.handle(.setupFinished(grant, deviceId: F.deviceId, deviceName: "Ana's iPhone", delivered: false,
                                                   nowMs: F.t0 + F.second), to: Self.everyone)
        let outcome = try #require(access.bootstrapTokens.outcome(setupId: issued.setupId))
        #expect(outcome.delivery == .deliveryUncertain)
        #expect(effects == [
            .persist,
            .broadcast(event: GatewayEventName.devicePairSetupDeliveryUncertain.rawValue, payload: outcome.payload, stateVersion: nil),
        ])
        // The token is used up: a second finish announces nothing.
        #expect(access.handle(.setupFinished(grant, deviceId: F.deviceId, deviceName: nil, delivered: true, nowMs: F.t0 + 2 * F.second),
                              to: Self.everyone).isEmpty)
        // Without the setup-code lifecycle (older Gateways) the token is used up silently.
        var older = Self.access()
        older.hasSetupCodeLifecycle = false
        let token = older.bootstrapTokens.issue(nowMs: F.t0)
        let olderGrant = BootstrapGrant(token: token.token, profile: token.profile, deviceId: F.deviceId, publicKey: F.publicKey)
        #expect(older.handle(.setupFinished(olderGrant, deviceId: F.deviceId, deviceName: nil, delivered: true, nowMs: F.t0),
                             to: Self.everyone).isEmpty)
        #expect(older.bootstrapTokens.outcome(setupId: token.setupId) == nil)
    }

    @Test func onlyADevicesFirstNodeSessionCountsAgainstTheNodePairingLimit() {
        var access = AccessState(pairing: F.store(), bootstrapTokens: BootstrapTokenStore(random: SeededRandom(seed: 2)),
                                 sharedAuth: .none,
                                 authRateLimiter: AuthRateLimiter(configuration: AuthRateLimitConfiguration(
                                     maxAttempts: 1, windowMs: 60_000, lockoutMs: 300_000, exemptLoopback: false)))
        #expect(access.countNodeSurfaceRequest(deviceId: "d1", publicKey: "k1", remote: "10.0.0.9", nowMs: F.t0) == nil)
        // A paired reconnect of the same key is not counted.
        #expect(access.countNodeSurfaceRequest(deviceId: "d1", publicKey: "k1", remote: "10.0.0.9", nowMs: F.t0) == nil)
        // Another device from the same address is over the limit.
        #expect(access.countNodeSurfaceRequest(deviceId: "d2", publicKey: "k2", remote: "10.0.0.9", nowMs: F.t0) == 300_000)
        #expect(access.nodeSurfaces["d2"] == nil)
    }

    @Test func anUnpairedDevicesConnectIsRefusedAfterItsRequestIsAnnounced() throws {
        var access = Self.access()
        guard case .refused(let error, let closeReason, let effects) = access.admitDevice(
            F.iosNode(), policy: .manual, bootstrap: nil, style: .current, nowMs: F.t0, to: Self.everyone) else {
            Issue.record("admitted"); return
        }
        let request = try #require(access.pairing.pendingRequests(nowMs: F.t0).first)
        #expect(error.code == ErrorCode.notPaired.rawValue)
        #expect(!closeReason.isEmpty)
        #expect(effects == [
            .broadcast(event: GatewayEventName.devicePairRequested.rawValue, payload: request.eventPayload, stateVersion: nil),
            .log(.pairingRequested(PairingRequestInfo(request))),
        ])
    }

    @Test func aSessionsTokenIsBoundToTheSharedSecretOnlyWhenItsRuleSaysSo() throws {
        var access = Self.access(try F.paired([F.iosOperator()]))
        access.sharedAuthGeneration = 3
        // A native app on the shared secret: its device token is not bound.
        let (grant, effects) = access.grantSession(F.iosOperator(), role: .operator, scopes: [PairingScope.read], handOff: nil,
                                                   presentedBoundToken: false, dependsOnSharedSecret: true,
                                                   reportTokenScopes: true, nowMs: F.t0)
        #expect(grant.deviceToken?.sharedAuthGeneration == nil)
        #expect(effects == [.log(.deviceToken(deviceId: F.deviceId, role: .operator, action: .issued))])
        // A token presented bound keeps its binding (to the generation in force).
        var bound = Self.access(try F.paired([F.iosOperator()]))
        bound.sharedAuthGeneration = 3
        let (rebound, _) = bound.grantSession(F.iosOperator(), role: .operator, scopes: [PairingScope.read], handOff: nil,
                                              presentedBoundToken: true, dependsOnSharedSecret: true, reportTokenScopes: true,
                                              nowMs: F.t0)
        #expect(rebound.deviceToken?.sharedAuthGeneration == 3)
    }
}
