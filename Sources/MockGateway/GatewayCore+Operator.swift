import Foundation
import GatewayProtocol

/// A request answered later: `exec.approval.waitDecision`, a two-phase `exec.approval.request`,
/// `question.waitAnswer`.
struct PendingOperatorWaiter: Sendable {
    let connectionId: String
    let requestId: String
    let method: String
    let waiter: OperatorWaiter
}

extension GatewayCore {
    /// The events `hello-ok.features.events` advertises (``EventRegistry``).
    func advertisedEvents(role: GatewayRole) -> [String] {
        EventRegistry.standard.advertised(role: role, profile: profile)
    }

    /// The sessions open now, by connection id: who operator events may reach.
    var operatorListeners: [OperatorListener] {
        connectionTable.byId.sorted { $0.key < $1.key }.compactMap { connectionId, state in
            guard let session = state.session, !state.closing else { return nil }
            return OperatorListener(connectionId: connectionId, role: session.role, scopes: session.scopes, deviceId: session.deviceId)
        }
    }

    /// Moves the operator surface (``OperatorSurface/handle(_:to:)``) and runs its effects.
    func handleOperator(_ input: OperatorSurface.Input) {
        perform(operatorSurface.handle(input, to: operatorListeners))
    }

    /// Sends an operator outcome's reply and applies its effects.
    func apply(_ outcome: OperatorOutcome, to request: RequestFrame, on connectionId: String) {
        handleOperator(.answered(outcome, requestId: request.id, method: request.method, connectionId: connectionId))
    }

    /// Broadcasts operator events, completes waiters, logs record events.
    func applyOperatorEffects(_ effects: [OperatorEffect]) {
        handleOperator(.effects(effects))
    }

    /// Expires approvals and questions, then answers waiters whose deadline passed.
    func expireOperatorRecords(nowMs: Int64) {
        handleOperator(.clock(nowMs: nowMs))
    }

    func finishOperatorWaiters() {
        handleOperator(.shutdown)
    }

    // MARK: - Pairing, tokens, nodes, identity

    func devicePairList(_ call: MethodCall) {
        handleAccess(.list(call.replyAddress, connectedDeviceIds: connectedDeviceIds, nowMs: nowMs))
    }

    func devicePairApprove(_ call: MethodCall) {
        guard let requestId = call.string("requestId") else { return invalid(call, "requestId required") }
        handleAccess(.approve(requestId: requestId, approver: ApproverContext(scopes: call.session.scopes), call.replyAddress,
                              nowMs: nowMs))
    }

    func devicePairReject(_ call: MethodCall) {
        guard let requestId = call.string("requestId") else { return invalid(call, "requestId required") }
        handleAccess(.reject(requestId: requestId, call.replyAddress, nowMs: nowMs))
    }

    func devicePairRemove(_ call: MethodCall) {
        guard let deviceId = call.string("deviceId") else { return invalid(call, "deviceId required") }
        handleAccess(.remove(deviceId: deviceId, call.replyAddress, nowMs: nowMs))
    }

    func devicePairRename(_ call: MethodCall) {
        guard let deviceId = call.string("deviceId") else { return invalid(call, "deviceId required") }
        handleAccess(.rename(deviceId: deviceId, label: call.string("label") ?? "", call.replyAddress))
    }

    func devicePairSetupCode(_ call: MethodCall) {
        switch SetupCodeRequest.parse(call.params) {
        case .failure(let error): fail(call, error.shape)
        case .success(let setup): answerSetupCode(setup, request: call.request, on: call.connectionId)
        }
    }

    func devicePairSetupStatus(_ call: MethodCall) {
        guard let object = call.params?.objectValue, Set(object.keys).isSubset(of: ["setupId"]),
              let setupId = object["setupId"]?.stringValue, (1...128).contains(setupId.count) else {
            return invalid(call, "setupId required (1-128 characters, no other members)")
        }
        var result: [String: JSONValue] = [:]
        if let outcome = bootstrapTokens.outcome(setupId: setupId) {
            result[outcome.delivery == .completed ? "completion" : "deliveryUncertain"] = outcome.payload
        }
        reply(call, .object(result))
    }

    /// `device.token.rotate` (`rotate`) and `device.token.revoke`.
    func deviceTokenChange(_ call: MethodCall, rotate: Bool) {
        guard let deviceId = call.string("deviceId"), let roleName = call.string("role") else {
            return invalid(call, "deviceId and role required")
        }
        let role = GatewayRole(rawValue: roleName)
        // Node (non-operator) tokens also need operator.admin (docs/protocol.md §5.5).
        if role != .operator, !call.session.scopes.contains(OperatorScope.admin.rawValue) {
            return fail(call, OperatorMethodPolicy.missingScopeError(.admin, style: profile.missingScopeStyle))
        }
        if rotate {
            let scopes = call.params?["scopes"]?.arrayValue?.compactMap(\.stringValue)
            // The new bearer token is echoed only to the same device authenticated with that
            // device's token (docs/protocol.md §5.5).
            let sameDevice = call.session.deviceId == deviceId && call.session.authMethod == "device-token"
            handleAccess(.rotateToken(deviceId: deviceId, role: role, scopes: scopes, echoesToken: sameDevice, call.replyAddress,
                                      nowMs: nowMs))
        } else {
            handleAccess(.revokeToken(deviceId: deviceId, role: role, call.replyAddress, nowMs: nowMs))
        }
    }

    func nodeDescribe(_ call: MethodCall) {
        guard let nodeId = call.string("nodeId") else { return invalid(call, "nodeId required") }
        guard var entry = nodeListing().first(where: { $0["nodeId"]?.stringValue == nodeId })?.objectValue else {
            return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unknown nodeId"))
        }
        entry["ts"] = .int(nowMs)
        reply(call, .object(entry))
    }

    func nodeInvoke(_ call: MethodCall) {
        let params = call.params
        guard let nodeId = call.string("nodeId"), let command = call.string("command") else {
            return invalid(call, "nodeId and command required")
        }
        guard let idempotencyKey = call.string("idempotencyKey") else { return invalid(call, "idempotencyKey required") }
        let requested = params?["timeoutMs"]?.int64Value
        let timeoutMs = requested.map { Int(max(0, $0)) } ?? NodeInvokeRequest.defaultTimeoutMs
        // Command policy, first check (before any wake): the command itself and the caller's scopes.
        if let refusal = nodeInvokePreflight(call, command: command) { return fail(call, refusal) }
        // Upstream bounds the wake sequence by the caller's own `timeoutMs` only.
        let deadlineMs = requested.flatMap { $0 > 0 ? nowMs + $0 : nil }
        let caller = OperatorInvokeCaller(connectionId: call.connectionId, requestId: call.request.id, nodeId: nodeId,
                                          command: command, params: params?["params"], idempotencyKey: idempotencyKey,
                                          admittedPolicy: nodeState.commandPolicy)
        routeOperatorInvoke(caller, timeoutMs: timeoutMs, deadlineMs: deadlineMs)
    }

    func pushTestMethod(_ call: MethodCall) {
        guard let nodeId = call.string("nodeId") else { return invalid(call, "nodeId required") }
        let environment = call.params?["environment"]?.stringValue
        if let environment, !["sandbox", "production"].contains(environment) {
            return invalid(call, "environment must be sandbox or production")
        }
        guard let registration = nodeState.push.registrations[nodeId] else {
            return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue,
                                         message: "node \(nodeId) has no APNs registration (connect iOS node first)"))
        }
        let title = call.string("title") ?? "OpenClaw"
        let body = call.string("body") ?? "Push test for node \(nodeId)"
        let used = environment ?? registration["environment"]?.stringValue ?? "production"
        let delivery = sendPush(nodeId: nodeId, registration: registration, pushType: "alert",
                                payload: PushRelay.alertPayload(title: title, body: body, nodeId: nodeId, nowMs: nowMs))
        reply(call, PushRelay.testResult(delivery: delivery, registration: registration, environment: used,
                                         apnsId: random.uuidString()))
    }

    // MARK: - Session subscriptions

    func sessionsMessagesUnsubscribe(_ call: MethodCall) {
        guard let key = call.string("key") else { return invalid(call, "key required") }
        handleChat(.unfollowMessages(key: key, connectionId: call.connectionId))
        operatorSurface.approvalSubscriptions.unsubscribe(connectionId: call.connectionId, key: key)
        reply(call, ["subscribed": false, "key": .string(key)])
    }

    /// `sessions.messages.subscribe`: `session.message` reaches subscribers only; the
    /// `includeApprovals` opt-in exists with the unified approval family only (elsewhere it is
    /// ignored).
    func sessionsMessagesSubscribe(_ call: MethodCall) {
        guard let key = call.string("key") else { return invalid(call, "key required") }
        let session = call.session
        handleChat(.followMessages(key: key, connectionId: call.connectionId))
        let wantsApprovals = profile.hasUnifiedApprovals && call.params?["includeApprovals"]?.boolValue == true
        let allowed = wantsApprovals
            && ApprovalSubscriptions.mayReceiveApprovals(scopes: session.scopes, deviceId: session.deviceId)
        operatorSurface.approvalSubscriptions.subscribe(connectionId: call.connectionId, key: key, includeApprovals: allowed)
        var payload: [String: JSONValue] = ["subscribed": true, "key": .string(key), "includeApprovals": .bool(allowed)]
        if allowed {
            applyOperatorEffects(operatorSurface.state.expire(nowMs: nowMs))
            payload["approvalReplay"] = ApprovalSubscriptions.replay(
                sessionKey: key, records: operatorSurface.state.approvals.all, caller: call.operatorCaller, nowMs: nowMs,
                limit: operatorSurface.approvalSubscriptions.replayLimit, basePath: operatorSurface.state.features.controlUIBasePath)
        }
        reply(call, .object(payload))
    }

    var connectedDeviceIds: Set<String> {
        Set(connectionTable.byId.values.compactMap { $0.session?.deviceId })
    }

    /// `node.list` entries: paired node devices and connected nodes (docs/protocol.md §6.8).
    func nodeListing() -> [JSONValue] {
        var byId: [String: [String: JSONValue]] = [:]
        for device in pairingStore.pairedDevices where device.hasRole(.node) {
            var entry: [String: JSONValue] = [
                "nodeId": .string(device.deviceId), "paired": true, "connected": false,
                "approvedAtMs": .int(device.approvedAtMs),
            ]
            if let name = device.label ?? device.displayName { entry["displayName"] = .string(name) }
            if let platform = device.platform { entry["platform"] = .string(platform) }
            if let family = device.deviceFamily { entry["deviceFamily"] = .string(family) }
            if let seen = device.lastSeenAtMs { entry["lastSeenAtMs"] = .int(seen) }
            if let reason = device.lastSeenReason { entry["lastSeenReason"] = .string(reason) }
            byId[device.deviceId] = entry
        }
        for node in nodeState.registry.nodes.values {
            var entry = byId[node.nodeId] ?? ["nodeId": .string(node.nodeId), "paired": false]
            entry["connected"] = true
            entry["connectedAtMs"] = .int(node.connectedAtMs)
            entry["clientId"] = .string(node.clientId)
            entry["clientMode"] = .string(node.clientMode)
            entry["platform"] = .string(node.platform)
            entry["version"] = .string(node.version)
            entry["remoteIp"] = .string(node.remoteIp)
            entry["caps"] = .array(node.caps.map(JSONValue.string))
            entry["commands"] = .array(node.commands.map(JSONValue.string))
            entry["permissions"] = .object(node.permissions.mapValues(JSONValue.bool))
            if let name = node.displayName, entry["displayName"] == nil { entry["displayName"] = .string(name) }
            if let family = node.deviceFamily { entry["deviceFamily"] = .string(family) }
            if let model = node.modelIdentifier { entry["modelIdentifier"] = .string(model) }
            if let pathEnv = node.pathEnv { entry["pathEnv"] = .string(pathEnv) }
            byId[node.nodeId] = entry
        }
        return byId.keys.sorted().compactMap { byId[$0].map(JSONValue.object) }
    }
}

extension Array {
    /// The elements that satisfy `predicate`, and the rest, both in order.
    func partitioned(by predicate: (Element) -> Bool) -> (matching: [Element], rest: [Element]) {
        var matching: [Element] = []
        var rest: [Element] = []
        for element in self {
            if predicate(element) { matching.append(element) } else { rest.append(element) }
        }
        return (matching, rest)
    }
}
