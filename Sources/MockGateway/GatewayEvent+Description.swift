import GatewayProtocol

extension GatewayEvent: CustomStringConvertible {
    /// One line for people (failure messages, `serve` logs): what happened, on which connection,
    /// without Swift's own debug formatting.
    public var description: String {
        switch self {
        case .connectionOpened(let id, let address, _): "connection \(id) opened from \(address)"
        case .connectionClosed(let id, let code, let reason): "connection \(id) closed \(code)\(reason.isEmpty ? "" : " \(reason)")"
        case .frameIn(let id, let frame, let binary):
            "\(frame.map(Self.summary) ?? "a message that is not a frame") in on \(id)\(binary ? " (binary)" : "")"
        case .frameOut(let id, let frame): "\(Self.summary(frame)) out on \(id)"
        case .handshakeRejected(let id, let error, let code):
            "connect on \(id) refused with \(error.code)\(error.detailCode.map { " (\($0))" } ?? ""), close \(code)"
        case .sessionOpened(let info):
            "\(info.role) session on \(info.connectionId)\(info.deviceId.map { " of \($0)" } ?? "") (\(info.authMethod))"
        case .pairingRequested(let request): "pairing request \(request.requestId) of \(request.deviceId) (\(request.role))"
        case .pairingRefreshed(let request): "pairing request \(request.requestId) of \(request.deviceId) refreshed"
        case .pairingSuperseded(let old, let new, let device):
            "pairing requests \(old.joined(separator: ", ")) of \(device) superseded by \(new)"
        case .pairingResolved(let request, let device, let decision): "pairing request \(request) of \(device) \(decision)"
        case .pairingExpired(let request, let device): "pairing request \(request) of \(device) expired"
        case .nodeConnected(let node, let id): "node \(node) connected on \(id)"
        case .nodeDisconnected(let node, let id): "node \(node) disconnected from \(id)"
        case .invokeSent(let invoke, let node, let command, let id): "node.invoke.request \(command) #\(invoke) to \(node) on \(id)"
        case .invokeResult(let invoke, _, let ok, let matched, let id):
            "node.invoke.result #\(invoke) ok:\(ok)\(matched ? "" : " (unmatched)") on \(id)"
        case .nodeEvent(let node, let event, _, let id): "node.event \(event) from \(node) on \(id)"
        case .presenceHandled(_, let trigger, let handled, let reason):
            "node.presence.alive\(trigger.map { " (\($0))" } ?? "") answered handled:\(handled) \(reason)"
        case .pushRegistered(_, let transport, let accepted, let gateway):
            "push.apns.register \(transport) \(accepted ? "accepted" : "ignored")\(gateway.map { " for Gateway \($0)" } ?? "")"
        case .pushSent(_, let transport, let pushType, let accepted):
            "\(pushType) push sent over \(transport)\(accepted ? "" : " (refused by the transport)")"
        case .pendingActionQueued(_, let actionId, let command): "\(command) queued as pending action \(actionId)"
        case .requestHandled(let id, let method, let ok, let code): "\(method) on \(id) answered \(ok ? "ok" : "error \(code ?? "")")"
        case .deviceToken(let device, let role, let action): "\(role) token of \(device) \(action)"
        case .faultInjected(let text): "fault: \(text)"
        case .stateSaveFailed(let message): "state not saved: \(message)"
        case .shutdown: "shutdown (1012 to every connection)"
        case .restarted: "accepting connections again"
        case .operatorRecord(let change):
            "\(change.kind) \(change.id) \(change.action.rawValue)\(change.method.map { " via \($0)" } ?? "") → \(change.status)"
        case .chatMessageStored(let message):
            "\(message.role.rawValue) message #\(message.seq) stored in \(message.sessionKey)"
        case .canvasRequest(let info):
            "canvas host answered \(info.status) for \(info.path)\(info.authorizedBy.map { " (by \($0))" } ?? "")"
        case .watchRequest(let method, let path): "Watch direct mode: \(method) \(path)"
        case .watchAnswered(let info): "Watch direct mode answered \(info.summary)"
        case .methodUnserved(let method, let id): "\(method) called on \(id) is not served by this Gateway"
        }
    }

    /// `req connect #id`, `res #id ok`, `event tick`.
    static func summary(_ frame: Frame) -> String {
        switch frame {
        case .request(let request): "req \(request.method) #\(request.id)"
        case .response(let response):
            "res #\(response.id) \(response.ok ? "ok" : "error \(response.error?.code ?? "")\(response.error?.detailCode.map { " (\($0))" } ?? "")")"
        case .event(let event): "event \(event.event)"
        case .cancel(let cancel): "cancel #\(cancel.id)"
        }
    }
}
