import GatewayProtocol

/// Nodes' push registrations and every push handed to a transport: the push surface's state.
struct PushState: Sendable {
    /// What moves the push state.
    enum Input: Sendable {
        /// A node sent `push.apns.register` (docs/protocol.md §9.1); `gatewayDeviceId` is this
        /// Gateway's own identity, which a relay registration must name.
        case register(nodeId: String, payload: JSONValue?, gatewayDeviceId: String)
        /// A push was handed to the node's transport (as the transport answered it).
        case delivered(PushDelivery)
    }

    /// The stored registration of each node, by node id.
    var registrations: [String: JSONValue] = [:]
    /// Every push handed to a transport, oldest first.
    var deliveries: [PushDelivery] = []

    /// Applies an input; returns its event-log entry. A relay registration counts only when it
    /// names this Gateway's identity, a direct one only with a token.
    mutating func handle(_ input: Input) -> [GatewayEffect] {
        switch input {
        case .register(let nodeId, let payload, let gatewayIdentity):
            let transport = payload?["transport"]?.stringValue ?? "direct"
            let named = payload?["gatewayDeviceId"]?.stringValue
            let accepted = transport == "relay" ? named == gatewayIdentity : payload?["token"]?.stringValue?.isEmpty == false
            if accepted, let payload { registrations[nodeId] = payload }
            return [.log(.pushRegistered(nodeId: nodeId, transport: PushTransport(rawValue: transport), accepted: accepted,
                                         gatewayDeviceId: named))]
        case .delivered(let delivery):
            deliveries.append(delivery)
            return [.log(.pushSent(nodeId: delivery.nodeId, transport: PushTransport(rawValue: delivery.transport),
                                   pushType: delivery.pushType, accepted: delivery.accepted))]
        }
    }
}
