import Foundation
import Testing
import Simulation

struct SeededRandomTests {
    /// The UUID text of two 64-bit words, written the slow, obvious way.
    private static func reference(_ first: UInt64, _ second: UInt64) -> String {
        var bytes: [UInt8] = []
        for word in [first, second] {
            for offset in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: word >> (8 * offset))) }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex.dropFirst(range.lowerBound).prefix(range.count))
        }
        return groups.joined(separator: "-")
    }

    @Test func uuidsAreVersionFourLowerCaseAndFollowTheSequence() {
        for seed in [0, 1, 5, 0xFFFF_FFFF_FFFF_FFFF] as [UInt64] {
            var words = SeededRandom(seed: seed)
            var uuids = SeededRandom(seed: seed)
            for _ in 0..<200 {
                let expected = Self.reference(words.next(), words.next())
                let uuid = uuids.uuidString()
                #expect(uuid == expected)
                #expect(UUID(uuidString: uuid)?.uuidString.lowercased() == uuid)
                let characters = Array(uuid)
                #expect(characters[14] == "4")
                #expect("89ab".contains(characters[19]))
            }
        }
    }
}
