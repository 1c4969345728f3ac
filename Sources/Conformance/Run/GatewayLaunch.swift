import Foundation
import MockGateway

/// How the runner asks for a Gateway: one per run, plus any a scenario starts itself.
///
/// The runner fills in the configuration (profile, port, seed, a per-Gateway identity, the shared
/// token, a system clock so that real clients' signatures are fresh) and then applies the
/// scenario's `Options.configureGateway`.
public struct GatewayLaunch: Sendable {
    /// What to start the Gateway with.
    public var configuration: GatewayConfiguration
    /// `gateway`, `gateway2`, ...: names the transcript file.
    public var label: String

    /// Creates a launch description.
    public init(configuration: GatewayConfiguration, label: String = "gateway") {
        self.configuration = configuration
        self.label = label
    }

    /// The configuration the runner uses for a run's Gateway before the scenario adjusts it.
    /// - Parameters:
    ///   - profile: the profile.
    ///   - seed: the seed of every random choice; the Gateway's identity is derived from it too,
    ///     so two Gateways of a run have different identities.
    ///   - port: the port (0: any free one).
    ///   - sharedToken: the shared token clients must present, if any.
    public static func standardConfiguration(profile: GatewayProfile, seed: UInt64, port: Int = 0,
                                             sharedToken: String? = nil) -> GatewayConfiguration {
        var random = SeededRandom(seed: seed)
        return GatewayConfiguration(
            port: port, profile: profile, auth: sharedToken.map(GatewayAuthMode.token) ?? .none,
            clock: .system(), seed: seed, identitySeed: random.bytes(32))
    }
}

/// Starts a Gateway for a run. Tests of the engine may wrap `GatewayFactories.standard` to
/// observe or adjust what is started.
public typealias GatewayFactory = @Sendable (GatewayLaunch) async throws -> Gateway

/// Gateway factories.
public enum GatewayFactories {
    /// Starts `MockGateway.Gateway` with the launch's configuration.
    public static let standard: GatewayFactory = { launch in
        try await Gateway.start(launch.configuration)
    }
}
