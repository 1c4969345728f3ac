import MockGateway

/// The run's note naming the methods the client called that the fake Gateway does not serve, so
/// that a gap of the fake is visible in the report instead of a silent `unknown method` in the
/// client.
public enum UnservedMethodNote {
    /// `client called methods the fake Gateway does not serve (answered "unknown method"): a, b`,
    /// each method once in the order first called; `nil` when there was none.
    public static func note(events: [GatewayEvent]) -> String? {
        var methods: [String] = []
        for case .methodUnserved(let method, _) in events where !methods.contains(method) {
            methods.append(method)
        }
        guard !methods.isEmpty else { return nil }
        return "client called methods the fake Gateway does not serve (answered \"unknown method\"): "
            + methods.joined(separator: ", ")
    }
}
