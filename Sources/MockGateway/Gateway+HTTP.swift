import WebSocketTransport

// MARK: - HTTP routes on the Gateway's port

extension Gateway {
    /// Registers the Gateway's HTTP routes on ``http`` (called once by ``start(_:)``, before the
    /// first connection is accepted). Each feature adds its routes here, one line each.
    func registerHTTPRoutes() {
        registerCanvasHostRoutes()
        registerWatchRoutes()
    }
}

// MARK: - The canvas host

extension Gateway {
    /// The canvas host: capability-scoped (`/__openclaw__/cap/<capability>/…`) and, with a
    /// Bearer shared secret, unscoped (`/__openclaw__/canvas/…`, `/__openclaw__/a2ui/…`).
    func registerCanvasHostRoutes() {
        let core = core
        for prefix in [CanvasHost.capabilityPrefix, CanvasHost.canvasPath, CanvasHost.a2uiPath] {
            http.route(nil, prefix: prefix) { request in await core.canvasHTTP(request) }
        }
    }

    /// Expires canvas capabilities now, as if their 10 minutes had passed: those of `nodeId`, or
    /// every one. The next request with one gets 401 until the node refreshes it
    /// (`node.pluginSurface.refresh`, or `node.canvas.capability.refresh` on protocol-3-era
    /// profiles).
    /// - Returns: how many capabilities were expired.
    @discardableResult
    public func expireCanvasCapabilities(nodeId: String? = nil) async -> Int {
        await core.expireCanvasCapabilities(nodeId: nodeId)
    }

    /// The current canvas capability of every session, by connection id.
    public func canvasCapabilities() async -> [String: CanvasCapabilityLedger.Entry] {
        await core.nodeState.canvasCapabilities.entries
    }

    /// Whether the canvas host has A2UI assets: without them `…/__openclaw__/a2ui/` answers 503
    /// `A2UI assets not found`, as a Gateway whose A2UI bundle was not built.
    public func setA2UIAvailable(_ available: Bool) async {
        await core.setA2UIAvailable(available)
    }
}

extension GatewayCore {
    func setA2UIAvailable(_ available: Bool) {
        nodeState.a2uiAvailable = available
        noteFault(available ? "A2UI assets available" : "A2UI assets unavailable: …/__openclaw__/a2ui/ answers 503")
    }
}
