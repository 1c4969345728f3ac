import GatewayProtocol

/// What the apps' own surfaces keep: the agents, workspace, voice wake and unserved-method
/// reports (made from the configuration on first use, `GatewayCore+Apps.swift`) and the Apple
/// Watch direct mode (`GatewayCore+Watch.swift`).
struct AppsState: Sendable {
    /// The apps' surfaces, `nil` until first used.
    var surfaces: AppSurfaces?
    /// The Apple Watch direct mode.
    var watch: WatchGlueState
}
