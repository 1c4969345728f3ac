import Foundation
import GatewayProtocol

/// An error from the scripting API: the same error a wire client would get.
public struct GatewayError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error as it would travel on the wire.
    public var shape: ErrorShape

    /// Creates an error.
    public init(_ shape: ErrorShape) { self.shape = shape }

    /// `code: message`.
    public var description: String { "\(shape.code): \(shape.message)" }
}

// MARK: - Pairing and tokens

extension Gateway {
    /// Writes an operator action into the transcript (``TranscriptEntry/Kind/operatorAction``),
    /// before it takes effect, so that the frames it causes follow it.
    func recordOperatorAction(_ text: String) {
        transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: clock.nowMs, connectionId: "-",
                                          kind: .operatorAction, text: text))
    }

    /// The pending pairing requests, oldest first.
    public func pendingPairingRequests() async -> [PairingRequestInfo] {
        await core.pendingRequestInfos()
    }

    /// The paired device records.
    public func pairedDevices() async -> [PairedDevice] {
        await core.pairingStore.pairedDevices
    }

    /// Waits for the next `device.pair.requested` after `cursor`.
    /// - Parameters:
    ///   - cursor: an `events.count` taken before the action expected to cause the request;
    ///     0 finds the first request ever made.
    ///   - timeout: on the clock's `waitTimeline` (virtual time in a simulated run, real time otherwise).
    /// - Returns: the request, or `nil` on timeout.
    public func nextPairingRequest(after cursor: Int = 0, timeout: Duration) async -> PairingRequestInfo? {
        let event = await events.first(from: cursor, timeout: timeout, on: clock.waitTimeline) { event in
            if case .pairingRequested = event { return true }
            return false
        }
        if case .pairingRequested(let info)? = event?.element { return info }
        return nil
    }

    /// Approves a pending request as an all-powerful operator (the console or a test).
    /// - Returns: the paired record.
    /// - Throws: `GatewayError` (`unknown requestId` for an unknown, superseded, expired or
    ///   already resolved request).
    @discardableResult
    public func approve(requestId: String) async throws(GatewayError) -> PairedDevice {
        recordOperatorAction("approve \(requestId)")
        return try await core.scriptApprove(requestId: requestId)
    }

    /// Rejects a pending request.
    /// - Throws: `GatewayError` for an unknown request.
    public func reject(requestId: String) async throws(GatewayError) {
        recordOperatorAction("reject \(requestId)")
        try await core.scriptReject(requestId: requestId)
    }

    /// Removes a paired device: its sessions are closed and its pending requests deleted.
    /// - Throws: `GatewayError` for an unknown device.
    public func removeDevice(_ deviceId: String) async throws(GatewayError) {
        recordOperatorAction("remove device \(deviceId)")
        try await core.scriptRemove(deviceId: deviceId)
    }

    /// Revokes a device's token for a role; its sessions with that role are closed.
    /// - Throws: `GatewayError` for an unknown device or role.
    public func revokeToken(deviceId: String, role: String) async throws(GatewayError) {
        recordOperatorAction("revoke \(role) token of \(deviceId)")
        try await core.scriptRevoke(deviceId: deviceId, role: role)
    }

    /// Rotates a device's token for a role; its sessions with that role are closed.
    /// - Returns: the new token.
    /// - Throws: `GatewayError` for an unknown device or role.
    @discardableResult
    public func rotateToken(deviceId: String, role: String) async throws(GatewayError) -> String {
        recordOperatorAction("rotate \(role) token of \(deviceId)")
        return try await core.scriptRotate(deviceId: deviceId, role: role)
    }

    /// Issues a setup code (bootstrap token valid 10 minutes, single use) for this Gateway.
    /// The code carries ``advertisedURL``, `expiresAtMs` and, with TLS, `tlsFingerprint`.
    /// - Parameter profile: what the token grants; by default `full`. `full`, also when given
    ///   explicitly, is lowered to `limited` for plain `ws://` to a private-network address
    ///   (``SetupURLExposure/privatePlaintext``), as `device.pair.setupCode` does. Unlike the wire
    ///   method, the scripting API issues codes in every auth mode and for every URL.
    public func makeSetupCode(profile: BootstrapProfile? = nil) async -> SetupCode {
        await issueSetupCode(profile: profile).code
    }

    /// Issues a setup code and returns it with its setup id and expiry (what
    /// `device.pair.setupCode` answers, minus the transport details); see
    /// ``makeSetupCode(profile:)`` for the profile (``IssuedSetupCode/accessDowngraded`` says
    /// whether `full` was lowered).
    public func issueSetupCode(profile: BootstrapProfile? = nil) async -> IssuedSetupCode {
        recordOperatorAction("issue a setup code" + (profile.map { " (roles \($0.roles.map(\.rawValue).joined(separator: ",")))" } ?? ""))
        return await core.scriptSetupCode(profile: profile)
    }

    /// The recorded outcome of the setup `setupId` (`device.pair.setupStatus`), if any.
    public func setupOutcome(setupId: String) async -> SetupOutcome? {
        await core.bootstrapTokens.outcome(setupId: setupId)
    }

    /// Changes the shared secret (`gateway.auth` edited on a running Gateway): every session
    /// that authenticated with the old secret, or with a device token bound to it, is closed
    /// with 4001 "gateway auth changed", and the next connects are judged against `auth`.
    public func changeSharedSecret(_ auth: GatewayAuthMode) async {
        recordOperatorAction("change the shared secret")
        await core.changeSharedSecret(auth)
    }

    /// Locks the client address `address` out of the credential class `scope` for `durationMs`
    /// (the state after too many failures): its connects are refused with `AUTH_RATE_LIMITED`,
    /// `retryable:true` and `retryAfterMs` while the limit applies. Loopback addresses are
    /// exempt unless `GatewayConfiguration.authRateLimit.exemptLoopback` is off.
    public func lockOutAuthentication(address: String = "127.0.0.1", scope: AuthRateLimitScope, durationMs: Int64) async {
        await core.lockOut(address: address, scope: scope, durationMs: durationMs)
    }
}

/// A setup code as issued, with its non-secret lifecycle data.
public struct IssuedSetupCode: Sendable, Hashable {
    /// The code.
    public var code: SetupCode
    /// Its opaque setup id (for `device.pair.setupStatus`).
    public var setupId: String
    /// What it grants.
    public var access: SetupAccess
    /// When its bootstrap token stops being accepted.
    public var expiresAtMs: Int64
    /// Whether `full` access was asked for (or meant by default) and lowered to `limited`,
    /// because the code's URL is plain `ws://` to a private network (`accessDowngraded` of
    /// `device.pair.setupCode`).
    public var accessDowngraded: Bool

    /// Creates an issued code.
    public init(code: SetupCode, setupId: String, access: SetupAccess, expiresAtMs: Int64, accessDowngraded: Bool = false) {
        self.code = code
        self.setupId = setupId
        self.access = access
        self.expiresAtMs = expiresAtMs
        self.accessDowngraded = accessDowngraded
    }
}

// MARK: - Nodes

extension Gateway {
    /// The nodes registered now.
    public func connectedNodes() async -> [RegisteredNode] {
        await core.nodeState.registry.nodes.values.sorted { $0.nodeId < $1.nodeId }
    }

    /// Waits until a node with `nodeId` is registered (or already is).
    /// - Returns: `true` when it is connected before the timeout.
    public func waitUntilNodeConnected(_ nodeId: String, timeout: Duration) async -> Bool {
        await waitForEvent(timeout: timeout) { event in
            if case .nodeConnected(let id, _) = event { return id == nodeId }
            return false
        } != nil
    }

    /// Sends `node.invoke.request` to a node and waits for its result.
    /// - Parameters:
    ///   - nodeId: the node (its device id).
    ///   - command: the command name.
    ///   - params: sent as `paramsJSON`.
    ///   - timeoutMs: `timeoutMs` of the request; the Gateway gives up after it on its clock.
    ///   - idempotencyKey: sent as `idempotencyKey`.
    ///   - wait: how long to wait before giving up (`.timedOut`), on the clock's `waitTimeline`
    ///     (virtual time in a simulated run, real time otherwise).
    /// - Returns: the result, `.timedOut`, or `.nodeDisconnected` (also when the node is not
    ///   connected at all).
    ///
    /// This is the harness's own stimulus, which probes how a client handles any command
    /// (undeclared ones included): like the console's `invoke --force` it is sent even when the
    /// node command policy would refuse it, and the transcript then says so. Operators'
    /// `node.invoke` and the console's `invoke` obey the policy; ``nodeCommandRefusal(nodeId:command:)``
    /// tells what the policy says.
    public func invoke(nodeId: String, command: String, params: JSONValue? = nil, timeoutMs: Int = 30_000,
                       idempotencyKey: String? = nil, wait: Duration = .seconds(30)) async -> InvokeOutcome {
        let refusal = await nodeCommandRefusal(nodeId: nodeId, command: command)
        // Sending and registering the waiter happen in one actor turn, so a node that answers at
        // once is not missed.
        return await invokeAndWait(nodeId: nodeId, command: command, params: params, timeoutMs: timeoutMs,
                                   idempotencyKey: idempotencyKey,
                                   transcriptLine: refusal.map {
                                       "invoke \(command) on \(nodeId), sent although the node command policy refuses it (\($0.message))"
                                   },
                                   wait: wait)
    }
}

// MARK: - Core support

extension GatewayCore {
    func pendingRequestInfos() -> [PairingRequestInfo] {
        pairingStore.pendingRequests(nowMs: nowMs).sorted { $0.ts < $1.ts }.map(PairingRequestInfo.init)
    }

    func scriptApprove(requestId: String) throws(GatewayError) -> PairedDevice {
        do {
            let (approval, effects) = try access.approve(requestId: requestId, approver: nil, nowMs: nowMs, to: operatorListeners)
            perform(effects)
            return approval.device
        } catch {
            throw GatewayError(error.errorShape)
        }
    }

    func scriptReject(requestId: String) throws(GatewayError) {
        do {
            perform(try access.reject(requestId: requestId, nowMs: nowMs, to: operatorListeners).1)
        } catch {
            throw GatewayError(error.errorShape)
        }
    }

    func scriptRemove(deviceId: String) throws(GatewayError) {
        do {
            perform(try access.remove(deviceId: deviceId, nowMs: nowMs, to: operatorListeners))
        } catch {
            throw GatewayError(error.errorShape)
        }
    }

    func scriptRevoke(deviceId: String, role: String) throws(GatewayError) {
        do {
            perform(try access.revokeToken(deviceId: deviceId, role: GatewayRole(rawValue: role), nowMs: nowMs,
                                           to: operatorListeners).1)
        } catch {
            throw GatewayError(error.errorShape)
        }
    }

    func scriptRotate(deviceId: String, role: String) throws(GatewayError) -> String {
        do {
            let (change, effects) = try access.rotateToken(deviceId: deviceId, role: GatewayRole(rawValue: role), nowMs: nowMs,
                                                           to: operatorListeners)
            perform(effects)
            transcript.redactor.learn(change.token.token)
            return change.token.token
        } catch {
            throw GatewayError(error.errorShape)
        }
    }

    func scriptSetupCode(profile: BootstrapProfile?) -> IssuedSetupCode {
        // The scripting API issues codes in every auth mode (a fake Gateway without a shared
        // secret is the common test set-up) and for every URL; only the wire method refuses
        // mode `none` and public plain `ws://`. `full` is lowered on a private network all the same.
        issueSetupCode(plan: SetupCodePlan.planned(profile: profile, url: gatewayURL, urlSource: "gateway.bind=custom",
                                                   authLabel: "token"))
    }

    /// Issues the bootstrap token of a planned setup code.
    func issueSetupCode(plan: SetupCodePlan) -> IssuedSetupCode {
        let profile = plan.profile
        let issued = bootstrapTokens.issue(profile: profile, nowMs: nowMs)
        // The fingerprint pins this Gateway's own certificate: it rides only on its own wss://
        // URL, never on a request's `publicUrl` elsewhere, where a proxy presents a certificate
        // of its own (upstream "pins the prepared leaf only for a direct TLS gateway URL",
        // `src/pairing/setup-code.test.ts`).
        let fingerprint = plan.url == gatewayURL && plan.url.lowercased().hasPrefix("wss://") ? tlsFingerprint : nil
        let code = SetupCode(url: plan.url, bootstrapToken: issued.token,
                             expiresAtMs: self.profile.hasSetupCodeLifecycle ? issued.expiresAtMs : nil,
                             tlsFingerprint: fingerprint)
        transcript.redactor.learn(issued.token)
        transcript.redactor.learn(code.encoded)
        persistState()
        return IssuedSetupCode(code: code, setupId: issued.setupId, access: profile.access, expiresAtMs: issued.expiresAtMs,
                               accessDowngraded: plan.accessDowngraded)
    }

    /// `device.pair.setupCode`.
    func answerSetupCode(_ request: SetupCodeRequest, request frame: RequestFrame, on connectionId: String) {
        switch SetupCodePlan.plan(request, gatewayURL: gatewayURL, auth: sharedAuth) {
        case .failure(let error):
            fail(frame.id, method: frame.method, error.shape, to: connectionId)
        case .success(let plan):
            let issued = issueSetupCode(plan: plan)
            respond(.success(id: frame.id, payload: plan.result(setupId: issued.setupId, expiresAtMs: issued.expiresAtMs,
                                                                code: issued.code)),
                    method: frame.method, to: connectionId)
        }
    }

    func lockOut(address: String, scope: AuthRateLimitScope, durationMs: Int64) {
        authRateLimiter.lockOut(address, scope: scope, durationMs: durationMs, nowMs: nowMs)
        noteFault("\(address) locked out of \(scope.rawValue) for \(durationMs) ms")
    }

    /// The URL setup codes carry: ``GatewayConfiguration/advertisedURL``, else
    /// `ws://` (`wss://` with TLS) to ``GatewayConfiguration/advertisedHost`` or the bound host,
    /// at the bound port (as ``Gateway/advertisedURL``).
    var gatewayURL: String {
        if let advertised = configuration.advertisedURL { return advertised }
        let host = configuration.advertisedHost ?? configuration.host
        return "\(tlsFingerprint == nil ? "ws" : "wss")://\(host.contains(":") ? "[\(host)]" : host):\(configuration.port)"
    }
}
