import MockGateway

/// Seeds: one `--seed` for the whole run, from which every run's own seed is derived by its key,
/// so a run's random choices do not depend on sharding, `--jobs` or which other runs were selected.
public enum Seed {
    /// A fresh random seed (for when `--seed` is not given).
    public static func random() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        // Keep it below 2^53 so it survives JSON readers that parse numbers as doubles.
        return generator.next() & 0x1F_FFFF_FFFF_FFFF
    }

    /// The seed of the run called `key` (`PAIR-006@current`) under `base`.
    public static func derive(_ base: UInt64, _ key: String) -> UInt64 {
        // FNV-1a over the key, mixed with the base through one SplitMix64 step.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        var random = SeededRandom(seed: base ^ hash)
        return random.next() & 0x1F_FFFF_FFFF_FFFF
    }
}
