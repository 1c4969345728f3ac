#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayProtocol

extension JSONValue {
    /// Parses the bytes of `buffer` in place (no copy of a large frame).
    /// - Throws: `DecodingError` when they are not JSON (or nest deeper than 512 levels).
    init(parsingBytes buffer: UnsafeBufferPointer<UInt8>) throws {
        guard let base = buffer.baseAddress, !buffer.isEmpty else {
            try self.init(parsing: Data())
            return
        }
        // The decoder reads the data during the call and keeps no reference to it.
        let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: buffer.count, deallocator: .none)
        try self.init(parsing: data)
    }
}

/// What a single pass over a message's bytes tells about it, without building a JSON value:
/// whether it is one complete JSON document, how deep it nests, how many values it holds, and
/// the top-level `type`, `id` and `method` when they can be read, also from truncated or
/// over-deep text.
///
/// The pass never recurses and never allocates per value, so it is safe on any input the
/// transport accepts (25 MiB after `hello-ok`): the Gateway uses it to answer frames the JSON
/// parser refused (`JSONValue(parsing:)` stops at 512 levels) and to refuse frames whose values
/// would take far more memory than their bytes before parsing them.
struct RawFrameInspection: Sendable, Hashable {
    /// The size of the message in bytes.
    var byteCount = 0
    /// The deepest nesting of arrays and objects seen (a top-level object is 1).
    var maxDepth = 0
    /// How many JSON values (scalars, arrays, objects) were seen.
    var valueCount = 0
    /// Whether the bytes are exactly one syntactically complete JSON document (surrounded by
    /// whitespace at most). Checked structurally: a truncated frame is `false`.
    var isComplete = false
    /// Whether the document is (or starts as) an object.
    var isObject = false
    /// The top-level `id` as sent: a string or a number (as JSON), when one could be read.
    var id: JSONValue?
    /// The top-level `type`, when it is a string that could be read.
    var type: String?
    /// The top-level `method`, when it is a string that could be read.
    var method: String?

    /// The longest top-level string that is captured (`id`, `type`, `method`).
    static let capturedStringLimit = 512

    /// Inspects `bytes`.
    init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let array = bytes as? [UInt8] ?? Array(bytes)
        self = array.withUnsafeBufferPointer { Self.scan($0) }
    }

    /// Inspects the bytes of `buffer` in place.
    init(buffer: UnsafeBufferPointer<UInt8>) {
        self = Self.scan(buffer)
    }

    private init() {}

    private enum Expect {
        /// A value (at the top, after `:` or `,` in an array, or first in an array).
        case value
        /// A key or `}` (first in an object).
        case keyOrClose
        /// A key (after `,` in an object).
        case key
        /// `:` after a key.
        case colon
        /// `,` or the closing bracket.
        case separator
        /// Only whitespace: the document ended.
        case end
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> RawFrameInspection {
        var result = RawFrameInspection()
        result.byteCount = bytes.count
        // One bit per level: 1 = object, 0 = array; levels deeper than 64 only count.
        var kinds: [Bool] = []
        kinds.reserveCapacity(64)
        var depth = 0
        var expect = Expect.value
        var broken = false
        var currentKey: [UInt8]?  // the key of the member being read at depth 1
        var index = 0
        let count = bytes.count

        func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

        /// After a complete value: what comes next.
        func valueDone() -> Expect { depth == 0 ? .end : .separator }

        while index < count, !broken {
            let byte = bytes[index]
            if isWhitespace(byte) {
                index += 1
                continue
            }
            switch expect {
            case .end:
                broken = true
            case .colon:
                if byte == UInt8(ascii: ":") { expect = .value; index += 1 } else { broken = true }
            case .separator:
                if byte == UInt8(ascii: ",") {
                    expect = (kinds.last ?? false) ? .key : .value
                    index += 1
                } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                    let isObject = kinds.last ?? false
                    guard (byte == UInt8(ascii: "}")) == isObject else { broken = true; break }
                    kinds.removeLast()
                    depth -= 1
                    if depth == 0 { currentKey = nil }
                    expect = valueDone()
                    index += 1
                } else {
                    broken = true
                }
            case .key, .keyOrClose:
                if byte == UInt8(ascii: "}"), expect == .keyOrClose {
                    // `{}`: an empty object closes here (a `}` right after `,` is an error).
                    kinds.removeLast()
                    depth -= 1
                    expect = valueDone()
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    let (end, closed) = stringEnd(bytes, from: index)
                    if depth == 1 {
                        currentKey = Array(bytes[(index + 1)..<min(end, index + 1 + capturedStringLimit)])
                    }
                    guard closed else { index = count; break }
                    index = end + 1
                    expect = .colon
                } else {
                    broken = true
                }
            case .value:
                result.valueCount += 1
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let isObject = byte == UInt8(ascii: "{")
                    if depth == 0 { result.isObject = isObject }
                    depth += 1
                    kinds.append(isObject)
                    result.maxDepth = max(result.maxDepth, depth)
                    index += 1
                    if isObject {
                        expect = .keyOrClose
                    } else {
                        // `[]`: an empty array closes at once.
                        var next = index
                        while next < count, isWhitespace(bytes[next]) { next += 1 }
                        if next < count, bytes[next] == UInt8(ascii: "]") {
                            kinds.removeLast()
                            depth -= 1
                            index = next + 1
                            expect = valueDone()
                        } else {
                            expect = .value
                        }
                    }
                case UInt8(ascii: "\""):
                    let (end, closed) = stringEnd(bytes, from: index)
                    if depth == 1, let key = currentKey {
                        result.capture(key: key, literal: UnsafeBufferPointer(rebasing: bytes[index..<min(end + 1, count)]),
                                       closed: closed)
                    }
                    guard closed else { index = count; break }
                    index = end + 1
                    expect = valueDone()
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    var end = index + 1
                    while end < count, isNumberByte(bytes[end]) { end += 1 }
                    if depth == 1, let key = currentKey, key == Array("id".utf8), end < count {
                        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
                        if let number = try? JSONValue(parsing: text), number.doubleValue != nil { result.id = number }
                    }
                    index = end
                    expect = valueDone()
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let word: [UInt8] = byte == UInt8(ascii: "t") ? Array("true".utf8)
                        : byte == UInt8(ascii: "f") ? Array("false".utf8) : Array("null".utf8)
                    guard index + word.count <= count, Array(bytes[index..<(index + word.count)]) == word else {
                        if index + word.count > count { index = count } else { broken = true }
                        break
                    }
                    index += word.count
                    expect = valueDone()
                default:
                    broken = true
                }
            }
        }
        result.isComplete = !broken && expect == .end && depth == 0
        return result
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
            || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
    }

    /// The index of the closing quote of the string literal starting at `start`, and whether
    /// there is one (`false`: the text ends inside the string; the index is then `count`).
    static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (Int, Bool) {
        guard let base = bytes.baseAddress else { return (bytes.count, false) }
        var index = start + 1
        while index < bytes.count {
            // The next quote, found with memchr: a long string costs one fast pass.
            guard let found = memchr(base + index, Int32(UInt8(ascii: "\"")), bytes.count - index) else { break }
            let quote = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            // Escaped when preceded by an odd number of backslashes.
            var backslashes = 0
            while quote - backslashes - 1 > start, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
            if backslashes % 2 == 0 { return (quote, true) }
            index = quote + 1
        }
        return (bytes.count, false)
    }

    private mutating func capture(key: [UInt8], literal: UnsafeBufferPointer<UInt8>, closed: Bool) {
        guard closed, literal.count <= Self.capturedStringLimit + 2 else { return }
        guard let value = try? JSONValue(parsing: String(decoding: literal, as: UTF8.self)), let text = value.stringValue else {
            return
        }
        switch String(decoding: key, as: UTF8.self) {
        case "id": id = value
        case "type": type = text
        case "method": method = text
        default: break
        }
    }
}
