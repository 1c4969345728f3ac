import GatewayProtocol
import WebSocketTransport

extension Gateway {
    /// Answers one request of the Apple Watch direct mode (docs/protocol.md §13), whatever
    /// transport carried it: `nil` when `request.path` is not under `/api/nodes/watch/`. A poll
    /// returns when the Gateway answers it (an event, 20 s on the Gateway clock, a newer poll, a
    /// closed session); cancelling the calling task means the client went away, which ends the
    /// session as upstream does.
    public func respondToWatch(_ request: WatchHTTPRequest) async -> WatchHTTPResponse? {
        await core.watchRespond(to: request)
    }
}

extension Gateway {
    /// The Watch routes (`/api/nodes/watch/…`) on ``http``: each request goes through
    /// ``respondToWatch(_:)``; a poll's handler waits for its answer, and a client that goes
    /// away cancels it.
    func registerWatchRoutes() {
        let core = core
        http.route(nil, prefix: WatchDirectRules.basePath + "/") { request in
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.lowercased()] = field.value }
            let watch = WatchHTTPRequest(method: request.method, path: request.path, headers: headers, body: request.body,
                                         clientAddress: request.remoteAddress)
            guard let answer = await core.watchRespond(to: watch) else { return .text(404, "no route for \(request.path)") }
            return HTTPResponse(status: answer.status, headers: WebSocketHTTPHeaders(answer.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
                                body: answer.body)
        }
    }
}
