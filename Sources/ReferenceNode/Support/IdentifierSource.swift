import Foundation
import Simulation
import Locking

/// Request ids and key seeds of the reference client: from the system's random source, or, for
/// reproducible runs, from a seeded generator so that the same seed produces the same frames
/// (on Apple platforms except `device.signature`, which CryptoKit randomizes).
final class IdentifierSource: Sendable {
    // `nil` for system randomness; the seeded generator otherwise.
    private let random: Locked<SeededRandom?>

    init(seed: UInt64?) {
        random = Locked(seed.map { SeededRandom(seed: $0) })
    }

    /// A fresh request id (a lower-case UUID).
    func requestId() -> String {
        random.withLock { random in
            guard var generator = random else { return UUID().uuidString.lowercased() }
            defer { random = generator }
            return generator.uuidString()
        }
    }

    /// 32 bytes for a new Ed25519 key, or `nil` to let the key generator use system randomness.
    func keySeed() -> Data? {
        random.withLock { random in
            guard var generator = random else { return nil }
            defer { random = generator }
            return Data(generator.bytes(32))
        }
    }
}
