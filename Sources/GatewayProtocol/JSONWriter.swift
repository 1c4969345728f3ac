import Foundation

/// Writes a `JSONValue` as compact JSON, as JavaScript's `JSON.stringify` writes the same value
/// (ECMA-262 §25.5.2), except for the order of object members:
///
/// - members sorted by the UTF-8 bytes of their keys (`JSON.stringify` writes them in the
///   object's own order, which a `JSONValue` does not keep; see docs/fidelity.md, "JSON");
/// - strings with `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`
///   (lower-case hex), a lone surrogate of an `.illFormedString` as `\udxxx` (lower-case hex),
///   everything else (slashes, DEL, U+2028, non-ASCII) as raw UTF-8;
/// - doubles as `JavaScriptNumber.text(_:)`, non-finite ones as `null`; integers in decimal (a
///   parsed `.int` is at most 2^53 in magnitude, where the two agree; one built in code beyond
///   that is written in full, the exact value rather than the double JavaScript would round it
///   to, so that seeds and counters in reports survive);
/// - containers nested deeper than `maximumWriteDepth` make the whole document fail (the
///   project's bound on recursion; `JSON.stringify` fails only when its stack runs out).
///
/// Checked byte for byte against Node.js's `JSON.stringify` by `JSONDifferentialTests`.
struct JSONWriter {
    /// The deepest nesting written (the top-level container is 1): what the parser accepts.
    static let maximumWriteDepth = JSONValue.maximumParseDepth

    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    /// Thrown when containers are nested too deep.
    struct TooDeep: Error {}

    mutating func write(_ value: JSONValue, depth: Int = 0) throws(TooDeep) {
        switch value {
        case .null: append("null")
        case .bool(let flag): flag ? append("true") : append("false")
        case .int(let integer): write(integer)
        case .double(let double): append(JavaScriptNumber.text(double))
        case .string(let string): write(string)
        case .illFormedString(let string): write(string.utf16)
        case .array(let items):
            guard depth < Self.maximumWriteDepth else { throw TooDeep() }
            bytes.append(UInt8(ascii: "["))
            var first = true
            for item in items {
                if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
                try write(item, depth: depth + 1)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            guard depth < Self.maximumWriteDepth else { throw TooDeep() }
            bytes.append(UInt8(ascii: "{"))
            if members.count == 1, let only = members.first {
                write(only.key)
                bytes.append(UInt8(ascii: ":"))
                try write(only.value, depth: depth + 1)
            } else if !members.isEmpty {
                try writeSorted(members, depth: depth)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Writes the members of an object (at least two) in the UTF-8 byte order of their keys.
    ///
    /// The pairs are copied out once (no hash lookup per key) and an array of plain integers is
    /// sorted: each key's first eight bytes as a big-endian number, and the pair's index. Most
    /// keys differ there; only equal prefixes compare the whole keys. Sorting the pairs
    /// themselves moved strings and `JSONValue`s (reference counts) on every swap, about 1.5 %
    /// of a conformance run (Benchmarks/README.md).
    private mutating func writeSorted(_ members: [String: JSONValue], depth: Int) throws(TooDeep) {
        let pairs = Array(members)
        var order: [(prefix: UInt64, index: Int)] = []
        order.reserveCapacity(pairs.count)
        for index in pairs.indices { order.append((Self.prefix(pairs[index].key), index)) }
        order.sort { lhs, rhs in
            lhs.prefix != rhs.prefix ? lhs.prefix < rhs.prefix : Self.utf8Precedes(pairs[lhs.index].key, pairs[rhs.index].key)
        }
        var first = true
        for (_, index) in order {
            if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
            write(pairs[index].key)
            bytes.append(UInt8(ascii: ":"))
            try write(pairs[index].value, depth: depth + 1)
        }
    }

    /// The first eight UTF-8 bytes of `key` as a big-endian number, zero-padded: comparing two
    /// prefixes orders keys as ``utf8Precedes(_:_:)`` does whenever the prefixes differ (equal
    /// prefixes, e.g. `"ab"` and `"ab\u{0}"`, need the whole keys).
    static func prefix(_ key: String) -> UInt64 {
        var prefix: UInt64 = 0
        var count = 0
        for byte in key.utf8 {
            prefix = prefix << 8 | UInt64(byte)
            count += 1
            if count == 8 { return prefix }
        }
        return count == 0 ? 0 : prefix << (8 * (8 - UInt64(count)))
    }

    /// UTF-8 byte order (which is also Unicode scalar order).
    static func utf8Precedes(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                let common = min(left.count, right.count)
                if common > 0, let l = left.baseAddress, let r = right.baseAddress {
                    let order = memcmp(l, r, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
    }

    private mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func write(_ integer: Int64) {
        if integer >= 0 && integer < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(integer))
            return
        }
        if integer < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits from the end; the magnitude is a UInt64 so that Int64.min works.
        var magnitude = integer.magnitude
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, enough for 20 digits
        withUnsafeMutableBytes(of: &scratch) { digits in
            var position = digits.count
            repeat {
                position -= 1
                digits[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: digits[position...]))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func write(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        appendEscaped(string)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes UTF-16 code units as `JSON.stringify` writes a string: well-formed runs as
    /// `write(_:)` writes a `String`, each lone surrogate as `\udxxx`.
    private mutating func write(_ units: [UInt16]) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        var index = 0
        while index < units.count {
            if let length = JSONValue.IllFormedString.scalarLength(at: index, in: units) {
                index += length
            } else {
                let unit = units[index]
                if index > runStart { appendEscaped(String(decoding: units[runStart ..< index], as: UTF16.self)) }
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
                for shift in stride(from: 12, through: 0, by: -4) {
                    bytes.append(Self.hexDigits[Int(unit >> UInt16(shift) & 0x0F)])
                }
                index += 1
                runStart = index
            }
        }
        if units.count > runStart { appendEscaped(String(decoding: units[runStart...], as: UTF16.self)) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes the contents of a string, escaped, without its quotes.
    private mutating func appendEscaped(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            let count = utf8.count
            while index < count {
                let byte = utf8[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                if index > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart ..< index])) }
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(UInt8(ascii: "u"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                }
                index += 1
                runStart = index
            }
            if count > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart ..< count])) }
        }
    }
}

extension JSONValue {
    /// The serialized bytes of `encoded()`: `null` for a document nested too deep to write.
    func serializedBytes() -> [UInt8] {
        var writer = JSONWriter()
        do {
            try writer.write(self)
            return writer.bytes
        } catch {
            // Deeper than any parsed document: `encoded()` writes `null` then.
            return Array("null".utf8)
        }
    }

    /// Whether containers are nested more than `limit` deep (a scalar has depth 0, `[]` 1). Stops
    /// descending at the limit.
    func nestingExceeds(_ limit: Int) -> Bool {
        switch self {
        case .array(let items):
            if limit <= 0 { return true }
            for item in items where item.nestingExceeds(limit - 1) { return true }
            return false
        case .object(let members):
            if limit <= 0 { return true }
            for member in members.values where member.nestingExceeds(limit - 1) { return true }
            return false
        default:
            return false
        }
    }
}
