import MockGateway

/// The Gateway profiles a scenario applies to. The runner runs every scenario once per profile
/// in this selection (intersected with `--profile`, when given).
public struct ProfileSelection: Sendable, Hashable {
    /// The profiles, in run order.
    public var profiles: [GatewayProfile]

    /// Selects exactly `profiles`.
    public init(_ profiles: [GatewayProfile]) {
        self.profiles = profiles
    }

    /// Every built-in profile (`current` and `legacy`).
    public static var all: ProfileSelection { ProfileSelection(GatewayProfile.builtIn) }
    /// Only the `current` profile.
    public static var current: ProfileSelection { ProfileSelection([.current]) }
    /// Only the `legacy` profile.
    public static var legacy: ProfileSelection { ProfileSelection([.legacy]) }

    /// Custom profiles, for example a strict protocol-3-only Gateway.
    public static func custom(_ profiles: GatewayProfile...) -> ProfileSelection {
        ProfileSelection(profiles)
    }

    /// The profiles' names.
    public var names: [String] { profiles.map(\.name) }
}
