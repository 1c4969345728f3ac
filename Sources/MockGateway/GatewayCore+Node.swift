import Foundation
import GatewayProtocol

extension GatewayCore {
    /// Requests of a `role:"node"` session (gateway-protocol.md §7.2).
    func handleNodeRequest(_ request: RequestFrame, session: Session, on connectionId: String) {
        let nodeId = session.nodeId ?? session.client.id.rawValue
        switch request.method {
        case "node.invoke.result":
            handleInvokeResult(request, nodeId: nodeId, on: connectionId)
        case "node.event":
            handleNodeEvent(request, session: session, nodeId: nodeId, on: connectionId)
        case "node.pending.pull":
            let actions = pendingActions[nodeId] ?? []
            respond(.success(id: request.id, payload: ["nodeId": .string(nodeId), "actions": .array(actions)]),
                    method: request.method, to: connectionId)
        case "node.pending.ack":
            guard let ids = request.params?["ids"]?.arrayValue?.compactMap(\.stringValue), !ids.isEmpty else {
                fail(request.id, method: request.method,
                     ErrorShape(code: "INVALID_REQUEST", message: "invalid node.pending.ack params: ids must be a non-empty array of strings"),
                     to: connectionId)
                return
            }
            var remaining = pendingActions[nodeId] ?? []
            let acked = remaining.compactMap { $0["id"]?.stringValue }.filter(ids.contains)
            remaining.removeAll { action in action["id"]?.stringValue.map(ids.contains) ?? false }
            pendingActions[nodeId] = remaining
            respond(.success(id: request.id, payload: [
                "nodeId": .string(nodeId), "ackedIds": .array(acked.map(JSONValue.string)),
                "remainingCount": .int(Int64(remaining.count)),
            ]), method: request.method, to: connectionId)
        case "node.pending.drain" where profile.hasNewerNodeMethods:
            respond(.success(id: request.id, payload: [
                "nodeId": .string(nodeId), "revision": 0, "items": [], "hasMore": false,
            ]), method: request.method, to: connectionId)
        case "node.pluginSurface.refresh" where profile.hasNewerNodeMethods:
            respond(.success(id: request.id, payload: canvasSurface.pluginSurfaceRefreshPayload(capability: mintCanvasCapability())),
                    method: request.method, to: connectionId)
        case "node.canvas.capability.refresh" where !profile.hasNewerNodeMethods:
            // Protocol-3-era shape (CanvasSurface): the v2026.4 clients read `canvasCapability`.
            respond(.success(id: request.id, payload: canvasSurface.capabilityRefreshPayload(capability: mintCanvasCapability(),
                                                                                             nowMs: nowMs)),
                    method: request.method, to: connectionId)
        case "node.invoke.progress", "node.skills.update", "node.pluginTools.update":
            guard profile.hasNewerNodeMethods else { return unknownMethod(request, on: connectionId) }
            respond(.success(id: request.id, payload: ["ok": true]), method: request.method, to: connectionId)
        case "skills.bins":
            respond(.success(id: request.id, payload: ["bins": []]), method: request.method, to: connectionId)
        default:
            if OperatorMethodPolicy.isKnownOperatorMethod(request.method) {
                fail(request.id, method: request.method,
                     ErrorShape(code: "INVALID_REQUEST", message: "unauthorized role: node"), to: connectionId)
            } else {
                unknownMethod(request, on: connectionId)
            }
        }
    }

    /// The canvas URLs, from the bound address (the core's configuration carries the bound port).
    var canvasSurface: CanvasSurface { CanvasSurface(host: configuration.host, port: configuration.port) }

    /// A fresh canvas capability (18 bytes of the capability stream, base64url).
    func mintCanvasCapability() -> String {
        CanvasSurface.mintCapability(capabilityRandom.bytes(18))
    }

    /// The canvas members of a `hello-ok` (see ``CanvasSurface/helloFields(isNode:newerNodeMethods:legacyNodeProtocol:capability:)``).
    func helloCanvasFields(role: GatewayRole, offeredMaxProtocol: Int) -> (pluginSurfaceUrls: [String: String]?, canvasHostUrl: String?) {
        guard role == .node else { return (nil, nil) }
        return canvasSurface.helloFields(
            isNode: true, newerNodeMethods: profile.hasNewerNodeMethods,
            legacyNodeProtocol: CanvasSurface.usesLegacyNodeProtocol(maxProtocol: offeredMaxProtocol,
                                                                      currentProtocol: profile.protocolVersion),
            capability: mintCanvasCapability())
    }

    // MARK: - node.invoke.result

    func handleInvokeResult(_ request: RequestFrame, nodeId: String, on connectionId: String) {
        guard var params = request.params?.objectValue,
              let id = params["id"]?.stringValue, !id.isEmpty,
              params["nodeId"]?.stringValue != nil,
              params["ok"]?.boolValue != nil
        else {
            fail(request.id, method: request.method,
                 ErrorShape(code: "INVALID_REQUEST", message: "invalid node.invoke.result params: id, nodeId and ok are required"),
                 to: connectionId)
            return
        }
        // The real normaliser: null payloadJSON/error removed, a non-string payloadJSON moved to
        // payload (gateway-protocol.md §7.4).
        if params["payloadJSON"] == .null { params.removeValue(forKey: "payloadJSON") }
        if params["error"] == .null { params.removeValue(forKey: "error") }
        if let raw = params["payloadJSON"], raw.stringValue == nil {
            params["payload"] = raw
            params.removeValue(forKey: "payloadJSON")
        }
        guard let result = try? JSONValue.object(params).decode(as: NodeInvokeResult.self) else {
            fail(request.id, method: request.method,
                 ErrorShape(code: "INVALID_REQUEST", message: "invalid node.invoke.result params"), to: connectionId)
            return
        }
        switch nodes.takeResult(result, callerNodeId: nodeId) {
        case .nodeIdMismatch:
            events.append(.invokeResult(id: id, nodeId: result.nodeId, ok: result.ok, matched: false, connectionId: connectionId))
            fail(request.id, method: request.method, ErrorShape(code: "INVALID_REQUEST", message: "nodeId mismatch"), to: connectionId)
        case .ignored:
            events.append(.invokeResult(id: id, nodeId: nodeId, ok: result.ok, matched: false, connectionId: connectionId))
            respond(.success(id: request.id, payload: ["ok": true, "ignored": true]), method: request.method, to: connectionId)
        case .completed(let pending, let result):
            events.append(.invokeResult(id: pending.id, nodeId: nodeId, ok: result.ok, matched: true, connectionId: connectionId))
            respond(.success(id: request.id, payload: ["ok": true]), method: request.method, to: connectionId)
            finishInvoke(pending.id, with: .result(result))
        }
    }

    // MARK: - node.event

    func handleNodeEvent(_ request: RequestFrame, session: Session, nodeId: String, on connectionId: String) {
        guard let params = request.params?.objectValue, let event = params["event"]?.stringValue, !event.isEmpty else {
            fail(request.id, method: request.method,
                 ErrorShape(code: "INVALID_REQUEST", message: "invalid node.event params: event must be a non-empty string"),
                 to: connectionId)
            return
        }
        // payloadJSON must be a string by schema, but `null` is accepted: Swift's generic sender
        // can produce it (gateway-protocol.md §7.5).
        let payloadJSON: String?
        if let text = params["payloadJSON"]?.stringValue {
            payloadJSON = text
        } else if let payload = params["payload"], !payload.isNull {
            payloadJSON = payload.jsonString
        } else {
            payloadJSON = nil
        }
        events.append(.nodeEvent(nodeId: nodeId, event: event, payloadJSON: payloadJSON, connectionId: connectionId))
        let payload = payloadJSON.flatMap { try? JSONValue(parsing: $0) }

        // A scripted beacon reply (Gateway+PresenceFault.swift) replaces the rules and records nothing.
        if event == "node.presence.alive", let forced = takeForcedPresenceReply() {
            events.append(.presenceHandled(nodeId: nodeId, trigger: payload?["trigger"]?.stringValue,
                                           handled: forced.handled, reason: forced.reason))
            let reply: JSONValue = profile.nodeEventReply == .structured
                ? ["ok": true, "event": .string(event), "handled": .bool(forced.handled), "reason": .string(forced.reason)]
                : ["ok": true]
            respond(.success(id: request.id, payload: reply), method: request.method, to: connectionId)
            return
        }
        let facts = nodeEventFacts(session: session, nodeId: nodeId, on: connectionId)
        var decision = NodeEventRules.decide(event: event, payload: payload, facts: facts)
        for effect in decision.effects {
            switch effect {
            case .persistLastSeen(let deviceId, let reason):
                // The store answers whether the record is still there; this store cannot fail.
                let stored: Bool? = pairingStore.recordLastSeen(deviceId: deviceId, atMs: nowMs, reason: reason) ? true : nil
                decision = NodeEventRules.afterPersist(stored, facts: facts, event: event)
                apply(decision.effects, nodeId: nodeId)
            default:
                apply([effect], nodeId: nodeId)
            }
        }
        if event == "node.presence.alive", let handled = decision.handledFlag, let reason = decision.reason {
            events.append(.presenceHandled(nodeId: nodeId, trigger: payload?["trigger"]?.stringValue, handled: handled, reason: reason))
        }
        respond(.success(id: request.id, payload: decision.reply), method: request.method, to: connectionId)
    }

    /// What the `node.event` rules read about the sending session.
    func nodeEventFacts(session: Session, nodeId: String, on connectionId: String) -> NodeEventFacts {
        let current = nodes.nodes[nodeId]
        var facts = NodeEventFacts(
            replyStyle: profile.nodeEventReply, deviceId: session.deviceId,
            sessionPairingGeneration: session.pairingGeneration,
            currentPairingGeneration: session.deviceId.flatMap(pairingGeneration(deviceId:)),
            isCurrentConnection: current?.connectionId == connectionId,
            accessibilityGranted: current?.connectionId == connectionId && current?.permissions["accessibility"] == true,
            lastPresencePersistMs: nil, hasActivity: nodeActivity[nodeId] != nil, nowMs: nowMs)
        facts.lastPresencePersistMs = facts.presenceThrottleKey.flatMap { presencePersistStamps[$0] }
        return facts
    }

    /// Applies effects other than a persist (which ``handleNodeEvent(_:session:nodeId:on:)`` runs).
    func apply(_ effects: [NodeEventEffect], nodeId: String) {
        for effect in effects {
            switch effect {
            case .persistLastSeen: break
            case .stampPresenceThrottle(let key, let atMs): presencePersistStamps[key] = atMs
            case .recordActivity(let idleSeconds, let saturated):
                nodeActivity[nodeId] = NodeActivity(idleSeconds: idleSeconds, saturated: saturated, reportedAtMs: nowMs)
            case .clearActivity: nodeActivity.removeValue(forKey: nodeId)
            case .registerPush(let payload): handlePushRegistration(payload: payload, nodeId: nodeId)
            }
        }
    }

    /// A device's node pairing generation: it changes when the paired record is created anew
    /// (removed and paired again, or a new key). `nil` when the device holds no node pairing.
    /// Upstream keys the beacon throttle and the connection's currency by such a generation
    /// (src/gateway/server-node-events.ts, index id 57483807821, `pairingGeneration.key`); a
    /// re-pair within the same millisecond of the Gateway clock is not told apart here.
    func pairingGeneration(deviceId: String) -> String? {
        guard let record = pairingStore.pairedDevice(deviceId), record.hasRole(.node) else { return nil }
        return "\(record.createdAtMs):\(record.publicKey)"
    }

    /// `push.apns.register` (gateway-protocol.md §7.7): relay registrations count only when
    /// they name this Gateway's identity.
    func handlePushRegistration(payload: JSONValue?, nodeId: String) {
        let transport = payload?["transport"]?.stringValue ?? "direct"
        let gatewayDeviceId = payload?["gatewayDeviceId"]?.stringValue
        let accepted: Bool
        if transport == "relay" {
            accepted = gatewayDeviceId == identity.deviceId
        } else {
            accepted = payload?["token"]?.stringValue?.isEmpty == false
        }
        if accepted, let payload { pushRegistrations[nodeId] = payload }
        events.append(.pushRegistered(nodeId: nodeId, transport: transport, accepted: accepted, gatewayDeviceId: gatewayDeviceId))
    }

    // MARK: - Sending invokes

    /// Sends `node.invoke.request` to the node's current socket.
    /// - Returns: the invoke id, or `nil` when the node is not connected.
    func startInvoke(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int, idempotencyKey: String?) -> String? {
        guard let node = nodes.nodes[nodeId] else { return nil }
        let id = random.uuidString()
        let deadline: Int64? = timeoutMs > 0 ? nowMs + Int64(timeoutMs) : nil
        nodes.begin(PendingInvoke(id: id, nodeId: nodeId, connectionId: node.connectionId, command: command,
                                  idempotencyKey: idempotencyKey, deadlineMs: deadline))
        let request = NodeInvokeRequest(id: id, nodeId: nodeId, command: command,
                                        paramsJSON: params.map(\.jsonString), timeoutMs: timeoutMs, idempotencyKey: idempotencyKey)
        sendTargeted(event: "node.invoke.request", payload: (try? JSONValue(encoding: request)) ?? .null, to: node.connectionId)
        events.append(.invokeSent(id: id, nodeId: nodeId, command: command, connectionId: node.connectionId))
        return id
    }

    /// Gives up waiting for an invoke (the caller's real-time deadline passed).
    func abandonInvoke(_ id: String) {
        _ = nodes.cancelInvoke(id: id)
        invokeWaiters.removeValue(forKey: id)?.resume(returning: .timedOut)
    }

    /// Answers an operator's `node.invoke` once the node did (gateway-protocol.md §7.11).
    func answerOperatorInvoke(_ caller: (connectionId: String, requestId: String), outcome: InvokeOutcome) {
        switch outcome {
        case .result(let result) where result.ok:
            var payload: [String: JSONValue] = ["ok": true, "nodeId": .string(result.nodeId)]
            if let text = result.payloadJSON {
                payload["payloadJSON"] = .string(text)
                payload["payload"] = (try? JSONValue(parsing: text)) ?? .null
            } else {
                payload["payload"] = result.payload ?? .null
                payload["payloadJSON"] = result.payload.map { .string($0.jsonString) } ?? .null
            }
            respond(.success(id: caller.requestId, payload: .object(payload)), method: "node.invoke", to: caller.connectionId)
        case .result(let result):
            fail(caller.requestId, method: "node.invoke",
                 ErrorShape(code: result.error?.code ?? "UNAVAILABLE", message: result.error?.message ?? "node invoke failed"),
                 to: caller.connectionId)
        case .timedOut:
            fail(caller.requestId, method: "node.invoke",
                 ErrorShape(code: "UNAVAILABLE", message: "node invoke timed out", retryable: true), to: caller.connectionId)
        case .nodeDisconnected:
            fail(caller.requestId, method: "node.invoke",
                 ErrorShape(code: "UNAVAILABLE", message: "node disconnected", retryable: true), to: caller.connectionId)
        }
    }
}
