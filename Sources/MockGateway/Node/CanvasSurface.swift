import Foundation
import GatewayProtocol

/// The canvas (plugin surface) URLs a Gateway advertises to its nodes, built from the address it
/// is bound to, never from the configured one: with `--port 0` the URLs carry the port the
/// system picked.
///
/// Upstream facts this follows:
/// * a canvas capability is 18 random bytes in base64url, valid for 10 minutes, and scopes a URL
///   as `<origin>/__openclaw__/cap/<capability>` (src/gateway/canvas-capability.ts@2dff30df
///   `CANVAS_CAPABILITY_PATH_PREFIX`, `CANVAS_CAPABILITY_TTL_MS`, `buildCanvasScopedHostUrl`);
/// * protocol-3-era Gateways answer `node.canvas.capability.refresh` with
///   `{canvasCapability, canvasCapabilityExpiresAtMs, canvasHostUrl}`, the URL scoped by the
///   fresh capability (src/gateway/server-methods/nodes.ts; its test
///   nodes.canvas-capability-refresh.test.ts@6ad8c25a);
/// * current Gateways advertise capability-scoped `hello-ok.pluginSurfaceUrls` and none at all
///   to a node on the legacy node protocol, one whose offered range stops below the current
///   version (`if (pluginSurfaceBaseUrl && !usesLegacyNodeProtocol)`, the connect attach code in
///   src/gateway/server/ws-connection). They send no
///   `canvasHostUrl` (src/gateway/server/ws-connection/connect-hello.ts@6eec7e0e).
///
/// * operators get `pluginSurfaceUrls` too and renew them with `plugin.surface.refresh`, which
///   upstream serves from the same handler as `node.pluginSurface.refresh` (docs/fidelity.md);
/// * `node.pluginSurface.refresh {surface}` answers `{surface, pluginSurfaceUrls: {<surface>: url},
///   expiresAtMs}` for a surface the session was given a URL for (src/gateway/server-methods/
///   nodes.ts@009f87da `respondRefreshedPluginSurface`, src/gateway/plugin-node-capability.ts
///   @128ac6d1 `refreshClientPluginNodeCapability`);
/// * the URLs are `https` when the Gateway serves TLS (`pluginSurfaceScheme`, src/gateway/server.impl.ts).
///
/// Unconfirmed, chosen to be tolerant: the protocol-3-era `hello-ok.canvasHostUrl` is sent
/// already scoped by a capability minted at connect (a client that uses it as a base still
/// works).
public struct CanvasSurface: Sendable, Hashable {
    /// The path prefix of capability-scoped URLs.
    public static let capabilityPathPrefix = "/__openclaw__/cap"
    /// How long a minted capability is valid (10 minutes).
    public static let capabilityTTLMs: Int64 = 10 * 60_000
    /// The surface name of the canvas in `pluginSurfaceUrls`.
    public static let canvasSurfaceName = "canvas"

    /// The host the Gateway is bound to.
    public var host: String
    /// The port the Gateway is bound to (never 0 once it listens).
    public var port: Int
    /// Whether the Gateway serves TLS: its surface URLs are then `https` (upstream passes
    /// `pluginSurfaceScheme: gatewayTls.enabled ? "https" : "http"` to the connection handler).
    public var tls: Bool

    /// Creates the surface of a Gateway bound to `host`:`port`, serving TLS when `tls` is set.
    public init(host: String, port: Int, tls: Bool = false) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// `http://host:port` (`https` with TLS), with an IPv6 literal in brackets.
    public var origin: String {
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(tls ? "https" : "http")://\(shown):\(port)"
    }

    /// `origin` scoped by `capability`: `http://host:port/__openclaw__/cap/<capability>`
    /// (the capability percent-encoded as a path segment).
    public func scopedURL(capability: String) -> String {
        // A minted capability is base64url, which a path segment keeps as it is: only another
        // text goes through Foundation's encoder (a CharacterSet built per connect).
        let plain = capability.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D || byte == 0x5F
        }
        let segment = plain ? capability
            : capability.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? capability
        return origin + Self.capabilityPathPrefix + "/" + segment
    }

    /// The capability a scoped URL carries: the path segment after `/__openclaw__/cap/`,
    /// percent-decoded and trimmed; `nil` when there is none (upstream
    /// `pluginNodeCapabilityFromScopedHostUrl`, src/gateway/plugin-node-capability.ts@128ac6d1).
    public static func capability(inScopedURL url: String) -> String? {
        guard let components = URLComponents(string: url) else { return nil }
        let path = components.percentEncodedPath
        guard let marker = path.range(of: capabilityPathPrefix + "/") else { return nil }
        let segment = path[marker.upperBound...].prefix { $0 != "/" }
        let capability = String(segment).removingPercentEncoding?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return capability.isEmpty ? nil : capability
    }

    /// The answer to a refresh that observed an older URL than the session's current, still
    /// valid one: `{surface, pluginSurfaceUrls: {canvas: <current URL>}}`, no `expiresAtMs`
    /// (upstream `respondRefreshedPluginSurface`, newest stored reading).
    public func currentSurfacePayload(capability: String) -> JSONValue {
        ["surface": .string(Self.canvasSurfaceName),
         "pluginSurfaceUrls": [Self.canvasSurfaceName: .string(scopedURL(capability: capability))]]
    }

    /// A fresh capability from 18 random bytes, base64url (24 characters).
    public static func mintCapability(_ bytes: [UInt8]) -> String {
        Base64URL.encode(bytes)
    }

    /// Whether a node connect offering `maxProtocol` is on the legacy node protocol of a Gateway
    /// speaking `currentProtocol`: it cannot speak the current version.
    public static func usesLegacyNodeProtocol(maxProtocol: Int, currentProtocol: Int) -> Bool {
        maxProtocol < currentProtocol
    }

    /// The canvas members of `hello-ok` for a session.
    ///
    /// A current Gateway scopes the canvas URL for every role (upstream's connect code mints
    /// `pluginSurfaceUrls` for operators as for nodes, cutting only a node's to its caps, and
    /// `sendGatewayHello` sends the member whatever the role, connect-hello.ts@6eec7e0e); a
    /// protocol-3-era Gateway's `canvasHostUrl` is a node's only (whether those Gateways gave
    /// operators one was not confirmed).
    /// - Parameters:
    ///   - isNode: whether the session has the node role.
    ///   - newerNodeMethods: whether the profile is a current Gateway (`pluginSurfaceUrls`) or a
    ///     protocol-3-era one (`canvasHostUrl`).
    ///   - legacyNodeProtocol: see ``usesLegacyNodeProtocol(maxProtocol:currentProtocol:)`` (only
    ///     a node can be on the legacy node protocol).
    ///   - capability: mints the capability for this session; called only when a member is sent.
    /// - Returns: `pluginSurfaceUrls` and `canvasHostUrl`, each `nil` when not sent.
    public func helloFields(isNode: Bool, newerNodeMethods: Bool, legacyNodeProtocol: Bool,
                            capability: () -> String) -> (pluginSurfaceUrls: [String: String]?, canvasHostUrl: String?)
    {
        if newerNodeMethods {
            guard !(isNode && legacyNodeProtocol) else { return (nil, nil) }
            return ([Self.canvasSurfaceName: scopedURL(capability: capability())], nil)
        }
        return isNode ? (nil, scopedURL(capability: capability())) : (nil, nil)
    }

    /// The payload of a protocol-3-era `node.canvas.capability.refresh`.
    public func capabilityRefreshPayload(capability: String, nowMs: Int64) -> JSONValue {
        [
            "canvasCapability": .string(capability),
            "canvasCapabilityExpiresAtMs": .int(nowMs + Self.capabilityTTLMs),
            "canvasHostUrl": .string(scopedURL(capability: capability)),
        ]
    }

    /// The payload of a current `node.pluginSurface.refresh {surface: "canvas"}`:
    /// `{surface, pluginSurfaceUrls: {canvas: <scoped URL>}, expiresAtMs}` (upstream
    /// `respondRefreshedPluginSurface`, src/gateway/server-methods/nodes.ts@009f87da).
    public func pluginSurfaceRefreshPayload(capability: String, nowMs: Int64) -> JSONValue {
        ["surface": .string(Self.canvasSurfaceName),
         "pluginSurfaceUrls": [Self.canvasSurfaceName: .string(scopedURL(capability: capability))],
         "expiresAtMs": .int(nowMs + Self.capabilityTTLMs)]
    }
}
