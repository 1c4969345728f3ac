import GatewayProtocol

/// Where a machine's answer to a request goes: the request id, its method and its connection.
struct ReplyAddress: Sendable, Hashable {
    /// The request id.
    var requestId: String
    /// The request's method (logged with the answer).
    var method: String
    /// The connection the request came on.
    var connectionId: String

    /// A success answer to this request.
    func success(_ payload: JSONValue) -> GatewayEffect {
        .respond(.success(id: requestId, payload: payload), method: method, to: connectionId)
    }

    /// An error answer to this request.
    func failure(_ error: ErrorShape) -> GatewayEffect {
        .respond(.failure(id: requestId, error: error), method: method, to: connectionId)
    }
}

/// What the pairing step of a device's connect decided (``AccessState/admitDevice(_:policy:bootstrap:style:nowMs:to:)``).
enum DeviceAdmission: Sendable {
    /// Refused: answer the `connect` with `error`, close 1008 with `closeReason`, after the effects.
    case refused(error: ErrorShape, closeReason: String, [GatewayEffect])
    /// Admitted (with the setup code's hand-off, if any), after the effects.
    case admitted(AdmittedDevice, [GatewayEffect])
}

/// Pairing and tokens as a state machine over ``AccessState``: the `device.pair.*` and
/// `device.token.*` decisions, the connect admission's pairing effects and pairing expiry in,
/// ``GatewayEffect``s out (answers, `device.pair.requested`/`device.pair.resolved` broadcasts,
/// event-log entries, the closes of a removed device's or rotated token's sessions). No socket,
/// no clock of its own (inputs carry `nowMs`), no fault plan: the actor feeds inputs and runs the
/// effects (`GatewayCore.handleAccess(_:)`).
extension AccessState {
    /// What moves pairing and tokens. Inputs that answer a request carry its ``ReplyAddress``;
    /// a `PairingError` becomes its error answer.
    enum Input: Sendable {
        /// `device.pair.list`: the pending requests and paired devices (`connectedDeviceIds`:
        /// the devices with a session now).
        case list(ReplyAddress, connectedDeviceIds: Set<String>, nowMs: Int64)
        /// `device.pair.approve` of `requestId` by a caller with `approver`'s scopes.
        case approve(requestId: String, approver: ApproverContext, ReplyAddress, nowMs: Int64)
        /// `device.pair.reject` of `requestId`.
        case reject(requestId: String, ReplyAddress, nowMs: Int64)
        /// `device.pair.remove` of `deviceId`.
        case remove(deviceId: String, ReplyAddress, nowMs: Int64)
        /// `device.pair.rename` of `deviceId` to `label`.
        case rename(deviceId: String, label: String, ReplyAddress)
        /// `device.token.rotate` of `deviceId`'s `role` token (`scopes`: the new scopes, `nil`
        /// keeps them). `echoesToken`: the caller is that device on its device token, the only
        /// caller that gets the new bearer token back (docs/protocol.md §5.5).
        case rotateToken(deviceId: String, role: GatewayRole, scopes: [String]?, echoesToken: Bool, ReplyAddress, nowMs: Int64)
        /// `device.token.revoke` of `deviceId`'s `role` token.
        case revokeToken(deviceId: String, role: GatewayRole, ReplyAddress, nowMs: Int64)
        /// What a connect's pairing admission decided (`PairingStore.admit`): its announcements.
        case admitted([PairingEffect], nowMs: Int64)
        /// The clock reached `nowMs`: pending requests 5 minutes past their last retry expire.
        case clock(nowMs: Int64)
        /// A connect that used a setup code's bootstrap token got its `hello-ok` (`delivered`:
        /// whether it went out): the token is used up, and (with the setup-code lifecycle) the
        /// outcome is recorded, saved at once and announced.
        case setupFinished(BootstrapGrant, deviceId: String, deviceName: String?, delivered: Bool, nowMs: Int64)

        /// The request the input answers, if any.
        var reply: ReplyAddress? {
            switch self {
            case .list(let reply, _, _), .approve(_, _, let reply, _), .reject(_, let reply, _), .remove(_, let reply, _),
                 .rename(_, _, let reply), .rotateToken(_, _, _, _, let reply, _), .revokeToken(_, _, let reply, _):
                reply
            case .admitted, .clock, .setupFinished:
                nil
            }
        }
    }

    /// Applies an input; `listeners` are the sessions open now (whose sessions a removal or a
    /// token change closes).
    mutating func handle(_ input: Input, to listeners: [OperatorListener]) -> [GatewayEffect] {
        do throws(PairingError) {
            return try decide(input, to: listeners)
        } catch {
            return input.reply.map { [$0.failure(error.errorShape)] } ?? []
        }
    }

    private mutating func decide(_ input: Input, to listeners: [OperatorListener]) throws(PairingError) -> [GatewayEffect] {
        switch input {
        case .list(let reply, let connectedDeviceIds, let nowMs):
            return [reply.success(pairing.listPayload(nowMs: nowMs, connectedDeviceIds: connectedDeviceIds))]
        case .approve(let requestId, let approver, let reply, let nowMs):
            let (approval, effects) = try approve(requestId: requestId, approver: approver, nowMs: nowMs, to: listeners)
            return effects + [reply.success(pairing.approvalPayload(approval))]
        case .reject(let requestId, let reply, let nowMs):
            let (rejection, effects) = try reject(requestId: requestId, nowMs: nowMs, to: listeners)
            return [reply.success(rejection.responsePayload)] + effects
        case .remove(let deviceId, let reply, let nowMs):
            let effects = try remove(deviceId: deviceId, nowMs: nowMs, to: listeners)
            return [reply.success(["deviceId": .string(deviceId)])] + effects
        case .rename(let deviceId, let label, let reply):
            let device = try pairing.rename(deviceId: deviceId, label: label)
            return [reply.success(device.listingJSON(tokens: pairing.tokens.tokens(deviceId: deviceId)))]
        case .rotateToken(let deviceId, let role, let scopes, let echoesToken, let reply, let nowMs):
            let (change, effects) = try rotateToken(deviceId: deviceId, role: role, scopes: scopes, nowMs: nowMs, to: listeners)
            return [reply.success(change.rotationPayload(includeToken: echoesToken))] + effects
        case .revokeToken(let deviceId, let role, let reply, let nowMs):
            let (change, effects) = try revokeToken(deviceId: deviceId, role: role, nowMs: nowMs, to: listeners)
            return [reply.success(change.revocationPayload)] + effects
        case .admitted(let pairingEffects, let nowMs):
            return announce(pairingEffects, nowMs: nowMs, to: listeners)
        case .clock(let nowMs):
            return announce(pairing.expire(nowMs: nowMs).map(PairingEffect.expired), nowMs: nowMs, to: listeners)
        case .setupFinished(let grant, let deviceId, let deviceName, let delivered, let nowMs):
            guard bootstrapTokens.consume(grant.token, nowMs: nowMs), hasSetupCodeLifecycle,
                  let outcome = bootstrapTokens.recordOutcome(grant.token, deviceId: deviceId, deviceName: deviceName,
                                                              delivery: delivered ? .completed : .deliveryUncertain, nowMs: nowMs)
            else { return [] }
            // Saved at once: `device.pair.setupStatus` answers from it after a restart too, and
            // the broadcast is not a Gateway event that would trigger a save.
            return [.persist, .broadcast(event: outcome.eventName.rawValue, payload: outcome.payload, stateVersion: nil)]
        }
    }

    /// The pairing step of a device's connect (docs/protocol.md §5.7, `PairingStore.admit`):
    /// refused with `PAIRING_REQUIRED` (the error and close reason in `style`) or admitted, each
    /// with the announcements to run first.
    mutating func admitDevice(_ attempt: PairingAttempt, policy: AutoApprovalPolicy, bootstrap: BootstrapGrant?,
                              style: GatewayProfile.PairingMessageStyle, nowMs: Int64,
                              to listeners: [OperatorListener]) -> DeviceAdmission {
        switch pairing.admit(attempt, policy: policy, bootstrap: bootstrap, nowMs: nowMs) {
        case .rejected(let rejection, _, let effects):
            return .refused(error: rejection.errorShape(style: style), closeReason: rejection.closeReason(style: style),
                            announce(effects, nowMs: nowMs, to: listeners))
        case .admitted(let device, let effects):
            return .admitted(device, announce(effects, nowMs: nowMs, to: listeners))
        }
    }

    /// The grant of an admitted device's session: the connect is recorded on its record, and its
    /// device token (and a setup code's hand-off tokens) issued or reused, logged as issued.
    /// A browser client that authenticated with the shared secret gets a token bound to the
    /// secret's generation, and a bound token keeps its binding (upstream
    /// `sharedGatewayAuthIssuer`, connect-device-tokens.ts @0186e586da6c81740c4d9b4d05d100ffd3bc1858).
    /// - Parameters:
    ///   - presentedBoundToken: the session authenticated with a device token bound to a generation.
    ///   - dependsOnSharedSecret: the session depends on the shared secret (4001 when it changes).
    mutating func grantSession(_ attempt: PairingAttempt, role: GatewayRole, scopes: [String], handOff: BootstrapProfile?,
                               presentedBoundToken: Bool, dependsOnSharedSecret: Bool, reportTokenScopes: Bool,
                               nowMs: Int64) -> (HelloAuthGrant, [GatewayEffect]) {
        pairing.recordConnect(attempt, nowMs: nowMs)
        let bindsGeneration = presentedBoundToken || (dependsOnSharedSecret && attempt.client.isBrowserClient)
        let grant = pairing.grantHelloAuth(deviceId: attempt.deviceId, role: role, scopes: scopes, handOff: handOff,
                                           sharedAuthGeneration: bindsGeneration ? sharedAuthGeneration : nil,
                                           reportTokenScopes: reportTokenScopes, nowMs: nowMs)
        guard grant.deviceToken != nil else { return (grant, []) }
        return (grant, [.log(.deviceToken(deviceId: attempt.deviceId, role: role, action: .issued))])
    }

    /// Counts a device's first node session against the node-pairing rate limit of `remote`
    /// (upstream counts every request of a node without a paired surface; the fake approves a
    /// capability surface at once, so a device's one counted request is its first node session).
    /// - Returns: `nil` when the session may go on (a paired reconnect, or counted now), else the
    ///   `retryAfterMs` of the lockout.
    mutating func countNodeSurfaceRequest(deviceId: String, publicKey: String, remote: String, nowMs: Int64) -> Int64? {
        guard nodeSurfaces[deviceId] != publicKey else { return nil }
        let check = authRateLimiter.check(remote, scope: .nodePairing, nowMs: nowMs)
        guard check.allowed else { return check.retryAfterMs }
        authRateLimiter.recordFailure(remote, scope: .nodePairing, nowMs: nowMs)
        nodeSurfaces[deviceId] = publicKey
        return nil
    }

    // MARK: - Operations (also the scripting API's, which needs their typed results)

    /// Approves a pending request: the device record, then the announcements.
    mutating func approve(requestId: String, approver: ApproverContext?, nowMs: Int64,
                          to listeners: [OperatorListener]) throws(PairingError) -> (PairingApproval, [GatewayEffect]) {
        let approval = try pairing.approve(requestId: requestId, nowMs: nowMs, approver: approver)
        return (approval, announce(approval.effects, nowMs: nowMs, to: listeners))
    }

    /// Rejects a pending request: its announcements, and (current Gateway) the revocation of the
    /// device's bootstrap tokens (upstream `rejectDevicePairingInWorker`), noted in the transcript.
    mutating func reject(requestId: String, nowMs: Int64,
                         to listeners: [OperatorListener]) throws(PairingError) -> (PairingRejection, [GatewayEffect]) {
        let rejection = try pairing.reject(requestId: requestId, nowMs: nowMs)
        var effects = announce(rejection.effects, nowMs: nowMs, to: listeners)
        if rejectRevokesBootstrapTokens {
            let revoked = bootstrapTokens.revokeAll(deviceId: rejection.deviceId, publicKey: rejection.publicKey)
            if revoked > 0 { effects.append(.note("revoked \(revoked) bootstrap token(s) of \(rejection.deviceId)", on: "-")) }
        }
        return (rejection, effects)
    }

    /// Removes a paired device: its pending requests are withdrawn and its sessions closed.
    mutating func remove(deviceId: String, nowMs: Int64, to listeners: [OperatorListener]) throws(PairingError) -> [GatewayEffect] {
        announce(try pairing.remove(deviceId: deviceId, nowMs: nowMs), nowMs: nowMs, to: listeners)
    }

    /// Rotates a device token: logged, and the sessions holding the old token are closed.
    mutating func rotateToken(deviceId: String, role: GatewayRole, scopes: [String]? = nil, nowMs: Int64,
                              to listeners: [OperatorListener]) throws(PairingError) -> (DeviceTokenChange, [GatewayEffect]) {
        let change = try pairing.rotateToken(deviceId: deviceId, role: role, scopes: scopes, nowMs: nowMs)
        return (change, [.log(.deviceToken(deviceId: deviceId, role: role, action: .rotated))]
                    + announce(change.effects, nowMs: nowMs, to: listeners))
    }

    /// Revokes a device token: logged, and the sessions holding it are closed.
    mutating func revokeToken(deviceId: String, role: GatewayRole, nowMs: Int64,
                              to listeners: [OperatorListener]) throws(PairingError) -> (DeviceTokenChange, [GatewayEffect]) {
        let change = try pairing.revokeToken(deviceId: deviceId, role: role, nowMs: nowMs)
        return (change, [.log(.deviceToken(deviceId: deviceId, role: role, action: .revoked))]
                    + announce(change.effects, nowMs: nowMs, to: listeners))
    }

    // MARK: - Effects

    /// What the pairing store decided, as Gateway effects: `device.pair.requested` and
    /// `device.pair.resolved` broadcasts, event-log entries, and the closes (1008, the reason) of
    /// the sessions a removal or token change ends (a removed device's node surface is
    /// forgotten; its Watch session ends too).
    mutating func announce(_ pairingEffects: [PairingEffect], nowMs: Int64, to listeners: [OperatorListener]) -> [GatewayEffect] {
        var effects: [GatewayEffect] = []
        for effect in pairingEffects {
            switch effect {
            case .requested(let request):
                effects.append(.broadcast(event: GatewayEventName.devicePairRequested.rawValue, payload: request.eventPayload,
                                          stateVersion: nil))
                effects.append(.log(.pairingRequested(PairingRequestInfo(request))))
            case .refreshed(let request):
                effects.append(.log(.pairingRefreshed(PairingRequestInfo(request))))
            case .superseded(let old, let new):
                let deviceId = pairing.pendingRequest(new, nowMs: nowMs)?.deviceId ?? ""
                effects.append(.log(.pairingSuperseded(oldRequestIds: old, newRequestId: new, deviceId: deviceId)))
            case .resolved(let resolution):
                effects.append(.broadcast(event: GatewayEventName.devicePairResolved.rawValue, payload: resolution.eventPayload,
                                          stateVersion: nil))
                effects.append(.log(.pairingResolved(requestId: resolution.requestId, deviceId: resolution.deviceId,
                                                     decision: PairingResolvedDecision(resolution.decision))))
            case .expired(let request):
                effects.append(.log(.pairingExpired(requestId: request.requestId, deviceId: request.deviceId)))
            case .withdrawn(let request):
                effects.append(.log(.pairingResolved(requestId: request.requestId, deviceId: request.deviceId, decision: .withdrawn)))
            case .disconnect(let deviceId, let role, let reason):
                if reason == .deviceRemoved { nodeSurfaces[deviceId] = nil }
                if role == nil || role == .node { effects.append(.endWatchSession(nodeId: deviceId, reason: reason.rawValue)) }
                for listener in listeners where listener.deviceId == deviceId {
                    if let role, listener.role != role.rawValue { continue }
                    effects.append(.close(listener.connectionId, code: 1008, reason: reason.rawValue))
                }
            }
        }
        return effects
    }
}
