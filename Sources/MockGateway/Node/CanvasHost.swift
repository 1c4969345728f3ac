import Foundation
import GatewayProtocol
import WebSocketTransport

/// The canvas capabilities a Gateway has handed out, one per session (the connection it was
/// minted for), as a pure value.
///
/// Upstream facts this follows (`src/gateway/plugin-node-capability.ts`
/// @4033e34c3acbd9a6cbb989d6ccefb9a84e03e54b): a session holds one capability per surface, a
/// refresh replaces it (`setClientPluginNodeCapability`), a capability authorizes only while its
/// session is connected and before its expiry, and each successful use moves the expiry to a
/// full TTL from now (`hasAuthorizedPluginNodeCapability`).
public struct CanvasCapabilityLedger: Sendable, Hashable {
    /// One session's capability.
    public struct Entry: Sendable, Hashable {
        /// The capability (base64url).
        public var capability: String
        /// When it stops authorizing, unless used before.
        public var expiresAtMs: Int64
        /// The node of the session, if it is a node session.
        public var nodeId: String?
    }

    /// The entries by connection id.
    public private(set) var entries: [String: Entry] = [:]
    /// How long a capability lives after it is minted or used.
    public var ttlMs: Int64

    /// Creates an empty ledger with upstream's 10-minute TTL.
    public init(ttlMs: Int64 = CanvasSurface.capabilityTTLMs) { self.ttlMs = ttlMs }

    /// Records `capability` as the session's current one (replacing its previous one).
    /// - Returns: its expiry.
    @discardableResult
    public mutating func issue(_ capability: String, connectionId: String, nodeId: String?, nowMs: Int64) -> Int64 {
        let expiresAtMs = nowMs + ttlMs
        entries[connectionId] = Entry(capability: capability, expiresAtMs: expiresAtMs, nodeId: nodeId)
        return expiresAtMs
    }

    /// Whether `capability` is the live, unexpired capability of a connected session; a
    /// successful check moves its expiry to a full TTL from now.
    public mutating func authorize(_ capability: String, nowMs: Int64) -> Bool {
        guard let (connectionId, entry) = entries.first(where: { $0.value.capability == capability }),
              entry.expiresAtMs > nowMs else { return false }
        entries[connectionId]?.expiresAtMs = nowMs + ttlMs
        return true
    }

    /// Forgets the capability of a session that ended.
    public mutating func drop(connectionId: String) { entries[connectionId] = nil }

    /// Expires capabilities now: those of `nodeId`, or every one.
    /// - Returns: how many were expired.
    @discardableResult
    public mutating func expire(nodeId: String?, nowMs: Int64) -> Int {
        var count = 0
        for (connectionId, entry) in entries where nodeId == nil || entry.nodeId == nodeId {
            entries[connectionId]?.expiresAtMs = min(entry.expiresAtMs, nowMs)
            count += 1
        }
        return count
    }
}

/// What the canvas host answered one request: the Gateway's event for it.
public struct CanvasRequestInfo: Sendable, Hashable {
    /// The request path (the capability left in).
    public var path: String
    /// The status answered.
    public var status: Int
    /// How it was authorized: `capability`, `bearer`, or `nil` when it was refused.
    public var authorizedBy: String?
    /// The node whose capability authorized it, if any.
    public var nodeId: String?
}

/// The canvas host on the Gateway's HTTP port, as pure functions: path parsing, the built-in
/// page and A2UI assets, and the refusals.
///
/// Upstream facts (cited in docs/fidelity.md):
/// * the capability prefix is `/__openclaw__/cap/<capability>/…`; a path under the prefix
///   without a capability segment followed by `/` is malformed (`normalizePluginNodeCapabilityScopedUrl`,
///   `src/gateway/plugin-node-capability.ts` @4033e34c);
/// * a malformed path, a missing, unknown or expired capability and the capability of a session
///   that ended get 401; a Bearer shared secret is tried first and charges the shared-secret rate
///   limit, whose lockout answers 429 with `Retry-After` in seconds and the JSON body
///   `{"error":{"message":"Too many failed authentication attempts. Please try again later.","type":"rate_limited"}}`
///   (`src/gateway/server/plugin-node-capability-auth.ts` @266a6408; `server-http.ts` @00ced49d
///   `writeUpgradeAuthFailure`; the plugin-node-capability auth test);
/// * the canvas host serves `/__openclaw__/canvas/` (GET and HEAD only, else 405; `index.html`
///   for a directory; `Cache-Control: no-store`; 404 `not found`), and the A2UI assets under
///   `/__openclaw__/a2ui/` (503 `A2UI assets not found` when the Gateway has none)
///   (`src/canvas-host/server.ts` @013c24e7, `src/canvas-host/a2ui.ts` @99bb33a3).
public enum CanvasHost {
    /// The capability-scoped prefix (upstream `PLUGIN_NODE_CAPABILITY_PATH_PREFIX`).
    public static let capabilityPrefix = CanvasSurface.capabilityPathPrefix
    /// The canvas page's path (upstream `CANVAS_HOST_PATH`).
    public static let canvasPath = "/__openclaw__/canvas"
    /// The A2UI assets' path (upstream `A2UI_PATH`).
    public static let a2uiPath = "/__openclaw__/a2ui"

    /// A request path, split.
    public enum ParsedPath: Sendable, Hashable {
        /// `/__openclaw__/cap/<capability>/<inner path>`.
        case scoped(capability: String, innerPath: String)
        /// Under the capability prefix but without a capability and a path after it.
        case malformed
        /// Not under the capability prefix: served only with a Bearer shared secret.
        case unscoped(String)
    }

    /// Splits a request path (not yet percent-decoded).
    public static func parse(path: String) -> ParsedPath {
        let prefix = capabilityPrefix + "/"
        guard path.hasPrefix(prefix) else { return path == capabilityPrefix ? .malformed : .unscoped(path) }
        let rest = path.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/"), slash > rest.startIndex else { return .malformed }
        let encoded = String(rest[..<slash])
        guard let decoded = encoded.removingPercentEncoding?.trimmingCharacters(in: .whitespaces), !decoded.isEmpty else {
            return .malformed
        }
        return .scoped(capability: decoded, innerPath: String(rest[slash...]))
    }

    /// 401, as upstream's HTTP auth failure.
    public static var unauthorized: HTTPResponse {
        .content(401, type: "application/json; charset=utf-8",
                 Array(#"{"error":{"message":"Unauthorized","type":"unauthorized"}}"#.utf8))
    }

    /// 429 with `Retry-After` (whole seconds, rounded up).
    public static func rateLimited(retryAfterMs: Int64) -> HTTPResponse {
        let body = #"{"error":{"message":"Too many failed authentication attempts. Please try again later.","type":"rate_limited"}}"#
        var headers = WebSocketHTTPHeaders()
        if retryAfterMs > 0 { headers.add(name: "Retry-After", value: String((retryAfterMs + 999) / 1000)) }
        return .content(429, type: "application/json; charset=utf-8", Array(body.utf8), headers: headers)
    }

    /// The built-in canvas page.
    public static let indexHTML = """
        <!doctype html>
        <html>
        <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>OpenClaw Canvas</title>
        </head>
        <body>
        <h1 id="title">OpenClaw Canvas</h1>
        <p id="status">served by the fake Gateway</p>
        <script src="page.js"></script>
        </body>
        </html>

        """

    /// The page's script: it proves that a browser ran the page and loaded a second asset with
    /// the same capability (relative URL).
    public static let canvasScript = """
        document.getElementById("status").textContent = "canvas script ran";
        document.body.setAttribute("data-canvas-ready", "1");

        """

    /// The A2UI host page.
    public static let a2uiIndexHTML = """
        <!doctype html>
        <html>
        <head><meta charset="utf-8" /><title>A2UI</title></head>
        <body><div id="a2ui-root"></div><script src="a2ui.bundle.js"></script></body>
        </html>

        """

    /// A small A2UI bundle stand-in: it renders nothing but marks the root as ready.
    public static let a2uiBundle = """
        (function () {
          var root = document.getElementById("a2ui-root");
          if (root) { root.setAttribute("data-a2ui-ready", "1"); }
        })();

        """

    /// Serves an authorized inner path (`/__openclaw__/canvas/…` or `/__openclaw__/a2ui/…`).
    /// - Parameters:
    ///   - innerPath: the path without the capability prefix.
    ///   - method: the request method.
    ///   - a2uiAvailable: whether the A2UI assets exist (503 otherwise).
    /// - Returns: the response, or `nil` when the path is not the canvas host's.
    public static func serve(innerPath: String, method: String, a2uiAvailable: Bool) -> HTTPResponse? {
        let base: String
        if innerPath == canvasPath || innerPath.hasPrefix(canvasPath + "/") {
            base = canvasPath
        } else if innerPath == a2uiPath || innerPath.hasPrefix(a2uiPath + "/") {
            base = a2uiPath
        } else {
            return nil
        }
        guard method == "GET" || method == "HEAD" else { return .text(405, "Method Not Allowed") }
        if base == a2uiPath, !a2uiAvailable { return .text(503, "A2UI assets not found") }
        var file = String(innerPath.dropFirst(base.count))
        if file.isEmpty || file.hasSuffix("/") { file += "index.html" }
        if file.hasPrefix("/") { file.removeFirst() }
        let assets: [String: (type: String, text: String)] = base == canvasPath
            ? ["index.html": ("text/html; charset=utf-8", indexHTML), "page.js": ("text/javascript; charset=utf-8", canvasScript)]
            : ["index.html": ("text/html; charset=utf-8", a2uiIndexHTML),
               "a2ui.bundle.js": ("text/javascript; charset=utf-8", a2uiBundle)]
        guard let asset = assets[file] else { return .text(404, "not found") }
        return .content(200, type: asset.type, Array(asset.text.utf8), headers: ["Cache-Control": "no-store"])
    }
}
