import Testing
@testable import WebSocketTransport

/// Masking keys come from a pool of secure random bytes refilled 1 KiB at a time: every byte is
/// handed out once, so keys keep varying across refills, and any size is served.
struct WebSocketRandomTests {
    @Test func maskingKeysVaryAcrossManyRefills() {
        // 2,000 keys use up the pool about eight times.
        let keys = (0..<2_000).map { _ in WebSocketRandom.bytes(4) }
        #expect(keys.allSatisfy { $0.count == 4 })
        // 2,000 random 32-bit values collide with a probability below 0.1 %; the same bytes
        // handed out twice (a pool that does not advance or refill) would repeat at once.
        #expect(Set(keys).count >= 1_998)
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 != $1 })
    }

    @Test func everySizeIsServed() {
        #expect(WebSocketRandom.bytes(0).isEmpty)
        #expect(WebSocketRandom.bytes(16).count == 16)
        let large = WebSocketRandom.bytes(5_000)
        #expect(large.count == 5_000)
        #expect(Set(large).count > 200, "5,000 random bytes take most of the 256 values")
    }
}
