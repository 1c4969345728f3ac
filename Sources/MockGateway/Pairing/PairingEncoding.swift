import GatewayProtocol

/// Secret comparison whose running time does not depend on where the inputs differ
/// (docs/protocol.md §5.4: tokens are compared in constant time).
enum ConstantTime {
    static func equals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        difference |= left.count == right.count ? 0 : 1
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}

extension SeededRandom {
    /// A fresh bearer token: 32 random bytes as unpadded base64url (43 characters).
    mutating func pairingToken() -> String {
        Base64URL.encode(bytes(32))
    }

    /// A fresh bearer token from the seeded sequence, or, when `system` is set, from the
    /// system's cryptographically secure generator (which the seed cannot predict).
    mutating func pairingToken(system: Bool) -> String {
        guard system else { return pairingToken() }
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
