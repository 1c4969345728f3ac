import Foundation

/// A small, seedable random source (SplitMix64) for every choice a run makes: the fake
/// Gateway's request ids, nonces and tokens, a client's jitter, the order in which a simulation
/// runs the tasks that are ready at the same time.
///
/// The same seed yields the same sequence, so a failing conformance run can be replayed with
/// `--seed`.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A random RFC 4122 version 4 UUID string in lower case, as the Gateway sends for
    /// `requestId`, nonces and invoke ids.
    public mutating func uuidString() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in stride(from: 0, to: 16, by: 8) {
            let word = next()
            for offset in 0..<8 { bytes[index + offset] = UInt8(truncatingIfNeeded: word >> (8 * offset)) }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        // Written digit by digit: `String(format:)` per byte was a measurable share of a whole
        // in-process conformance run (Benchmarks/README.md, "Where the CPU goes").
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            let word = next()
            for offset in 0..<8 where result.count < count { result.append(UInt8(truncatingIfNeeded: word >> (8 * offset))) }
        }
        return result
    }
}
