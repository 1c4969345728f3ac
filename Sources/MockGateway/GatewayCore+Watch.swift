import Foundation
import GatewayProtocol

/// The Gateway's side of the Apple Watch direct mode (docs/protocol.md §13): the pure
/// ``WatchDirectMachine``, the polls it holds, and the connection ids of Watch sessions.
struct WatchGlueState: Sendable {
    var machine: WatchDirectMachine
    /// The held polls, waiting for their answers.
    let polls = HeldWatchPolls()
    /// The id of the latest Watch request (every request counts, a Watch route or not).
    var requestCounter = 0
    /// The number of the latest Watch session's connection.
    var connectionCounter = 0

    init(rateLimit: AuthRateLimitConfiguration) {
        machine = WatchDirectMachine(rateLimit: rateLimit)
    }

    /// The prefix of the connection ids of Watch sessions (they have no socket).
    static let connectionPrefix = "watch-http-"

    static func isWatchConnection(_ connectionId: String) -> Bool { connectionId.hasPrefix(connectionPrefix) }
}

/// The Gateway's nonces and session tokens for the Watch machine: from the system's secure
/// generator unless secrets follow the seed (then from the core's random stream).
struct GatewayWatchTokens: WatchTokenSource {
    /// The core's random stream (written back after the machine ran).
    var random: SeededRandom
    /// Whether secrets come from the system's generator.
    let systemSecrets: Bool

    mutating func token(bytes: Int) -> String {
        if systemSecrets {
            var system = SystemRandomNumberGenerator()
            return SeededRandom.base64URL((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &system) })
        }
        return SeededRandom.base64URL(random.bytes(bytes))
    }
}

extension GatewayCore {
    /// Answers one Watch request, or `nil` when the path is not a Watch route. A poll waits
    /// here until the machine answers it (an event, its 20 s, supersession, a closed session).
    func watchRespond(to request: WatchHTTPRequest) async -> WatchHTTPResponse? {
        apps.watch.requestCounter += 1
        let requestId = apps.watch.requestCounter
        guard WatchDirectRules.isRoute(request.path) else { return nil }
        let outcome = handleWatch(.request(request, requestId: requestId, nowMs: nowMs), current: requestId)
        // The request may have set or moved a deadline (a held poll's 20 s, the idle timeout):
        // an event wakes the timer loop to read the next one.
        events.append(.watchRequest(method: request.method, path: request.path))
        if let response = outcome {
            events.append(.watchAnswered(WatchExchangeInfo(requestId: requestId, request: request, response: response)))
            return response
        }
        // Held: the request's own task waits, and hears of its cancellation (the client went
        // away) itself: nothing runs outside the task that carries the request.
        let answer = await apps.watch.polls.wait(requestId)
        if answer == nil { handleWatch(.pollAbandoned(requestId: requestId)) }
        events.append(.watchAnswered(WatchExchangeInfo(requestId: requestId, request: request, response: answer)))
        return answer ?? WatchHTTPResponse(status: WatchExchangeInfo.clientGoneStatus)
    }

    /// Moves the Watch machine in place (``WatchDirectMachine/handle(_:tokens:)``) and carries
    /// out its effects in order: held polls are held and answered, closed sessions' nodes
    /// unregistered, and the Gateway's decisions (a connect's credentials, a posted result) fed
    /// back in as inputs.
    /// - Parameter current: the request being handled now, if any.
    /// - Returns: the answer to `current` when it is answered now (`nil`: held, or no request).
    @discardableResult
    func handleWatch(_ input: WatchDirectMachine.Input, current: Int? = nil) -> WatchHTTPResponse? {
        var pending = runWatchMachine(input)
        var answer: WatchHTTPResponse?
        var index = 0
        while index < pending.count {
            let effect = pending[index]
            index += 1
            switch effect {
            case .answer(let requestId, let response) where requestId == current:
                answer = response
            case .answer(let requestId, let response):
                apps.watch.polls.answer(requestId, with: response)
            case .hold(let requestId):
                apps.watch.polls.hold(requestId)
            case .admit(let requestId, let candidate):
                pending += runWatchMachine(.admission(admitWatch(candidate), requestId: requestId, nowMs: nowMs))
            case .deliverResult(let requestId, let result):
                pending += runWatchMachine(.resultTaken(matched: takeWatchResult(result), requestId: requestId))
            case .sessionClosed(_, let connectionId, _):
                // The node machine's rule for any closed node connection: unregister, log,
                // presence, fail the invokes sent on it, and let waiting wakes look again.
                handleNodes(.connectionClosed(connectionId, nowMs: nowMs))
            }
        }
        return answer
    }

    /// One input to the Watch machine, its tokens drawn from the core's stream.
    private func runWatchMachine(_ input: WatchDirectMachine.Input) -> [WatchEffect] {
        var tokens = GatewayWatchTokens(random: random, systemSecrets: configuration.secretsFromSystemRandom)
        defer { random = tokens.random }
        return apps.watch.machine.handle(input, tokens: &tokens)
    }

    /// Sends `event` to the Watch session of `connectionId` (its queue or its waiting poll).
    func sendToWatch(event: String, payload: JSONValue?, connectionId: String) {
        guard let node = nodeState.registry.node(onConnection: connectionId) else { return }
        handleWatch(.event(nodeId: node.nodeId, event: event, payload: payload))
    }

    /// Shuts the Watch routes down: every session ends and later requests are 503.
    func closeWatchSessions() {
        handleWatch(.shutdown)
    }

    /// After a restart: a new Watch transport (no sessions, challenges or challenge rate-limit
    /// entries, as upstream's restarted Gateway process creates its own), when the old one was closed.
    func reopenWatchRoutes() {
        guard apps.watch.machine.isClosed else { return }
        apps.watch.machine = WatchDirectMachine(rateLimit: configuration.authRateLimit)
    }

    /// An invoke result posted by a Watch: whether an invoke waited for it.
    func takeWatchResult(_ posted: WatchInvokeResult) -> Bool {
        var error: NodeInvokeError?
        if posted.errorCode != nil || posted.errorMessage != nil {
            error = NodeInvokeError(code: posted.errorCode, message: posted.errorMessage)
        }
        let result = NodeInvokeResult(id: posted.id, nodeId: posted.nodeId, ok: posted.ok, payload: posted.payload,
                                      payloadJSON: posted.payloadJSON, error: error)
        switch nodeState.registry.takeResult(result, callerNodeId: posted.nodeId) {
        case .completed(let pending, let result):
            events.append(.invokeResult(id: pending.id, nodeId: posted.nodeId, ok: result.ok, matched: true, connectionId: posted.connectionId))
            finishInvoke(pending.id, with: .result(result), queued: queueForegroundAction(pending, result: result))
            return true
        case .ignored, .nodeIdMismatch:
            events.append(.invokeResult(id: posted.id, nodeId: posted.nodeId, ok: posted.ok, matched: false, connectionId: posted.connectionId))
            return false
        }
    }

    /// The Gateway's answer to a checked Watch connect: the credential and pairing decision is
    /// the access machine's (``AccessState/admitWatch(_:policy:reportTokenScopes:nowMs:to:)``);
    /// an admitted node is then registered on a socketless connection.
    func admitWatch(_ candidate: WatchConnectCandidate) -> WatchAdmission {
        switch access.admitWatch(candidate, policy: configuration.autoApproval, reportTokenScopes: profile.helloReportsTokenScopes,
                                 nowMs: nowMs, to: operatorListeners) {
        case .refused(let effects):
            perform(effects)
            return .refused
        case .rateLimited(let retryAfterMs, let effects):
            perform(effects)
            return .rateLimited(retryAfterMs: retryAfterMs)
        case .admitted(let deviceToken, let bootstrapGrant, let effects):
            perform(effects)
            let device = candidate.device
            apps.watch.connectionCounter += 1
            let connectionId = WatchGlueState.connectionPrefix + String(apps.watch.connectionCounter)
            registerWatchNode(candidate, connectionId: connectionId)
            if let bootstrapGrant {
                // The HTTP answer carries the device token; no frame fault applies to it.
                finishSetup(bootstrapGrant, deviceId: device.deviceId, deviceName: candidate.params.client.displayName, delivered: true)
            }
            return .admitted(nodeId: device.deviceId, connectionId: connectionId, deviceToken: deviceToken)
        }
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
        if let replaced = nodeState.registry.register(node) {
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
