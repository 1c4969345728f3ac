import Foundation
import GatewayProtocol

extension GatewayCore {
    /// `node.pending.pull`: the foreground actions queued for this node (PendingActionQueue) that
    /// the node command policy still lets through to it (``NodeState/Input/pendingPull(nodeId:_:nowMs:)``).
    func nodePendingPull(_ call: MethodCall) {
        handleNodes(.pendingPull(nodeId: call.nodeId, call.replyAddress, nowMs: nowMs))
    }

    /// `node.pending.ack` `{ids?}`.
    func nodePendingAck(_ call: MethodCall) {
        let raw = call.params?["ids"]
        guard raw == nil || raw?.isNull == true || raw?.arrayValue?.allSatisfy({ $0.stringValue != nil }) == true else {
            return invalid(call, "ids must be an array of strings")
        }
        let ids = raw?.arrayValue?.compactMap(\.stringValue) ?? []
        handleNodes(.pendingAck(nodeId: call.nodeId, ids: ids, call.replyAddress, nowMs: nowMs))
    }

    /// The canvas URLs, from the bound address (the core's configuration carries the bound
    /// port), `https` when the Gateway serves TLS.
    var canvasSurface: CanvasSurface {
        CanvasSurface(host: configuration.host, port: configuration.port, tls: configuration.tls != nil)
    }

    /// A fresh canvas capability (18 bytes of the capability stream, base64url).
    func mintCanvasCapability() -> String {
        CanvasSurface.mintCapability(nodeState.capabilityRandom.bytes(18))
    }

    /// The canvas members of a `hello-ok`, for nodes and operators alike (see
    /// ``CanvasSurface/helloFields(isNode:newerNodeMethods:legacyNodeProtocol:capability:)``);
    /// a capability is minted only when a member is sent.
    func helloCanvasFields(role: GatewayRole, offeredMaxProtocol: Int, connectionId: String, nodeId: String?)
        -> (pluginSurfaceUrls: [String: String]?, canvasHostUrl: String?) {
        let isNode = role == .node
        return canvasSurface.helloFields(
            isNode: isNode, newerNodeMethods: profile.hasNewerNodeMethods,
            legacyNodeProtocol: isNode && CanvasSurface.usesLegacyNodeProtocol(maxProtocol: offeredMaxProtocol,
                                                                                 currentProtocol: profile.protocolVersion),
            capability: { issueCanvasCapability(connectionId: connectionId, nodeId: nodeId) })
    }

    // MARK: - node.invoke.result

    func handleInvokeResult(_ call: MethodCall) {
        guard var params = call.params?.objectValue,
              let id = params["id"]?.stringValue, !id.isEmpty,
              params["nodeId"]?.stringValue != nil,
              params["ok"]?.boolValue != nil
        else {
            return invalid(call, "id, nodeId and ok are required")
        }
        // The real normaliser: null payloadJSON/error removed, a non-string payloadJSON moved to
        // payload (docs/protocol.md §6.4).
        if params["payloadJSON"] == .null { params.removeValue(forKey: "payloadJSON") }
        if params["error"] == .null { params.removeValue(forKey: "error") }
        if let raw = params["payloadJSON"], raw.stringValue == nil {
            params["payload"] = raw
            params.removeValue(forKey: "payloadJSON")
        }
        guard let result = try? JSONValue.object(params).decode(as: NodeInvokeResult.self) else {
            return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "invalid \(call.method) params"))
        }
        handleNodes(.result(result, callerNodeId: call.nodeId, call.replyAddress, nowMs: nowMs))
    }

    /// Queues a foreground-only command that an iOS node refused in the background
    /// (``NodeState/queueForegroundAction(_:result:nowMs:ids:)``) and logs a new one.
    func queueForegroundAction(_ invoke: PendingInvoke, result: NodeInvokeResult) -> PendingNodeAction? {
        let (action, effects) = nodeState.queueForegroundAction(invoke, result: result, nowMs: nowMs, ids: &random)
        perform(effects)
        return action
    }

    /// `node.event` (``NodeState/Input/nodeEvent(_:nowMs:)``): the params are read here, the
    /// node machine decides and answers.
    func handleNodeEvent(_ call: MethodCall) {
        guard let request = NodeEventRequest(params: call.request.params) else {
            return invalid(call, "event must be a non-empty string")
        }
        let session = call.session
        handleNodes(.nodeEvent(NodeEventCall(
            nodeId: call.nodeId, request: request, reply: call.replyAddress, replyStyle: profile.nodeEventReply,
            deviceId: session.deviceId, sessionPairingGeneration: session.pairingGeneration,
            currentPairingGeneration: session.deviceId.flatMap(pairingGeneration(deviceId:)), gatewayDeviceId: identity.deviceId),
            nowMs: nowMs))
    }

    /// A device's node pairing generation (``NodePairingGeneration``: public key, record creation,
    /// node token, node-surface approval), `nil` when the device holds no node pairing. The beacon
    /// throttle and the connection's currency are keyed by it, so a re-paired device (a new
    /// approval, a new token or a new key) starts a new window.
    func pairingGeneration(deviceId: String) -> String? {
        pairingStore.nodePairingGeneration(deviceId: deviceId)
    }

    // MARK: - Push

    /// Hands a push to the node's registered transport: the fake relay (a request signed with
    /// the Gateway's identity and checked as the hosted relay checks it) or the APNs stand-in.
    /// Every send is recorded (`Gateway.pushDeliveries()`) and announced (`pushSent`).
    func sendPush(nodeId: String, registration: JSONValue, pushType: String, payload: JSONValue) -> PushDelivery {
        let priority: Int64 = pushType == "background" ? 5 : 10
        var delivery: PushDelivery
        if registration["transport"]?.stringValue == "relay" {
            let body: JSONValue = [
                "relayHandle": registration["relayHandle"] ?? .null, "pushType": .string(pushType),
                "priority": .int(priority), "payload": payload,
            ]
            let bodyJSON = body.jsonString
            let signedAtMs = nowMs
            let signature = identity.sign(PushRelay.signaturePayload(gatewayDeviceId: identity.deviceId, signedAtMs: signedAtMs,
                                                                     bodyJSON: bodyJSON))
            // The relay's own checks: a grant, and the signature of the Gateway the registration names.
            let verified = DeviceIdentity.verify(signature: signature, payload: PushRelay.signaturePayload(
                gatewayDeviceId: identity.deviceId, signedAtMs: signedAtMs, bodyJSON: bodyJSON), publicKey: identity.publicKeyBase64URL)
            let granted = registration["sendGrant"]?.stringValue?.isEmpty == false
            delivery = PushDelivery(nodeId: nodeId, transport: "relay", pushType: pushType, bodyJSON: bodyJSON,
                                    gatewayDeviceId: identity.deviceId, signedAtMs: signedAtMs, signature: signature,
                                    sendGrant: registration["sendGrant"]?.stringValue,
                                    accepted: verified && granted && registration["gatewayDeviceId"]?.stringValue == identity.deviceId)
        } else {
            let body: JSONValue = [
                "token": registration["token"] ?? .null, "topic": registration["topic"] ?? .null,
                "pushType": .string(pushType), "priority": .int(priority), "payload": payload,
            ]
            delivery = PushDelivery(nodeId: nodeId, transport: "direct", pushType: pushType, bodyJSON: body.jsonString,
                                    gatewayDeviceId: nil, signedAtMs: nil, signature: nil, sendGrant: nil, accepted: true)
        }
        if !delivery.accepted {
            delivery.status = 403
            delivery.reason = "InvalidGatewaySignature"
        }
        // A scripted refusal (Gateway.refuseNextPush) answers as APNs would.
        delivery = faultLayer.rewrite(delivery)
        perform(nodeState.push.handle(.delivered(delivery)))
        return delivery
    }

    // MARK: - Sending invokes

    /// Sends `node.invoke.request` to the node's current socket.
    /// - Returns: the invoke id, or `nil` when the node is not connected.
    func startInvoke(nodeId: String, command: String, params: JSONValue?, timeoutMs: Int, idempotencyKey: String?) -> String? {
        let dispatch = InvokeDispatch(nodeId: nodeId, command: command, params: params, timeoutMs: timeoutMs,
                                      idempotencyKey: idempotencyKey)
        guard let (id, effects) = nodeState.dispatch(dispatch, nowMs: nowMs, ids: &random) else { return nil }
        perform(effects)
        return id
    }

    /// Gives up waiting for an invoke (the caller's real-time deadline passed).
    func abandonInvoke(_ id: String) {
        _ = nodeState.registry.cancelInvoke(id: id)
        nodeState.invokeWaiters.removeValue(forKey: id)?.resume(returning: .timedOut)
    }
}

/// The operator request waiting for an invoke's outcome.
struct OperatorInvokeCaller: Sendable, Hashable {
    /// The connection id of a caller that is the scripting API, not a socket.
    static let scriptedConnectionId = "-scripted-operator"
    let connectionId: String
    let requestId: String
    let nodeId: String
    let command: String
    let params: JSONValue?
    let idempotencyKey: String
    /// The node command policy in force when the Gateway admitted the call: a policy changed
    /// while the node was being woken may take a command away but never grants one (upstream
    /// checks the admission configuration and the current one).
    var admittedPolicy: NodeCommandPolicy?
}
