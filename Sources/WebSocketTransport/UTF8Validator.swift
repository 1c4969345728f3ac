/// An incremental UTF-8 validator (RFC 3629) that fails as soon as a byte makes the input
/// invalid, even in the middle of a code point split across fragments or reads.
struct UTF8Validator: Sendable, Hashable {
    /// Continuation bytes still expected for the current code point.
    private var pending = 0
    /// The allowed range of the next continuation byte (narrower after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Whether the input so far ended on a code point boundary.
    var isAtBoundary: Bool { pending == 0 }

    /// Feeds more bytes. Returns `false` once the input can no longer be valid UTF-8.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            if pending == 0, let base = bytes.baseAddress {
                // ASCII fast path, 8 bytes at a time.
                while index + 8 <= count,
                      base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
                if index >= count { break }
            }
            guard step(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// Feeds more bytes from an array. Returns `false` once the input can no longer be valid.
    mutating func consume(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { consume($0) }
    }

    private mutating func step(_ byte: UInt8) -> Bool {
        if pending > 0 {
            guard byte >= lower && byte <= upper else { return false }
            pending -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0x00...0x7F:
            return true
        case 0xC2...0xDF:
            pending = 1
        case 0xE0:
            pending = 2; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF:
            pending = 2
        case 0xED:
            pending = 2; upper = 0x9F  // excludes UTF-16 surrogates
        case 0xF0:
            pending = 3; lower = 0x90
        case 0xF1...0xF3:
            pending = 3
        case 0xF4:
            pending = 3; upper = 0x8F  // nothing above U+10FFFF
        default:
            return false  // stray continuation byte, overlong lead (C0, C1) or F5-FF
        }
        return true
    }

    /// Whether `bytes` is complete, valid UTF-8.
    static func isValid(_ bytes: [UInt8]) -> Bool {
        var validator = UTF8Validator()
        return validator.consume(bytes) && validator.isAtBoundary
    }
}
