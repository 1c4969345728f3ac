/// A connect that passed pairing.
public struct AdmittedDevice: Sendable, Hashable {
    /// The device record, refreshed for this connect.
    public var device: PairedDevice
    /// How the device was approved silently during this connect, if it was.
    public var silentlyApprovedVia: ApprovalMethod?
    /// The bootstrap profile to hand off in `hello-ok.auth.deviceTokens` (a setup-code connect
    /// approved now); pass it to `PairingStore.grantHelloAuth(handOff:)`.
    public var bootstrapHandOff: BootstrapProfile?
}

/// The pairing decision for one connect attempt (docs/protocol.md §3.7 step 10).
public enum PairingAdmission: Sendable, Hashable {
    /// Proceed to device-token issuance and `hello-ok`; announce `effects` (a silent approval
    /// announces `device.pair.resolved approved`).
    case admitted(AdmittedDevice, effects: [PairingEffect])
    /// Answer the `connect` with `rejection.errorShape(style:)`, close with
    /// `PairingRequiredRejection.closeCode` and `rejection.closeReason(style:)`, and announce `effects`.
    case rejected(PairingRequiredRejection, request: PairingRequest, effects: [PairingEffect])
}

extension PairingStore {
    /// Runs the pairing step of a connect: checks the requirement, applies a silent approval
    /// path when `policy` (or a bootstrap token) allows one, and otherwise records the pending
    /// request the device must wait for.
    ///
    /// A silent approval goes through a pending request exactly like a manual one (so it can
    /// supersede older requests) and is announced as `device.pair.resolved approved`, without a
    /// `device.pair.requested`. If it cannot apply (the merged request asks for more than the
    /// connect itself, or an interactive request of the device is pending), the request stays
    /// pending and is announced instead.
    /// - Parameters:
    ///   - bootstrap: the verified bootstrap token, when the connect authenticated with one.
    public mutating func admit(
        _ attempt: PairingAttempt, policy: AutoApprovalPolicy = .manual, bootstrap: BootstrapGrant? = nil, nowMs: Int64
    ) -> PairingAdmission {
        var effects = expire(nowMs: nowMs).map(PairingEffect.expired)
        var approvedVia: ApprovalMethod?
        // Each silent approval clears at least one requirement; there are only four of them.
        for _ in 0...PairingRequirement.allCases.count {
            switch evaluate(attempt) {
            case .paired:
                guard let device = recordConnect(attempt, nowMs: nowMs) else { break }
                let handOff = approvedVia == .bootstrap ? bootstrap?.profile : nil
                return .admitted(AdmittedDevice(device: device, silentlyApprovedVia: approvedVia, bootstrapHandOff: handOff), effects: effects)
            case .required(let requirement, let existing):
                let method = policy.silentApproval(for: requirement, attempt: attempt, existing: existing, bootstrap: bootstrap,
                                                   setupCodeRequiresMobileClient: setupCodeApprovalRequiresMobileClient)
                let ask: PairingAsk
                if method == .bootstrap, let profile = bootstrap?.profile {
                    ask = PairingAsk(attempt, roles: profile.roles, scopes: profile.scopes, silent: true)
                } else {
                    ask = PairingAsk(attempt, silent: method != nil)
                }
                var outcome = upsert(ask, nowMs: nowMs)
                effects += outcome.effects
                if let method, outcome.request.silent {
                    if let approval = try? approve(requestId: outcome.request.requestId, nowMs: nowMs, approver: silentApprover(method, attempt), via: method) {
                        effects += approval.effects
                        approvedVia = method
                        continue
                    }
                    // The silent path could not apply: the request becomes an ordinary,
                    // announced one.
                    outcome.request.silent = false
                    pendingById[outcome.request.requestId] = outcome.request
                    effects.append(.requested(outcome.request))
                } else if outcome.created {
                    effects.append(.requested(outcome.request))
                }
                return .rejected(rejection(for: attempt, requirement, existing: existing, request: outcome.request, bootstrap: bootstrap),
                                 request: outcome.request, effects: effects)
            }
        }
        // Unreachable in practice (every silent approval clears a requirement); fail closed.
        let outcome = requestPairing(for: attempt, nowMs: nowMs)
        let existing = pairedDevice(attempt.deviceId)
        return .rejected(rejection(for: attempt, .notPaired, existing: existing, request: outcome.request, bootstrap: bootstrap),
                         request: outcome.request, effects: effects + outcome.effects)
    }

    /// The authority of a silent path: the scripting-like modes (bootstrap, approve-everything)
    /// are unbounded, because the request was built from the profile or the mode allows all;
    /// local and trusted-network approvals act with the connecting client's own scopes.
    private func silentApprover(_ method: ApprovalMethod, _ attempt: PairingAttempt) -> ApproverContext? {
        switch method {
        case .bootstrap, .auto, .manual: nil
        case .silent, .trustedCIDR: ApproverContext(scopes: attempt.grantableScopes, mayApproveNonOperatorRoles: true)
        }
    }

    private func rejection(
        for attempt: PairingAttempt, _ requirement: PairingRequirement, existing: PairedDevice?, request: PairingRequest,
        bootstrap: BootstrapGrant?
    ) -> PairingRequiredRejection {
        let sameKey = existing.flatMap { $0.publicKey == attempt.publicKey ? $0 : nil }
        // A fresh node that authenticated with a bootstrap token may still be approved by a
        // detached path, so it is told to keep retrying instead of pausing.
        let wait = bootstrap != nil && AutoApprovalPolicy.isWaitingForBootstrapApproval(requirement, attempt, existing)
        return PairingRequiredRejection(
            requirement: requirement, requestId: request.requestId, deviceId: attempt.deviceId,
            requestedRole: attempt.role, requestedScopes: attempt.reportedScopes,
            approvedRoles: sameKey?.roles, approvedScopes: sameKey?.scopes, waitForDetachedApproval: wait)
    }
}
