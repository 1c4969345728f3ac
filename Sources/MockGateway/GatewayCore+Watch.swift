import Foundation
import GatewayProtocol

/// The Gateway's side of the Apple Watch direct mode (docs/protocol.md §13): the pure
/// ``WatchDirectMachine``, the polls it holds, and the connection ids of Watch sessions.
struct WatchGlueState: Sendable {
    var machine: WatchDirectMachine
    /// The held polls, waiting for their answers.
    let polls = HeldWatchPolls()
    var requestCounter = 0
    var connectionCounter = 0

    init(rateLimit: AuthRateLimitConfiguration) {
        machine = WatchDirectMachine(rateLimit: rateLimit)
    }

    /// The prefix of the connection ids of Watch sessions (they have no socket).
    static let connectionPrefix = "watch-http-"

    static func isWatchConnection(_ connectionId: String) -> Bool { connectionId.hasPrefix(connectionPrefix) }
}

extension GatewayCore {
    /// Answers one Watch request, or `nil` when the path is not a Watch route. A poll waits
    /// here until the machine answers it (an event, its 20 s, supersession, a closed session).
    func watchRespond(to request: WatchHTTPRequest) async -> WatchHTTPResponse? {
        watch.requestCounter += 1
        let requestId = watch.requestCounter
        var machine = watch.machine
        let (action, effects) = machine.handle(
            request, requestId: requestId, nowMs: nowMs, fresh: { freshWatchToken(bytes: $0) },
            admit: { candidate in admitWatch(candidate) },
            deliverResult: { result in takeWatchResult(result) })
        watch.machine = machine
        if action == .hold { watch.polls.hold(requestId) }
        applyWatchEffects(effects)
        if action != .notWatchRoute {
            // The request may have set or moved a deadline (a held poll's 20 s, the idle timeout):
            // an event wakes the timer loop to read the next one.
            events.append(.watchRequest(method: request.method, path: request.path))
        }
        switch action {
        case .notWatchRoute:
            return nil
        case .respond(let response):
            events.append(.watchAnswered(WatchExchangeInfo(requestId: requestId, request: request, response: response)))
            return response
        case .hold:
            // The request's own task waits, and hears of its cancellation (the client went away)
            // itself: nothing runs outside the task that carries the request.
            let answer = await watch.polls.wait(requestId)
            if answer == nil { watchPollAbandoned(requestId) }
            events.append(.watchAnswered(WatchExchangeInfo(requestId: requestId, request: request, response: answer)))
            return answer ?? WatchHTTPResponse(status: WatchExchangeInfo.clientGoneStatus)
        }
    }

    /// A nonce or session token of `bytes` random bytes: from the system's secure generator
    /// unless secrets follow the seed.
    func freshWatchToken(bytes: Int) -> String {
        if configuration.secretsFromSystemRandom {
            var system = SystemRandomNumberGenerator()
            return SeededRandom.base64URL((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &system) })
        }
        return SeededRandom.base64URL(random.bytes(bytes))
    }

    /// The client of held poll `requestId` went away before its answer: the session closes.
    func watchPollAbandoned(_ requestId: Int) {
        applyWatchEffects(watch.machine.pollAbandoned(requestId: requestId))
    }

    /// Carries out the machine's effects: answers held polls, unregisters closed sessions' nodes.
    func applyWatchEffects(_ effects: [WatchEffect]) {
        for effect in effects {
            switch effect {
            case .answer(let requestId, let response):
                watch.polls.answer(requestId, with: response)
            case .sessionClosed(let nodeId, let connectionId, _):
                guard nodes.unregister(connectionId: connectionId) != nil else { continue }
                failInvokes(onConnection: connectionId)
                events.append(.nodeDisconnected(nodeId: nodeId, connectionId: connectionId))
                broadcastPresence()
            }
        }
    }

    /// Sends `event` to the Watch session of `connectionId` (its queue or its waiting poll).
    func sendToWatch(event: String, payload: JSONValue?, connectionId: String) {
        guard let node = nodes.node(onConnection: connectionId) else { return }
        let (_, effects) = watch.machine.enqueue(nodeId: node.nodeId, event: event, payload: payload)
        applyWatchEffects(effects)
    }

    /// The Watch timers (poll timeouts, idle expiry) at the current time.
    func processWatchTimers() {
        applyWatchEffects(watch.machine.advance(nowMs: nowMs))
    }

    /// Shuts the Watch routes down: every session ends and later requests are 503.
    func closeWatchSessions() {
        applyWatchEffects(watch.machine.close())
    }

    /// After a restart: a new Watch transport (no sessions, challenges or challenge rate-limit
    /// entries, as upstream's restarted Gateway process creates its own), when the old one was closed.
    func reopenWatchRoutes() {
        guard watch.machine.isClosed else { return }
        watch.machine = WatchDirectMachine(rateLimit: configuration.authRateLimit)
    }

    /// An invoke result posted by a Watch: whether an invoke waited for it.
    func takeWatchResult(_ posted: WatchInvokeResult) -> Bool {
        var error: NodeInvokeError?
        if posted.errorCode != nil || posted.errorMessage != nil {
            error = NodeInvokeError(code: posted.errorCode, message: posted.errorMessage)
        }
        let result = NodeInvokeResult(id: posted.id, nodeId: posted.nodeId, ok: posted.ok, payload: posted.payload,
                                      payloadJSON: posted.payloadJSON, error: error)
        switch nodes.takeResult(result, callerNodeId: posted.nodeId) {
        case .completed(let pending, let result):
            events.append(.invokeResult(id: pending.id, nodeId: posted.nodeId, ok: result.ok, matched: true, connectionId: posted.connectionId))
            finishInvoke(pending.id, with: .result(result), queued: queueForegroundAction(pending, result: result))
            return true
        case .ignored, .nodeIdMismatch:
            events.append(.invokeResult(id: posted.id, nodeId: posted.nodeId, ok: posted.ok, matched: false, connectionId: posted.connectionId))
            return false
        }
    }

    /// The credential and pairing decision of a checked Watch connect (docs/protocol.md §13.2
    /// step 6): a bootstrap token of the `node` setup profile pairs the device silently; a
    /// device token must be the paired device's node token. The node is then registered on a
    /// socketless connection.
    func admitWatch(_ candidate: WatchConnectCandidate) -> WatchAdmission {
        let device = candidate.device
        let address = candidate.clientAddress
        let attempt = PairingAttempt(params: candidate.params, deviceId: device.deviceId, publicKey: device.publicKey,
                                     remoteIp: address, isLoopback: (try? IPAddress(parsing: address))?.isLoopback ?? false,
                                     hasBrowserOrigin: false, origin: nil)
        var bootstrapGrant: BootstrapGrant?
        switch candidate.credential {
        case .bootstrapToken(let token):
            let check = authRateLimiter.check(address, scope: .bootstrapToken, nowMs: nowMs)
            guard check.allowed else { return .rateLimited(retryAfterMs: check.retryAfterMs) }
            if let existing = pairingStore.pairedDevice(device.deviceId), existing.publicKey != device.publicKey { return .refused }
            guard case .success(let grant) = bootstrapTokens.verify(token, deviceId: device.deviceId, publicKey: device.publicKey,
                                                                    role: .node, scopes: [], nowMs: nowMs),
                  grant.profile.access == .node
            else {
                authRateLimiter.recordFailure(address, scope: .bootstrapToken, nowMs: nowMs)
                return .refused
            }
            authRateLimiter.reset(address, scope: .bootstrapToken)
            bootstrapGrant = grant
        case .deviceToken(let token):
            let check = authRateLimiter.check(address, scope: .deviceToken, nowMs: nowMs)
            guard check.allowed else { return .rateLimited(retryAfterMs: check.retryAfterMs) }
            guard pairingStore.pairedDevice(device.deviceId)?.publicKey == device.publicKey,
                  case .success = pairingStore.verifyDeviceToken(token, deviceId: device.deviceId, role: .node, scopes: [],
                                                                 sharedAuthGeneration: sharedAuthGeneration, nowMs: nowMs)
            else {
                authRateLimiter.recordFailure(address, scope: .deviceToken, nowMs: nowMs)
                return .refused
            }
            authRateLimiter.reset(address, scope: .deviceToken)
        }
        // A node-profile setup code approves a canonical Watch whatever the client (upstream
        // `approveBootstrapDevicePairing` on the Watch route); the WebSocket rule that limits
        // setup-code approval to the mobile apps does not apply here.
        let mobileOnly = pairingStore.setupCodeApprovalRequiresMobileClient
        pairingStore.setupCodeApprovalRequiresMobileClient = false
        let admission = pairingStore.admit(attempt, policy: configuration.autoApproval, bootstrap: bootstrapGrant, nowMs: nowMs)
        pairingStore.setupCodeApprovalRequiresMobileClient = mobileOnly
        let handOff: BootstrapProfile?
        switch admission {
        case .rejected(_, _, let effects):
            applyPairingEffects(effects)
            return .refused
        case .admitted(let admitted, let effects):
            applyPairingEffects(effects)
            handOff = admitted.bootstrapHandOff
        }
        // A device's first node surface is a node pairing request, counted per address in the
        // node-pairing rate limit as on the WebSocket path (`admitNodeSurface`; upstream's Watch
        // connect wraps `requestNodePairing` in AUTH_RATE_LIMIT_SCOPE_NODE_PAIRING): locked out, 429.
        if nodeSurfaces[device.deviceId] != device.publicKey {
            let check = authRateLimiter.check(address, scope: .nodePairing, nowMs: nowMs)
            guard check.allowed else { return .rateLimited(retryAfterMs: check.retryAfterMs) }
            authRateLimiter.recordFailure(address, scope: .nodePairing, nowMs: nowMs)
        }
        pairingStore.recordConnect(attempt, nowMs: nowMs)
        nodeSurfaces[device.deviceId] = device.publicKey
        let grant = pairingStore.grantHelloAuth(deviceId: device.deviceId, role: .node, scopes: [], handOff: handOff,
                                                reportTokenScopes: profile.helloReportsTokenScopes, nowMs: nowMs)
        guard let token = grant.deviceToken?.token else { return .refused }
        if bootstrapGrant != nil { events.append(.deviceToken(deviceId: device.deviceId, role: .node, action: .issued)) }
        watch.connectionCounter += 1
        let connectionId = WatchGlueState.connectionPrefix + String(watch.connectionCounter)
        registerWatchNode(candidate, connectionId: connectionId)
        if let bootstrapGrant {
            // The HTTP answer carries the device token; no frame fault applies to it.
            finishSetup(bootstrapGrant, deviceId: device.deviceId, deviceName: candidate.params.client.displayName, delivered: true)
        }
        return .admitted(nodeId: device.deviceId, connectionId: connectionId, deviceToken: token)
    }

    /// Registers the Watch node with the command surface a WebSocket node would get
    /// (docs/protocol.md §6.7): its declared commands reconciled with its approved surface and
    /// cut by the node command policy's watchOS allowlist (upstream's Watch connect calls
    /// `reconcileNodePairingOnConnect` like the WebSocket connect). A widened surface registers
    /// only the approved commands and opens a node pairing request (`node.pair.requested`).
    private func registerWatchNode(_ candidate: WatchConnectCandidate, connectionId: String) {
        let params = candidate.params
        let nodeId = candidate.device.deviceId
        let node = RegisteredNode(
            nodeId: nodeId, connectionId: connectionId, clientId: params.client.id.rawValue, clientMode: params.client.mode.rawValue,
            displayName: params.client.displayName, platform: params.client.platform, version: params.client.version,
            deviceFamily: params.client.deviceFamily, modelIdentifier: params.client.modelIdentifier, caps: params.caps ?? [],
            commands: reconcileNodeSurface(nodeId: nodeId, params: params, remoteIp: candidate.clientAddress),
            permissions: params.permissions ?? [:], pathEnv: nil, remoteIp: candidate.clientAddress, connectedAtMs: nowMs)
        if let replaced = nodes.register(node) {
            failInvokes(onConnection: replaced)
            events.append(.nodeDisconnected(nodeId: nodeId, connectionId: replaced))
        }
        events.append(.nodeConnected(nodeId: nodeId, connectionId: connectionId))
        broadcastPresence()
    }
}

extension SeededRandom {
    /// `bytes` as unpadded base64url.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
