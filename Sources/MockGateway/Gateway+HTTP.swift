import WebSocketTransport

// MARK: - HTTP routes on the Gateway's port

extension Gateway {
    /// Registers the Gateway's HTTP routes on ``http`` (called once by ``start(_:)``, before the
    /// first connection is accepted). Each feature adds its routes here, one line each.
    func registerHTTPRoutes() {
    }
}
