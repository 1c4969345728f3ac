import Testing
@testable import WebSocketTransport

struct UTF8ValidatorTests {
    @Test(arguments: [
        "", "hello", "héllo wörld", "日本語", "emoji 🎉🚀", String(repeating: "a", count: 100) + "é",
        "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
    ])
    func acceptsValidText(_ text: String) {
        #expect(UTF8Validator.isValid(Array(text.utf8)))
    }

    @Test(arguments: [
        [0x80] as [UInt8],                 // stray continuation byte
        [0xC0, 0x80],                      // overlong NUL
        [0xC1, 0xBF],                      // overlong
        [0xE0, 0x80, 0x80],                // overlong 3-byte
        [0xED, 0xA0, 0x80],                // UTF-16 surrogate U+D800
        [0xF0, 0x80, 0x80, 0x80],          // overlong 4-byte
        [0xF4, 0x90, 0x80, 0x80],          // above U+10FFFF
        [0xF5, 0x80, 0x80, 0x80],          // invalid lead byte
        [0xFF],
        [0xCE, 0xBA, 0xE1, 0xBD],          // truncated at the end
        [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xE1],  // truncated after the ASCII fast path
    ])
    func rejectsInvalidOrTruncatedText(_ bytes: [UInt8]) {
        #expect(!UTF8Validator.isValid(bytes))
    }

    @Test func failsFastInsideACodePointSplitAcrossChunks() {
        var validator = UTF8Validator()
        let result1 = validator.consume([0x61, 0xF4])
        #expect(result1)
        #expect(!validator.isAtBoundary)
        // 0x90 after F4 can never be valid: rejected immediately, before the code point ends.
        let result2 = validator.consume([0x90])
        #expect(!result2)
    }

    @Test func acceptsEveryCodePointSplitAtEveryByte() {
        let bytes = Array("aé€🎉z".utf8)
        for cut in 0...bytes.count {
            var validator = UTF8Validator()
            let result3 = validator.consume(Array(bytes[..<cut]))
            #expect(result3)
            let result4 = validator.consume(Array(bytes[cut...]))
            #expect(result4)
            #expect(validator.isAtBoundary)
        }
    }
}
