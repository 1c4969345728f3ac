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
    /// Methods the Gateway core serves itself (pairing, tokens, nodes, identity); approvals and
    /// questions go to `OperatorState`.
    static let coreOperatorMethods: [GatewayMethod] = [
        .devicePairList, .devicePairApprove, .devicePairReject, .devicePairRemove, .devicePairRename,
        .deviceTokenRotate, .deviceTokenRevoke, .nodeList, .nodeDescribe, .nodeInvoke, .gatewayIdentityGet,
    ]

    /// The setup-lifecycle methods: served (with `operator.admin`) where the profile has the
    /// lifecycle, and, as upstream, "intentionally omitted from advertised discovery"
    /// (`docs/gateway/protocol.md` "Device pairing and device tokens" in openclaw/docs).
    static let setupLifecycleMethods: [GatewayMethod] = [.devicePairSetupCode, .devicePairSetupStatus]

    /// Whether the core serves `method` under this profile.
    func coreServes(_ method: String) -> Bool {
        let name = GatewayMethod(rawValue: method)
        return Self.coreOperatorMethods.contains(name) || sessionSubscriptionMethods.contains(name)
            || (profile.hasSetupCodeLifecycle && Self.setupLifecycleMethods.contains(name))
    }

    /// The methods `hello-ok.features.methods` advertises: exactly what this profile serves to
    /// this role (the setup-lifecycle methods excepted, see ``setupLifecycleMethods``).
    func advertisedMethods(role: GatewayRole) -> [String] {
        if role == .node {
            var methods: [GatewayMethod] = [.nodeInvokeResult, .nodeEvent, .nodePendingPull, .nodePendingAck, .skillsBins]
            methods += profile.hasNewerNodeMethods
                ? [.nodePendingDrain, .nodePluginSurfaceRefresh, .nodeInvokeProgress, .nodeSkillsUpdate, .nodePluginToolsUpdate]
                : [.nodeCanvasCapabilityRefresh]
            return methods.map(\.rawValue).sorted()
        }
        return (Self.coreOperatorMethods.map(\.rawValue) + sessionSubscriptionMethods.map(\.rawValue)
            + operatorState.offeredMethods + Self.chatMethods).sorted()
    }

    /// The events `hello-ok.features.events` advertises.
    func advertisedEvents(role: GatewayRole) -> [String] {
        var events: [GatewayEventName] = [.tick, .presence, .health, .heartbeat, .shutdown]
        if role == .node {
            events += [.nodeInvokeRequest, .voicewakeChanged]
        } else {
            events += [.devicePairRequested, .devicePairResolved, .execApprovalRequested, .execApprovalResolved]
            if profile.hasSetupCodeLifecycle { events += [.devicePairSetupCompleted, .devicePairSetupDeliveryUncertain] }
            if profile.hasUnifiedApprovals { events += [.sessionApproval] }
            if profile.hasQuestions { events += [.questionRequested, .questionResolved] }
            // `node.presence` comes with the structured `node.presence.activity` handler.
            if profile.nodeEventReply == .structured { events += [.nodePresence] }
            events += Self.chatEvents.map(GatewayEventName.init(rawValue:))
        }
        return events.map(\.rawValue).sorted()
    }

    /// Requests of an operator (or other non-node) session.
    func handleOperatorRequest(_ request: RequestFrame, session: Session, on connectionId: String) {
        let method = request.method
        let role = GatewayRole(rawValue: session.role)
        if OperatorMethodPolicy.nodeOnlyMethods.contains(method) {
            fail(request.id, method: method, OperatorMethodPolicy.unauthorizedRoleError(role), to: connectionId)
            return
        }
        // `push.test` is served but not advertised (upstream leaves it out of `features.methods`).
        let servedByCore = coreServes(method) || method == GatewayMethod.pushTest.rawValue
        let servedByOperatorState = OperatorState.serves(method) && operatorState.offers(method)
        let servedByChat = Self.chatMethods.contains(method)
        // A profile without a family answers `unknown method` before any scope check.
        guard servedByCore || servedByOperatorState || servedByChat else { return unknownMethod(request, on: connectionId) }
        if let error = OperatorMethodPolicy.authorize(method: method, role: session.role, scopes: session.scopes,
                                                      style: profile.missingScopeStyle) {
            fail(request.id, method: method, error, to: connectionId)
            return
        }
        if servedByCore {
            handleCoreOperatorMethod(request, session: session, on: connectionId)
            return
        }
        if servedByChat {
            handleChatRequest(request, session: session, on: connectionId)
            return
        }
        let caller = OperatorCaller(wireRole: session.role, wireScopes: session.scopes, surface: connectionId,
                                    deviceId: session.deviceId, clientId: session.client.id.rawValue,
                                    displayName: session.client.displayName)
        let race = takeRace(for: request)
        if let race, race.surfaceFirst { runSurfaceSide(of: race.arm) }
        guard let outcome = operatorState.handle(method: method, params: request.params, caller: caller, nowMs: nowMs) else {
            return unknownMethod(request, on: connectionId)
        }
        apply(outcome, to: request, on: connectionId)
        if let race, !race.surfaceFirst { runSurfaceSide(of: race.arm) }
    }

    /// Sends an operator outcome's reply and applies its effects.
    func apply(_ outcome: OperatorOutcome, to request: RequestFrame, on connectionId: String) {
        switch outcome.reply {
        case .success(let payload):
            respond(.success(id: request.id, payload: payload), method: request.method, to: connectionId)
        case .failure(let error):
            fail(request.id, method: request.method, error, to: connectionId)
        case .deferred(let waiter):
            if let interim = waiter.interimReply {
                respond(.success(id: request.id, payload: interim), method: request.method, to: connectionId)
            }
            operatorWaiters.append(PendingOperatorWaiter(connectionId: connectionId, requestId: request.id,
                                                         method: request.method, waiter: waiter))
        }
        applyOperatorEffects(outcome.effects)
    }

    /// Broadcasts operator events, completes waiters, logs record events.
    func applyOperatorEffects(_ effects: [OperatorEffect]) {
        for effect in effects {
            switch effect {
            case .publish(let event):
                publish(event)
            case .settled(let settlement):
                settleWaiters(settlement)
            case .observed(let recordEvent):
                events.append(.operatorRecord(recordEvent))
            }
        }
    }

    func publish(_ event: OperatorEvent) {
        for (connectionId, state) in connections.sorted(by: { $0.key < $1.key }) {
            guard let session = state.session, !state.closing else { continue }
            guard EventScopeGate.allows(event: event.name, role: session.role, scopes: session.scopes) else { continue }
            switch event.audience {
            case .broadcast, .sessionOrBroadcast:
                break
            case .adminOrDevices(let deviceIds):
                let isAdmin = session.scopes.contains(OperatorScope.admin.rawValue)
                guard isAdmin || session.deviceId.map(deviceIds.contains) == true else { continue }
            case .approvalSubscribers(let sessionKey):
                // Only sessions subscribed to the key with `includeApprovals:true` that may see
                // approvals get it (approvals-and-questions.md A.4, ApprovalSubscriptions).
                guard approvalSubscriptions.isSubscribed(connectionId: connectionId, key: sessionKey),
                      ApprovalSubscriptions.mayReceiveApprovals(scopes: session.scopes, deviceId: session.deviceId) else { continue }
            }
            sendSequenced(event: event.name, payload: event.payload, to: connectionId)
        }
    }

    func settleWaiters(_ settlement: OperatorSettlement) {
        let subject: OperatorWaiter.Subject
        switch settlement {
        case .approval(let record): subject = .approval(id: record.id)
        case .question(let record, _): subject = .question(id: record.id)
        }
        let (due, rest) = operatorWaiters.partitioned { $0.waiter.subject == subject }
        operatorWaiters = rest
        for pending in due {
            guard let reply = pending.waiter.finalReply(for: settlement) else { continue }
            respond(.success(id: pending.requestId, payload: reply), method: pending.method, to: pending.connectionId)
        }
    }

    /// Expires approvals and questions, then answers waiters whose deadline passed.
    func expireOperatorRecords(nowMs: Int64) {
        applyOperatorEffects(operatorState.expire(nowMs: nowMs))
        let (due, rest) = operatorWaiters.partitioned { $0.waiter.deadlineMs.map { $0 <= nowMs } ?? false }
        operatorWaiters = rest
        for pending in due {
            respond(.success(id: pending.requestId, payload: pending.waiter.timeoutReply ?? .null),
                    method: pending.method, to: pending.connectionId)
        }
    }

    func finishOperatorWaiters() {
        operatorWaiters = []
    }

    // MARK: - Pairing, tokens, nodes, identity

    func handleCoreOperatorMethod(_ request: RequestFrame, session: Session, on connectionId: String) {
        let params = request.params
        func string(_ key: String) -> String? { params?[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        func invalid(_ detail: String) {
            fail(request.id, method: request.method,
                 ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid \(request.method) params: \(detail)"),
                 to: connectionId)
        }
        func reply(_ payload: JSONValue) { respond(.success(id: request.id, payload: payload), method: request.method, to: connectionId) }
        let approver = ApproverContext(scopes: session.scopes)
        do throws(PairingError) {
            switch GatewayMethod(rawValue: request.method) {
            case .devicePairList:
                reply(pairingStore.listPayload(nowMs: nowMs, connectedDeviceIds: connectedDeviceIds))
            case .devicePairApprove:
                guard let requestId = string("requestId") else { return invalid("requestId required") }
                let approval = try pairingStore.approve(requestId: requestId, nowMs: nowMs, approver: approver)
                applyPairingEffects(approval.effects)
                reply(pairingStore.approvalPayload(approval))
            case .devicePairReject:
                guard let requestId = string("requestId") else { return invalid("requestId required") }
                let rejection = try pairingStore.reject(requestId: requestId, nowMs: nowMs)
                reply(rejection.responsePayload)
                applyRejection(rejection)
            case .devicePairRemove:
                guard let deviceId = string("deviceId") else { return invalid("deviceId required") }
                let effects = try pairingStore.remove(deviceId: deviceId, nowMs: nowMs)
                reply(["deviceId": .string(deviceId)])
                applyPairingEffects(effects)
            case .devicePairRename:
                guard let deviceId = string("deviceId") else { return invalid("deviceId required") }
                let device = try pairingStore.rename(deviceId: deviceId, label: string("label") ?? "")
                reply(device.listingJSON(tokens: pairingStore.tokens.tokens(deviceId: deviceId)))
            case .devicePairSetupCode:
                switch SetupCodeRequest.parse(params) {
                case .failure(let error): fail(request.id, method: request.method, error.shape, to: connectionId)
                case .success(let setup): answerSetupCode(setup, request: request, on: connectionId)
                }
            case .devicePairSetupStatus:
                guard let object = params?.objectValue, Set(object.keys).isSubset(of: ["setupId"]),
                      let setupId = object["setupId"]?.stringValue, (1...128).contains(setupId.count) else {
                    return invalid("setupId required (1-128 characters, no other members)")
                }
                var result: [String: JSONValue] = [:]
                if let outcome = bootstrapTokens.outcome(setupId: setupId) {
                    result[outcome.delivery == .completed ? "completion" : "deliveryUncertain"] = outcome.payload
                }
                reply(.object(result))
            case .deviceTokenRotate, .deviceTokenRevoke:
                guard let deviceId = string("deviceId"), let roleName = string("role") else { return invalid("deviceId and role required") }
                let role = GatewayRole(rawValue: roleName)
                // Node (non-operator) tokens also need operator.admin (gateway-protocol.md §5.5).
                if role != .operator, !session.scopes.contains(OperatorScope.admin.rawValue) {
                    fail(request.id, method: request.method,
                         OperatorMethodPolicy.missingScopeError(.admin, style: profile.missingScopeStyle),
                         to: connectionId)
                    return
                }
                if request.method == GatewayMethod.deviceTokenRotate.rawValue {
                    let scopes = params?["scopes"]?.arrayValue?.compactMap(\.stringValue)
                    let change = try pairingStore.rotateToken(deviceId: deviceId, role: role, scopes: scopes, nowMs: nowMs)
                    // The new bearer token is echoed only to the same device authenticated with
                    // that device's token (§5.5).
                    let sameDevice = session.deviceId == deviceId && session.authMethod == "device-token"
                    reply(change.rotationPayload(includeToken: sameDevice))
                    events.append(.deviceToken(deviceId: deviceId, role: role, action: .rotated))
                    applyPairingEffects(change.effects)
                } else {
                    let change = try pairingStore.revokeToken(deviceId: deviceId, role: role, nowMs: nowMs)
                    reply(change.revocationPayload)
                    events.append(.deviceToken(deviceId: deviceId, role: role, action: .revoked))
                    applyPairingEffects(change.effects)
                }
            case .nodeList:
                reply(["ts": .int(nowMs), "nodes": .array(nodeListing())])
            case .nodeDescribe:
                guard let nodeId = string("nodeId") else { return invalid("nodeId required") }
                guard var entry = nodeListing().first(where: { $0["nodeId"]?.stringValue == nodeId })?.objectValue else {
                    fail(request.id, method: request.method,
                         ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "unknown nodeId"), to: connectionId)
                    return
                }
                entry["ts"] = .int(nowMs)
                reply(.object(entry))
            case .nodeInvoke:
                guard let nodeId = string("nodeId"), let command = string("command") else { return invalid("nodeId and command required") }
                guard let idempotencyKey = string("idempotencyKey") else { return invalid("idempotencyKey required") }
                let timeoutMs = params?["timeoutMs"]?.int64Value.map { Int(max(0, $0)) } ?? NodeInvokeRequest.defaultTimeoutMs
                guard nodes.nodes[nodeId] != nil else {
                    fail(request.id, method: request.method, OperatorInvokeReply.notConnected(nodeId: nodeId), to: connectionId)
                    return
                }
                if let invokeId = startInvoke(nodeId: nodeId, command: command, params: params?["params"],
                                              timeoutMs: timeoutMs, idempotencyKey: idempotencyKey) {
                    invokeOperatorCallers[invokeId] = OperatorInvokeCaller(
                        connectionId: connectionId, requestId: request.id, nodeId: nodeId, command: command,
                        params: params?["params"], idempotencyKey: idempotencyKey)
                }
            case .gatewayIdentityGet:
                reply(["deviceId": .string(identity.deviceId), "publicKey": .string(identity.publicKeyBase64URL)])
            case .pushTest:
                guard let nodeId = string("nodeId") else { return invalid("nodeId required") }
                let environment = params?["environment"]?.stringValue
                if let environment, !["sandbox", "production"].contains(environment) {
                    return invalid("environment must be sandbox or production")
                }
                guard let registration = pushRegistrations[nodeId] else {
                    fail(request.id, method: request.method,
                         ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "node \(nodeId) has no APNs registration (connect iOS node first)"),
                         to: connectionId)
                    return
                }
                let title = string("title") ?? "OpenClaw"
                let body = string("body") ?? "Push test for node \(nodeId)"
                let used = environment ?? registration["environment"]?.stringValue ?? "production"
                let delivery = sendPush(nodeId: nodeId, registration: registration, pushType: "alert",
                                        payload: PushRelay.alertPayload(title: title, body: body, nodeId: nodeId, nowMs: nowMs))
                reply(PushRelay.testResult(delivery: delivery, registration: registration, environment: used,
                                           apnsId: random.uuidString()))
            case .sessionsSubscribe, .sessionsUnsubscribe:
                let subscribe = request.method == GatewayMethod.sessionsSubscribe.rawValue
                messageSubscriptions.setEverySession(subscribe, connectionId: connectionId)
                reply(["subscribed": .bool(subscribe)])
            case .sessionsMessagesUnsubscribe:
                guard let key = string("key") else { return invalid("key required") }
                messageSubscriptions.unsubscribe(connectionId: connectionId, key: key)
                approvalSubscriptions.unsubscribe(connectionId: connectionId, key: key)
                reply(["subscribed": false, "key": .string(key)])
            case .sessionsMessagesSubscribe:
                guard let key = string("key") else { return invalid("key required") }
                messageSubscriptions.subscribe(connectionId: connectionId, key: key)
                // The approval opt-in exists with the unified approval family only; elsewhere
                // `includeApprovals` is ignored.
                let wantsApprovals = profile.hasUnifiedApprovals && params?["includeApprovals"]?.boolValue == true
                let allowed = wantsApprovals
                    && ApprovalSubscriptions.mayReceiveApprovals(scopes: session.scopes, deviceId: session.deviceId)
                approvalSubscriptions.subscribe(connectionId: connectionId, key: key, includeApprovals: allowed)
                var payload: [String: JSONValue] = ["subscribed": true, "key": .string(key), "includeApprovals": .bool(allowed)]
                if allowed {
                    let caller = OperatorCaller(wireRole: session.role, wireScopes: session.scopes, surface: connectionId,
                                                deviceId: session.deviceId, clientId: session.client.id.rawValue,
                                                displayName: session.client.displayName)
                    applyOperatorEffects(operatorState.expire(nowMs: nowMs))
                    payload["approvalReplay"] = ApprovalSubscriptions.replay(
                        sessionKey: key, records: operatorState.approvals.all, caller: caller, nowMs: nowMs,
                        limit: approvalSubscriptions.replayLimit, basePath: operatorState.features.controlUIBasePath)
                }
                reply(.object(payload))
            default:
                unknownMethod(request, on: connectionId)
            }
        } catch {
            fail(request.id, method: request.method, error.errorShape, to: connectionId)
        }
    }

    /// The session subscription methods, served by every profile (`session.message` reaches
    /// subscribers only; the `includeApprovals` opt-in needs the unified approval family).
    /// Upstream lists all four with `since: "<=2026.7"` (the method-scope table, index id
    /// 57372435618); whether a 2026.4 Gateway served them is not dated, and serving them is the
    /// tolerant reading: otherwise an older Gateway's chat would have no live messages at all.
    var sessionSubscriptionMethods: [GatewayMethod] {
        [.sessionsMessagesSubscribe, .sessionsMessagesUnsubscribe, .sessionsSubscribe, .sessionsUnsubscribe]
    }

    var connectedDeviceIds: Set<String> {
        Set(connections.values.compactMap { $0.session?.deviceId })
    }

    /// `node.list` entries: paired node devices and connected nodes (gateway-protocol.md §7.9).
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
        for node in nodes.nodes.values {
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
