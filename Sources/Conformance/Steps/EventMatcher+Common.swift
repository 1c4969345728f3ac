import GatewayProtocol
import MockGateway

/// A connect the Gateway refused (``EventMatcher/refusal(_:)``).
public struct ConnectRefusal: Sendable, Hashable {
    /// The refused connection.
    public var connectionId: String
    /// The error sent.
    public var error: ErrorShape
    /// The close code the connection got.
    public var closeCode: Int
}

/// A `node.invoke.result` as the Gateway took it (``EventMatcher/invokeResult(id:)``).
public struct InvokeResultSeen: Sendable, Hashable {
    /// The invoke id.
    public var id: String
    /// `ok` as sent.
    public var ok: Bool
    /// Whether it answered a pending invoke (false: an unknown or late id, ignored).
    public var matched: Bool
    /// The connection it came on.
    public var connectionId: String
}

/// A `node.event` as the Gateway took it (``EventMatcher/nodeEvent(_:node:)``).
public struct NodeEventSeen: Sendable, Hashable {
    /// The sending node.
    public var nodeId: String
    /// `payloadJSON` (or `payload` as JSON text), when sent.
    public var payloadJSON: String?
    /// The connection it came on.
    public var connectionId: String

    /// `payloadJSON` parsed, `nil` when absent or not JSON.
    public var payload: JSONValue? { payloadJSON.flatMap { try? JSONValue(parsing: $0) } }
}

/// A request the client sent (``EventMatcher/request(_:on:)``).
public struct ClientRequest: Sendable, Hashable {
    /// The connection it came on.
    public var connectionId: String
    /// The request.
    public var request: RequestFrame

    /// `params` (`null` when absent).
    public var params: JSONValue { request.params ?? .null }
}

// The matchers most scenarios share. Each describes itself in the words a failure message uses.

extension EventMatcher where Output == SessionInfo {
    /// A session of the client (`hello-ok` sent) of `role`, of `device` only when given.
    public static func session(_ role: GatewayRole = .node, device: String? = nil) -> EventMatcher {
        EventMatcher("the client's \(role) session\(device.map { " of \($0)" } ?? "") (hello-ok)") { event in
            guard case .sessionOpened(let info) = event, info.role == role else { return nil }
            if let device, info.deviceId != device { return nil }
            return info
        }
    }
}

extension EventMatcher where Output == ConnectAttempt {
    /// A `connect` from the client, of `role` and `device` only when given.
    public static func connect(_ role: GatewayRole? = nil, device: String? = nil) -> EventMatcher {
        EventMatcher("a \(role.map { "\($0) " } ?? "")connect\(device.map { " of \($0)" } ?? "") from the client") { event in
            guard let attempt = ConnectAttempt(event) else { return nil }
            if let role, attempt.role != role.rawValue { return nil }
            if let device, attempt.deviceId != device { return nil }
            return attempt
        }
    }
}

extension EventMatcher where Output == ConnectRefusal {
    /// A connect refused with `details.code` `detailCode`.
    public static func refusal(_ detailCode: ConnectErrorDetailCode) -> EventMatcher {
        EventMatcher("a connect refused with \(detailCode)") { event in
            guard case .handshakeRejected(let id, let error, let closeCode) = event, error.detailCode == detailCode.rawValue else {
                return nil
            }
            return ConnectRefusal(connectionId: id, error: error, closeCode: closeCode)
        }
    }
}

extension EventMatcher where Output == PairingRequestInfo {
    /// A new pairing request (`device.pair.requested`), of `device` only when given.
    public static func pairingRequest(device: String? = nil) -> EventMatcher {
        EventMatcher("a pairing request\(device.map { " of \($0)" } ?? "")") { event in
            guard case .pairingRequested(let request) = event else { return nil }
            return device.map { request.deviceId == $0 } ?? true ? request : nil
        }
    }
}

extension EventMatcher where Output == String {
    /// The supersession of the pending request `requestId` by a new one; the value is the new
    /// request's id.
    public static func superseded(of requestId: String) -> EventMatcher {
        EventMatcher("the supersession of the pairing request \(requestId)") { event in
            if case .pairingSuperseded(let old, let new, _) = event, old.contains(requestId) { new } else { nil }
        }
    }

    /// A `node.invoke.request` sent for `command` (any command when `nil`); the value is the
    /// invoke id.
    public static func invokeSent(_ command: String? = nil) -> EventMatcher {
        EventMatcher("the node.invoke.request\(command.map { " for \($0)" } ?? "")") { event in
            guard case .invokeSent(let id, _, let sent, _) = event, command.map({ $0 == sent }) ?? true else { return nil }
            return id
        }
    }

    /// The close of `connectionId`; the value is the close reason.
    public static func closed(_ connectionId: String) -> EventMatcher {
        EventMatcher("the close of \(connectionId)") { event in
            if case .connectionClosed(connectionId, _, let reason) = event { reason } else { nil }
        }
    }

    /// The end of the node registration on `connectionId` (the socket closed or was replaced);
    /// the value is the node id.
    public static func nodeDisconnected(_ connectionId: String) -> EventMatcher {
        EventMatcher("the node socket \(connectionId) to close") { event in
            if case .nodeDisconnected(let nodeId, connectionId) = event { nodeId } else { nil }
        }
    }
}

extension EventMatcher where Output == GatewayEvent {
    /// The pairing request `requestId` resolved with `decision`.
    public static func pairingResolved(_ requestId: String, _ decision: PairingResolvedDecision) -> EventMatcher {
        .event("device.pair.resolved \(decision) for \(requestId)") { event in
            if case .pairingResolved(requestId, _, decision) = event { true } else { false }
        }
    }
}

extension EventMatcher where Output == InvokeResultSeen {
    /// A `node.invoke.result` for the invoke `id` (any invoke when `nil`).
    public static func invokeResult(id: String? = nil) -> EventMatcher {
        EventMatcher("a node.invoke.result\(id.map { " for #\($0)" } ?? "")") { event in
            guard case .invokeResult(let resultId, _, let ok, let matched, let connectionId) = event,
                  id.map({ $0 == resultId }) ?? true else { return nil }
            return InvokeResultSeen(id: resultId, ok: ok, matched: matched, connectionId: connectionId)
        }
    }
}

extension EventMatcher where Output == NodeEventSeen {
    /// A `node.event` named `name` the Gateway took, from `node` only when given.
    public static func nodeEvent(_ name: NodeEventName, node: String? = nil) -> EventMatcher {
        EventMatcher("node.event \(name)\(node.map { " from \($0)" } ?? "")") { event in
            guard case .nodeEvent(let nodeId, name.rawValue, let payloadJSON, let connectionId) = event,
                  node.map({ $0 == nodeId }) ?? true else { return nil }
            return NodeEventSeen(nodeId: nodeId, payloadJSON: payloadJSON, connectionId: connectionId)
        }
    }
}

extension EventMatcher where Output == ClientRequest {
    /// A request for `method` that arrived (on `connectionId` only, when given).
    public static func request(_ method: GatewayMethod, on connectionId: String? = nil) -> EventMatcher {
        request(method.rawValue, on: connectionId)
    }

    /// A request for `method` (a method name without a ``GatewayMethod`` constant) that arrived
    /// (on `connectionId` only, when given).
    public static func request(_ method: String, on connectionId: String? = nil) -> EventMatcher {
        EventMatcher("\(method)\(connectionId.map { " on \($0)" } ?? "")") { event in
            guard case .frameIn(let id, .request(let request)?, _) = event, request.method == method,
                  connectionId.map({ $0 == id }) ?? true else { return nil }
            return ClientRequest(connectionId: id, request: request)
        }
    }
}

/// A `push.apns.register` as the Gateway took it (``EventMatcher/pushRegistered(_:node:)``).
public struct PushRegistrationSeen: Sendable, Hashable {
    /// The registering node.
    public var nodeId: String
    /// Its transport.
    public var transport: PushTransport
    /// Whether the Gateway kept it.
    public var accepted: Bool
    /// The `gatewayDeviceId` it named (relay registrations).
    public var gatewayDeviceId: String?
}

extension EventMatcher where Output == PushRegistrationSeen {
    /// A push registration with `transport` (any when `nil`), of `node` only when given.
    public static func pushRegistered(_ transport: PushTransport? = nil, node: String? = nil) -> EventMatcher {
        EventMatcher("push.apns.register\(transport.map { " (\($0))" } ?? "")\(node.map { " from \($0)" } ?? "")") { event in
            guard case .pushRegistered(let nodeId, let sent, let accepted, let gatewayDeviceId) = event,
                  transport.map({ $0 == sent }) ?? true, node.map({ $0 == nodeId }) ?? true else { return nil }
            return PushRegistrationSeen(nodeId: nodeId, transport: sent, accepted: accepted, gatewayDeviceId: gatewayDeviceId)
        }
    }
}

/// The Gateway's answer to a `node.presence.alive` beacon (``EventMatcher/presenceAnswered``).
public struct PresenceAnswer: Sendable, Hashable {
    /// `handled` as answered.
    public var handled: Bool
    /// `reason` as answered.
    public var reason: NodeEventReason

    /// `(handled, reason)`, for a destructuring `let`.
    public var fields: (handled: Bool, reason: NodeEventReason) { (handled, reason) }
}

extension EventMatcher where Output == PresenceAnswer {
    /// The Gateway answering a `node.presence.alive` beacon.
    public static var presenceAnswered: EventMatcher {
        EventMatcher("the Gateway's answer to a node.presence.alive beacon") { event in
            if case .presenceHandled(_, _, let handled, let reason) = event { PresenceAnswer(handled: handled, reason: reason) } else { nil }
        }
    }
}

/// A node registration (``EventMatcher/nodeConnected(_:)``).
public struct NodeConnection: Sendable, Hashable {
    /// The node id.
    public var nodeId: String
    /// Its socket.
    public var connectionId: String
}

extension EventMatcher where Output == NodeConnection {
    /// The client's node registering (routing target of invokes), as `nodeId` only when given.
    public static func nodeConnected(_ nodeId: String? = nil) -> EventMatcher {
        EventMatcher("the client's node session\(nodeId.map { " as \($0)" } ?? "")") { event in
            guard case .nodeConnected(let id, let connectionId) = event, nodeId.map({ $0 == id }) ?? true else { return nil }
            return NodeConnection(nodeId: id, connectionId: connectionId)
        }
    }
}

extension EventMatcher where Output == JSONValue {
    /// The `hello-ok` the Gateway sent (on `connectionId` only, when given); the value is its payload.
    public static func helloOK(on connectionId: String? = nil) -> EventMatcher {
        EventMatcher("hello-ok\(connectionId.map { " on \($0)" } ?? "")") { event in
            guard case .frameOut(let id, .response(let response)) = event, response.ok, connectionId.map({ $0 == id }) ?? true,
                  let payload = response.payload, payload["type"]?.stringValue == HelloOK.typeValue else { return nil }
            return payload
        }
    }
}

extension EventMatcher where Output == GatewayEvent {
    /// The approval or question `id` reaching a terminal state (`status`: `expired`, `allowed`,
    /// `answered`, ...), whoever resolved it.
    public static func recordResolved(_ id: String, status: String) -> EventMatcher {
        .event("\(id) resolved as \(status)") { event in
            guard case .operatorRecord(let change) = event else { return false }
            return change.id == id && change.action == .resolved && change.status.rawValue == status
        }
    }
}

extension EventMatcher where Output == SessionInfo {
    /// The session opened on `connectionId` (whatever its role).
    public static func session(on connectionId: String) -> EventMatcher {
        EventMatcher("the session on \(connectionId)") { event in
            if case .sessionOpened(let info) = event, info.connectionId == connectionId { info } else { nil }
        }
    }
}

extension EventMatcher where Output == ClientRequest {
    /// A `node.event` request carrying `event` (the request as sent, before the Gateway judged it).
    public static func nodeEventRequest(_ event: NodeEventName) -> EventMatcher {
        request(.nodeEvent).filter { $0.request.params?["event"]?.stringValue == event.rawValue }.named("node.event \(event)")
    }

    /// A `node.presence.alive` beacon request.
    public static var beaconRequest: EventMatcher { nodeEventRequest(.presenceAlive) }
}

extension EventMatcher where Output == ResponseFrame {
    /// The Gateway's reply to `request`.
    public static func response(to request: ClientRequest) -> EventMatcher {
        let connectionId = request.connectionId
        let id = request.request.id
        return EventMatcher("the reply to \(request.request.method) #\(id)") { event in
            if case .frameOut(connectionId, .response(let response)) = event, response.id == id { response } else { nil }
        }
    }
}

extension EventMatcher where Output == ClientRequest {
    /// The client's `node.invoke.result` request for the invoke `id` (the request as sent, before
    /// the Gateway judged it).
    public static func invokeResultRequest(id: String) -> EventMatcher {
        request(.nodeInvokeResult).filter { $0.request.params?["id"]?.stringValue == id }.named("the node.invoke.result request for #\(id)")
    }
}

/// A connection the Gateway accepted and challenged (``EventMatcher/connectionOpened``).
public struct OpenedConnection: Sendable, Hashable {
    /// The connection id.
    public var connectionId: String
    /// The nonce of its `connect.challenge`.
    public var nonce: String

    /// `(connectionId, nonce)`, for a destructuring `let`.
    public var fields: (connectionId: String, nonce: String) { (connectionId, nonce) }
}

extension EventMatcher where Output == OpenedConnection {
    /// A connection of the client, accepted and challenged.
    public static var connectionOpened: EventMatcher {
        EventMatcher("a connection from the client") { event in
            if case .connectionOpened(let id, _, let nonce) = event { OpenedConnection(connectionId: id, nonce: nonce) } else { nil }
        }
    }
}

extension EventMatcher where Output == GatewayEvent {
    /// A request for `method` answered with success (any method other than `connect` and the
    /// node methods with their own events).
    public static func served(_ method: String) -> EventMatcher {
        .event("\(method) served") { event in
            if case .requestHandled(_, method, true, _) = event { true } else { false }
        }
    }
}

extension EventMatcher where Output == ClientRequest {
    /// Any request the client sent.
    public static var anyRequest: EventMatcher {
        EventMatcher("a request from the client") { event in
            if case .frameIn(let id, .request(let request)?, _) = event { ClientRequest(connectionId: id, request: request) } else { nil }
        }
    }

    /// A resolve request (`approval.resolve`, `exec.approval.resolve`, `plugin.approval.resolve`,
    /// ...) for the approval `id`.
    public static func resolveRequest(id: String) -> EventMatcher {
        anyRequest.filter { $0.request.method.hasSuffix(GatewayMethod.approvalResolve.rawValue) && $0.request.params?["id"]?.stringValue == id }
            .named("a resolve request for \(id)")
    }
}

extension EventMatcher where Output == EventFrame {
    /// An event frame `name` the Gateway sent (on `connectionId` only, when given).
    public static func sentEvent(_ name: GatewayEventName, on connectionId: String? = nil) -> EventMatcher {
        EventMatcher("the \(name)\(connectionId.map { " on \($0)" } ?? "")") { event in
            guard case .frameOut(let id, .event(let frame)) = event, frame.event == name.rawValue,
                  connectionId.map({ $0 == id }) ?? true else { return nil }
            return frame
        }
    }
}
