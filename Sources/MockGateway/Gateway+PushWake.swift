import GatewayProtocol

/// What a silent wake push did (``Gateway/wakeNode(nodeId:reason:force:)``).
///
/// The paths are upstream's names for how a wake attempt ended (`NodeWakeAttempt.path` of
/// `maybeWakeNodeWithApns`, `src/gateway/server-methods/nodes.ts`).
public struct NodeWakeAttempt: Sendable, Hashable {
    /// How the attempt ended.
    public enum Path: String, Sendable, Hashable {
        /// The push transport accepted the background push.
        case sent
        /// The push transport refused it (the fake relay's checks, or
        /// ``Gateway/refuseNextPush(status:reason:)``).
        case sendError = "send-error"
        /// The node has no stored push registration, so nothing was sent.
        case noRegistration = "no-registration"
        /// A wake went to the node less than 15 s ago, so nothing was sent (`node.invoke` still
        /// waits for the node).
        case throttled
    }

    /// The node that was to be woken.
    public var nodeId: String
    /// How the attempt ended.
    public var path: Path
    /// The push handed to the transport (also in ``Gateway/pushDeliveries()``); `nil` when
    /// nothing was sent.
    public var delivery: PushDelivery?
    /// The wake reason the push names (`openclaw.reason`).
    public var reason: String

    /// Creates an attempt.
    public init(nodeId: String, path: Path, delivery: PushDelivery?, reason: String) {
        self.nodeId = nodeId
        self.path = path
        self.delivery = delivery
        self.reason = reason
    }

    /// Whether the push would reach the device: the transport accepted it.
    public var isDelivered: Bool { path == .sent }

    /// Upstream's `available`: a push was handed to the transport (whatever it answered) or a
    /// recent one stands (throttled); `node.invoke` waits for the node only then.
    public var isAvailable: Bool { path != .noRegistration }

    /// The transport's status (`apnsStatus`), when a push was sent.
    public var apnsStatus: Int? { delivery?.status }

    /// The transport's refusal reason (`apnsReason`), when it refused the push.
    public var apnsReason: String? { delivery?.reason }

    /// `details.wake` of a `QUEUED_UNTIL_FOREGROUND` answer: `{path, available, throttled,
    /// apnsStatus?, apnsReason?}` (`node.invoke`, `src/gateway/server-methods/nodes.invoke.ts@296f520b`).
    public var detailsJSON: JSONValue {
        var object: [String: JSONValue] = [
            "path": .string(path.rawValue), "available": .bool(isAvailable), "throttled": .bool(path == .throttled),
        ]
        if let apnsStatus { object["apnsStatus"] = .int(Int64(apnsStatus)) }
        if let apnsReason { object["apnsReason"] = .string(apnsReason) }
        return .object(object)
    }

    /// One line for people: what was sent how, and what the transport answered.
    public var summary: String {
        if path == .throttled { return "no silent push to \(nodeId): one was sent less than 15 s ago" }
        guard let delivery else {
            return "no silent push to \(nodeId): it has no push registration (it never sent push.apns.register, "
                + "or the Gateway ignored it: a relay registration must name this Gateway's identity)"
        }
        let sent = "silent push (background, priority \(delivery.priority ?? 5)) to \(nodeId) via \(delivery.transport)"
        return delivery.accepted
            ? "\(sent): accepted"
            : "\(sent): refused with \(delivery.status)\(delivery.reason.map { " \($0)" } ?? "")"
    }
}

/// How the push transport answers a send it refuses (``Gateway/refuseNextPush(status:reason:)``).
struct PushRefusal: Sendable, Hashable {
    var status: Int
    var reason: String
}

// MARK: - Silent wake pushes

extension Gateway {
    /// Sends a silent wake push to `nodeId` through its stored push registration, as upstream
    /// wakes a suspended iOS node (`sendApnsBackgroundWake`, `src/infra/push-apns.ts@21f1a13f`):
    /// push type `background`, priority 5, the payload
    /// `{aps:{"content-available":1}, openclaw:{kind:"node.wake", nodeId, ts, reason}}`
    /// (`src/infra/push-apns-payloads.ts@09a333a9`), through the fake relay (a request signed
    /// with the Gateway's identity, checked as the hosted relay checks it) or the APNs stand-in.
    ///
    /// The send is recorded (``pushDeliveries()``) and announced (``GatewayEvent/pushSent(nodeId:transport:pushType:accepted:)``).
    /// Nothing leaves the process: no relay or APNs server is contacted, so no device is woken by
    /// this call; a conformance run hands an accepted wake to the client under test
    /// (`ScenarioRun.wakeThroughPush`). Like every upstream wake (`maybeWakeNodeWithApns`, which
    /// `node.invoke` and `node.pending.enqueue` both go through), a wake within 15 s of Gateway
    /// time of the last wake attempt to the same node, this call's or `node.invoke`'s, is
    /// ``NodeWakeAttempt/Path/throttled`` and sends nothing, unless `force` is set (upstream's
    /// forced second wake).
    /// - Parameters:
    ///   - nodeId: the node (its device id).
    ///   - reason: the wake reason the payload names; upstream's default is `node.invoke`.
    ///   - force: skip the 15 s throttle.
    /// - Returns: the attempt; ``NodeWakeAttempt/Path/noRegistration`` when the node has no
    ///   stored registration (nothing is sent, a transcript note says so).
    @discardableResult
    public func wakeNode(nodeId: String, reason: String = GatewayMethod.nodeInvoke.rawValue, force: Bool = false) async -> NodeWakeAttempt {
        recordOperatorAction("wake \(nodeId) (\(reason))\(force ? " forced" : "")")
        return await core.wakeNode(nodeId: nodeId, reason: reason, force: force)
    }

    /// The nodes that have a stored push registration, sorted.
    public func pushRegisteredNodeIds() async -> [String] {
        let registrations = await core.nodeState.push.registrations
        return registrations.keys.sorted()
    }

    /// Fault: the push transport refuses the next send (a `push.test` or a wake) with `status`
    /// and `reason`, as APNs answers a token that is no longer valid (410 `Unregistered`,
    /// 400 `BadDeviceToken`). The refusal is recorded like any send (`accepted:false`). Arming
    /// again replaces a refusal not used yet.
    public func refuseNextPush(status: Int = 410, reason: String = "Unregistered") async {
        await core.armPushRefusal(PushRefusal(status: status, reason: reason))
    }

    /// Fault: pairs the device anew in place, as a removal and a fresh approval would, but keeps
    /// its open sessions open: the device's node pairing gets a new generation, so every
    /// session admitted before is stale, and each `node.event` on it is answered `handled:false`,
    /// `reason:"pairing_changed"` (upstream's `isConnectionCurrent` gate,
    /// `src/gateway/server-node-events.ts`). On a profile without
    /// structured `node.event` replies nothing changes on the wire.
    /// - Throws: `GatewayError` when the device is not paired as a node.
    public func renewPairing(deviceId: String) async throws(GatewayError) {
        try await core.renewPairing(deviceId: deviceId)
    }
}

extension GatewayCore {
    func wakeNode(nodeId: String, reason: String, force: Bool) -> NodeWakeAttempt {
        // The same per-node throttle as the wakes of `node.invoke` (NodeState+Wake.swift).
        switch nodeState.beginWake(nodeId: nodeId, force: force, nowMs: nowMs) {
        case .skipped(let path):
            let why = path == .throttled ? "throttled (one was attempted less than 15 s ago)" : "no push registration"
            transcript.record(TranscriptEntry(monotonicMs: transcript.elapsedMs, gatewayMs: nowMs, connectionId: "-", kind: .note,
                                              text: "no silent push to \(nodeId): \(why)"))
            return NodeWakeAttempt(nodeId: nodeId, path: path, delivery: nil, reason: reason)
        case .send(let registration):
            let delivery = sendPush(nodeId: nodeId, registration: registration, pushType: "background",
                                    payload: PushRelay.backgroundPayload(nodeId: nodeId, reason: reason, nowMs: nowMs))
            return NodeWakeAttempt(nodeId: nodeId, path: delivery.accepted ? .sent : .sendError, delivery: delivery, reason: reason)
        }
    }

    func armPushRefusal(_ refusal: PushRefusal) {
        arm(.pushRefusal(refusal))
    }

    func renewPairing(deviceId: String) throws(GatewayError) {
        guard var record = pairingStore.devices[deviceId], record.hasRole(.node) else {
            throw GatewayError(ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "device \(deviceId) is not paired as a node"))
        }
        // The record's creation time is part of the node pairing generation
        // (`NodePairingGeneration`): a later creation time is a new generation, also within one
        // millisecond of Gateway time.
        record.createdAtMs = max(nowMs, record.createdAtMs + 1)
        pairingStore.devices[deviceId] = record
        noteFault("device \(deviceId) paired anew in place: its open sessions now have a stale pairing generation")
    }
}
