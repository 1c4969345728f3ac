import Locking

/// What answers the plain HTTP requests of a server (everything that is not a WebSocket upgrade).
public protocol HTTPResponder: Sendable {
    /// Answers one request. It may wait as long as it likes (a long poll); the connection's next
    /// request waits for it. Cancellation means the client went away or the server stopped.
    /// - Parameter request: the complete request.
    /// - Returns: the response.
    func respond(to request: HTTPRequest) async -> HTTPResponse
}

/// A route handler: a request in, a response out. It may wait (a long poll) and should return
/// soon once its task is cancelled.
public typealias HTTPHandler = @Sendable (HTTPRequest) async -> HTTPResponse

/// The routes of an HTTP server: a route is a method and a path prefix with an async handler.
///
/// ```swift
/// let router = HTTPRouter()
/// router.route("GET", prefix: "/healthz") { _ in .text(200, "ok") }
/// router.route("POST", prefix: "/api/nodes/watch/") { request in await watch.handle(request) }
/// let server = try await WebSocketServer.start(http: router)
/// ```
///
/// - A prefix matches a path equal to it, or starting with it followed by `/` (or the prefix
///   ends with `/`): `/a/b` matches `/a/b` and `/a/b/c`, not `/a/bc`.
/// - The longest matching prefix wins; among routes with the same prefix, the one for the
///   request's method (a route with method `nil` takes every method). A path that matches only
///   routes of other methods gets 405 with `Allow`; a path no route matches gets 404.
/// - After ``shutDown()`` every request gets ``HTTPResponse/serviceUnavailable`` (503), and the
///   handlers still running (long polls) are cancelled and their requests answered 503 at once.
public final class HTTPRouter: HTTPResponder {
    /// One registered route.
    public struct Route: Sendable {
        /// The method it serves, or `nil` for every method.
        public var method: String?
        /// The path prefix.
        public var prefix: String
        /// The handler.
        public var handler: HTTPHandler
    }

    private struct State: Sendable {
        var routes: [Route] = []
        var isShutDown = false
    }

    // The routes and the shutdown flag.
    private let state = Locked(State())
    // Opened by `shutDown()`; every running handler races it.
    private let shutdownGate = WakeSignal()

    /// Creates a router without routes (every request gets 404).
    public init() {}

    /// Adds a route. A later route with the same method and prefix replaces the earlier one.
    /// - Parameters:
    ///   - method: the method (`GET`, `POST`, ...), or `nil` for every method.
    ///   - prefix: the path prefix, starting with `/`.
    ///   - handler: answers the requests.
    public func route(_ method: String?, prefix: String, _ handler: @escaping HTTPHandler) {
        state.withLock { state in
            state.routes.removeAll { $0.method == method && $0.prefix == prefix }
            state.routes.append(Route(method: method, prefix: prefix, handler: handler))
        }
    }

    /// Removes the routes with this prefix (of every method).
    public func removeRoutes(prefix: String) {
        state.withLock { $0.routes.removeAll { $0.prefix == prefix } }
    }

    /// The registered routes, in registration order.
    public var routes: [Route] { state.withLock { $0.routes } }

    /// Answers 503 from now on, to new requests and to those whose handlers are still running.
    public func shutDown() {
        state.withLock { $0.isShutDown = true }
        shutdownGate.open()
    }

    /// Whether ``shutDown()`` was called.
    public var isShutDown: Bool { state.withLock { $0.isShutDown } }

    /// What a method and path resolve to.
    public enum Match: Sendable {
        /// The handler of the matching route.
        case handler(HTTPHandler)
        /// No route serves it: 404, or 405 with the allowed methods.
        case refused(HTTPResponse)
    }

    /// The route for a method and path: the handler, or the status (404, or 405 with the
    /// allowed methods) when none serves it.
    public func match(method: String, path: String) -> Match {
        let routes = state.withLock { $0.routes }
        let matching = routes.filter { Self.prefix($0.prefix, matches: path) }
        guard let longest = matching.map(\.prefix.count).max() else {
            return .refused(.text(404, "no route for \(path)"))
        }
        let candidates = matching.filter { $0.prefix.count == longest }
        let wanted = method == "HEAD" ? ["HEAD", "GET"] : [method]
        for name in wanted {
            if let route = candidates.first(where: { $0.method == name }) { return .handler(route.handler) }
        }
        if let route = candidates.first(where: { $0.method == nil }) { return .handler(route.handler) }
        var allowed = candidates.compactMap(\.method)
        if allowed.contains("GET"), !allowed.contains("HEAD") { allowed.append("HEAD") }
        return .refused(.text(405, "\(method) is not allowed here", headers: ["Allow": allowed.joined(separator: ", ")]))
    }

    /// Whether a route prefix matches a path (see the type's rules).
    static func prefix(_ prefix: String, matches path: String) -> Bool {
        guard path.hasPrefix(prefix) else { return false }
        if path.count == prefix.count || prefix.hasSuffix("/") { return true }
        return path.dropFirst(prefix.count).first == "/"
    }

    /// Answers a request with its route's handler (404/405 without one, 503 after
    /// ``shutDown()``).
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        guard !isShutDown else { return .serviceUnavailable }
        let handler: HTTPHandler
        switch match(method: request.method, path: request.path) {
        case .refused(let response): return response
        case .handler(let found): handler = found
        }
        let gate = shutdownGate
        return await withTaskGroup(of: HTTPResponse?.self) { group in
            group.addTask { await handler(request) }
            group.addTask {
                await gate.wait()
                return Task.isCancelled ? nil : .serviceUnavailable
            }
            var answer: HTTPResponse = .serviceUnavailable
            if let first = await group.next(), let response = first { answer = response }
            group.cancelAll()
            return answer
        }
    }
}
