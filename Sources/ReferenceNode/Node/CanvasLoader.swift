import GatewayProtocol
import WebSocketTransport

/// How the reference client shows its canvas (`canvas.present`): it loads the page of the
/// capability-scoped URL the Gateway advertised (`hello-ok.pluginSurfaceUrls.canvas`, or the
/// protocol-3-era `canvasHostUrl`) through its own connector, so over sockets, TLS or the
/// in-memory network alike. A 401 means the capability expired: it asks for a fresh URL
/// (`node.pluginSurface.refresh {surface:"canvas"}`, or `node.canvas.capability.refresh` on a
/// Gateway that lists only that) and loads once more, instead of failing the page
/// (docs/protocol.md §6.10).
enum CanvasLoader {
    /// The page under a scoped canvas URL.
    static let pagePath = "/__openclaw__/canvas/"

    /// What loading the page came to.
    enum Outcome: Sendable, Hashable {
        /// The page loaded (status 200) from `url`; `refreshed` says whether a refresh was needed.
        case loaded(url: String, refreshed: Bool)
        /// It did not: the status of the last attempt (or `nil` when no request got an answer).
        case failed(status: Int?, reason: String)
    }

    /// The canvas URL a `hello-ok` advertises, if any.
    static func advertisedURL(in hello: JSONValue?) -> String? {
        hello?["pluginSurfaceUrls"]?["canvas"]?.stringValue ?? hello?["canvasHostUrl"]?.stringValue
    }

    /// The fresh canvas URL in a refresh response (either generation's shape).
    static func refreshedURL(in payload: JSONValue?) -> String? {
        payload?["pluginSurfaceUrls"]?["canvas"]?.stringValue ?? payload?["canvasHostUrl"]?.stringValue
    }

    /// GET of the page under `url`; the status, or `nil` when the request failed.
    static func fetch(_ url: String, connector: any WebSocketConnector) async -> Int? {
        let target = url.hasSuffix("/") ? String(url.dropLast()) : url
        let response = try? await connector.send(HTTPRequest(method: "GET", target: "/"), to: target + pagePath,
                                                 configuration: WebSocketConfiguration())
        return response?.status
    }
}
