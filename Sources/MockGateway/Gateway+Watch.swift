import GatewayProtocol

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
