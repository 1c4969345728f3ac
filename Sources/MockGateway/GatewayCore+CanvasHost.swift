import GatewayProtocol
import WebSocketTransport

// MARK: - The canvas host on the HTTP port (glue; the rules are in Node/CanvasHost.swift)

extension GatewayCore {
    /// Mints a canvas capability for a session and records it as the session's current one.
    func issueCanvasCapability(connectionId: String, nodeId: String?) -> String {
        let capability = mintCanvasCapability()
        nodeState.canvasCapabilities.issue(capability, connectionId: connectionId, nodeId: nodeId, nowMs: nowMs)
        return capability
    }

    /// `node.pluginSurface.refresh {surface}` (upstream src/gateway/server-methods/nodes.ts@009f87da)
    /// and its operator name `plugin.surface.refresh`, one handler as upstream's
    /// `handlePluginSurfaceRefresh`; the session's own surfaces decide, whatever its role:
    /// `surface` is required (a non-empty string after trimming, else `INVALID_REQUEST "surface
    /// required"`); a surface the session got no URL for at `hello-ok` (any but `canvas`, or
    /// `canvas` for a node on the legacy node protocol) is `UNAVAILABLE "<surface> plugin surface
    /// unavailable"`; an `observedUrl` whose capability a later refresh already replaced (the
    /// current one still valid) gets the current URL without `expiresAtMs`; otherwise a fresh
    /// capability and `{surface, pluginSurfaceUrls, expiresAtMs}`.
    func pluginSurfaceRefresh(_ call: MethodCall) {
        let surface = call.params?["surface"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !surface.isEmpty else {
            return fail(call, ErrorShape(code: ErrorCode.invalidRequest.rawValue, message: "surface required"))
        }
        guard surface == CanvasSurface.canvasSurfaceName, call.session.pluginSurfaces.contains(surface) else {
            return fail(call, ErrorShape(code: ErrorCode.unavailable.rawValue, message: "\(surface) plugin surface unavailable"))
        }
        // `observedUrl` (newer upstream, sent by the Control UI's canvas lease): when another
        // request already rotated the capability the caller observed and the current one is still
        // valid, answer the current URL instead of rotating again (upstream's conflict and
        // authorization checks: pluginNodeCapabilityScopedHostUrlsConflict,
        // hasAuthorizedClientPluginNodeCapabilityUrl in plugin-node-capability.ts@128ac6d1).
        if let observed = call.params?["observedUrl"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines),
           let observedCapability = CanvasSurface.capability(inScopedURL: observed),
           let current = nodeState.canvasCapabilities.entries[call.connectionId],
           current.capability != observedCapability, current.expiresAtMs > nowMs {
            return reply(call, canvasSurface.currentSurfacePayload(capability: current.capability))
        }
        let capability = issueCanvasCapability(connectionId: call.connectionId, nodeId: call.nodeId)
        reply(call, canvasSurface.pluginSurfaceRefreshPayload(capability: capability, nowMs: nowMs))
    }

    /// Answers a request under the capability prefix, `/__openclaw__/canvas/` or
    /// `/__openclaw__/a2ui/`, and records it as a ``GatewayEvent/canvasRequest(_:)``.
    func canvasHTTP(_ request: HTTPRequest) -> HTTPResponse {
        let (response, authorizedBy, nodeId) = canvasDecision(request)
        events.append(.canvasRequest(CanvasRequestInfo(path: request.path, status: response.status, authorizedBy: authorizedBy,
                                                        nodeId: nodeId)))
        return response
    }

    private func canvasDecision(_ request: HTTPRequest) -> (HTTPResponse, String?, String?) {
        let parsed = CanvasHost.parse(path: request.path)
        if case .malformed = parsed { return (CanvasHost.unauthorized, nil, nil) }
        // A Bearer shared secret goes first and charges the shared-secret rate limit.
        var bearerOK = false
        if let authorization = request.headers["Authorization"], authorization.lowercased().hasPrefix("bearer ") {
            let token = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
            let address = request.remoteAddress
            let check = authRateLimiter.check(address, scope: .sharedSecret, nowMs: nowMs)
            guard check.allowed else { return (CanvasHost.rateLimited(retryAfterMs: check.retryAfterMs), nil, nil) }
            switch sharedAuth {
            case .token(let secret), .password(let secret):
                if !secret.isEmpty, token == secret {
                    bearerOK = true
                    authRateLimiter.reset(address, scope: .sharedSecret)
                } else {
                    authRateLimiter.recordFailure(address, scope: .sharedSecret, nowMs: nowMs)
                }
            case .none:
                break
            }
        }
        let innerPath: String
        var nodeId: String?
        var authorizedBy: String? = bearerOK ? "bearer" : nil
        switch parsed {
        case .malformed:
            return (CanvasHost.unauthorized, nil, nil)
        case .unscoped(let path):
            innerPath = path
        case .scoped(let capability, let path):
            innerPath = path
            if !bearerOK {
                guard nodeState.canvasCapabilities.authorize(capability, nowMs: nowMs) else { return (CanvasHost.unauthorized, nil, nil) }
                authorizedBy = "capability"
                nodeId = nodeState.canvasCapabilities.entries.values.first { $0.capability == capability }?.nodeId
            }
        }
        guard authorizedBy != nil else { return (CanvasHost.unauthorized, nil, nil) }
        let response = CanvasHost.serve(innerPath: innerPath, method: request.method, a2uiAvailable: nodeState.a2uiAvailable)
            ?? .text(404, "Not Found")
        return (response, authorizedBy, nodeId)
    }

    /// Expires canvas capabilities now (of `nodeId`, or all), with a line in the event log.
    func expireCanvasCapabilities(nodeId: String?) -> Int {
        let count = nodeState.canvasCapabilities.expire(nodeId: nodeId, nowMs: nowMs)
        noteFault("canvas capabilities expired\(nodeId.map { " for \($0)" } ?? ""): \(count)")
        return count
    }
}
